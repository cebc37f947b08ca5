/**
 * The environment a sandboxed sheep's pi gets: what any program needs, pi's own settings, and the
 * key of its own model's provider; never the multiplexer's variables, tokens of other services or
 * other providers' keys (unless the user named them for this host: `forwardEnv`).
 */

/**
 * Variables pi reads a provider's key from, by provider: as pi-ai 1.6's env-api-keys.js names them
 * (it does not export them). A provider not here (a custom one of models.json) gets the variable its
 * `apiKey` names, when that is a variable's name (see providerKeyNames).
 */
const PROVIDER_KEYS: Record<string, string[]> = {
  anthropic: ["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"],
  openai: ["OPENAI_API_KEY"],
  "openai-codex": ["OPENAI_API_KEY"],
  azure: ["AZURE_OPENAI_API_KEY"],
  "azure-openai-responses": ["AZURE_OPENAI_API_KEY"],
  google: ["GEMINI_API_KEY"],
  "google-vertex": ["GOOGLE_CLOUD_API_KEY"],
  "github-copilot": ["COPILOT_GITHUB_TOKEN"],
  groq: ["GROQ_API_KEY"],
  cerebras: ["CEREBRAS_API_KEY"],
  xai: ["XAI_API_KEY"],
  openrouter: ["OPENROUTER_API_KEY"],
  "vercel-ai-gateway": ["AI_GATEWAY_API_KEY"],
  zai: ["ZAI_API_KEY"],
  mistral: ["MISTRAL_API_KEY"],
  deepseek: ["DEEPSEEK_API_KEY"],
  nvidia: ["NVIDIA_API_KEY"],
  minimax: ["MINIMAX_API_KEY"],
  moonshotai: ["MOONSHOT_API_KEY"],
  huggingface: ["HF_TOKEN"],
  fireworks: ["FIREWORKS_API_KEY"],
  together: ["TOGETHER_API_KEY"],
  "kimi-coding": ["KIMI_API_KEY"],
};

/** The variables a provider's key may be in: pi's own names, or the one a models.json `apiKey` names. */
export function providerKeyNames(provider: string | undefined, modelsApiKey?: string): string[] {
  const names = provider ? [...(PROVIDER_KEYS[provider] ?? [])] : [];
  if (modelsApiKey && /^[A-Z_][A-Z0-9_]*$/.test(modelsApiKey)) names.push(modelsApiKey);
  return names;
}

/** Carried to every sandboxed sheep when the shepherd has them: nothing secret. */
const PLAIN = /^(PATH|LANG|LC_\w+|TZ|PI_(?!SHEPHERD_)\w+|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR)$/;

/**
 * The launch spec's env for a sandboxed sheep: `carried` is what an unsandboxed sheep would get
 * (launch-spec.ts); of its secrets only the provider's key and the names the user forwards stay.
 * The proxy variables go too: the egress proxy sets its own once it runs.
 */
export function sandboxedEnv(carried: Readonly<Record<string, string>>, keep: readonly string[]): Record<string, string> {
  const wanted = new Set(keep);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(carried)) {
    if (/^PI_SHEPHERD_(TMUX_SOCKET|HERDR_BIN|RUNTIME)$/.test(k)) continue;
    if (PLAIN.test(k) || wanted.has(k) || (k.startsWith("PI_SHEPHERD_") && !/^PI_SHEPHERD_(TMUX|HERDR)/.test(k))) out[k] = v;
  }
  return out;
}
