import { ShepherdError } from "../domain/errors.ts";
import type { AgentDefinition } from "../ports/types.ts";
import type { LaunchSpec } from "./messages.ts";
import type { SheepLayout } from "./layout.ts";

/** The tool extensions/sheep.ts gives every sheep (named here so the launcher's tool list keeps it). */
export const MESSAGE_TOOL = "shepherd_message";

export interface SpecInput {
  layout: SheepLayout;
  agentId: string;
  definition: AgentDefinition;
  cwd: string;
  model?: string;
  piCommand: readonly string[];
  /** Absolute path of extensions/sheep.ts. */
  sheepExtension: string;
  agentDir: string;
  /** The shepherd's environment, from which provider settings are carried over explicitly. */
  env: NodeJS.ProcessEnv;
  depth: number;
  extraArgs?: readonly string[];
  /** More names to carry from env: those the person named for a host's sheep (`forwardEnv`). */
  carry?: readonly string[];
  hasSystemPrompt: boolean;
  /** A resumed sheep's session: an earlier sheep's file instead of its own. */
  sessionPath?: string;
}

/**
 * Variables a sheep needs to reach the same models as its shepherd. A pane does not inherit the
 * shepherd's environment (it gets the multiplexer server's), and a variable on a command line
 * would show in every process list, so they travel in the private spec file instead.
 */
const CARRIED =
  /^(PI_(?!SHEPHERD_)\w+|PATH|LANG|LC_\w+|\w+_API_KEY|\w+_BASE_URL|ANTHROPIC_\w+|OPENAI_\w+|GEMINI_\w+|GOOGLE_\w+|AWS_\w+|AZURE_\w+|VERTEX_\w+|MISTRAL_\w+|GROQ_\w+|XAI_\w+|OPENROUTER_\w+|DEEPSEEK_\w+|CEREBRAS_\w+|COPILOT_\w+|GITHUB_TOKEN|GH_TOKEN|HTTPS?_PROXY|NO_PROXY|https?_proxy|no_proxy|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE)$/;

/** An argument that starts with "-" would be read by pi as an option: refuse, never pass it on. */
function plainArg(kind: string, value: string): string {
  if (value.startsWith("-") || value.includes("\0") || value.trim() === "") {
    throw new ShepherdError("invalid_params", `${kind} "${value}" is not valid (it must not be empty or start with "-").`);
  }
  return value;
}

export function buildLaunchSpec(input: SpecInput): LaunchSpec {
  const { layout, definition } = input;
  const args: string[] = ["--session", input.sessionPath ?? layout.session, "-e", input.sheepExtension];
  const model = input.model ?? definition.model;
  if (model) args.push("--model", plainArg("model", model));
  if (definition.thinking) args.push("--thinking", plainArg("thinking", definition.thinking));
  if (definition.tools && definition.tools.length > 0) {
    for (const t of definition.tools) {
      if (!/^[\w.:-]+$/.test(t) || t.startsWith("-")) throw new ShepherdError("invalid_params", `tool name "${t}" is not valid.`);
    }
    // A tool list replaces pi's whole selection: the sheep's own line to its shepherd stays in it.
    const tools = definition.tools.includes(MESSAGE_TOOL) ? definition.tools : [...definition.tools, MESSAGE_TOOL];
    args.push("--tools", tools.join(","));
  }
  if (input.hasSystemPrompt) args.push("--append-system-prompt", layout.systemPrompt);
  if (input.extraArgs) args.push(...input.extraArgs);

  const env: Record<string, string> = {};
  const named = new Set(input.carry ?? []);
  for (const [k, v] of Object.entries(input.env)) if (v !== undefined && (CARRIED.test(k) || (named.has(k) && !k.startsWith("PI_SHEPHERD_")))) env[k] = v;
  env.PI_CODING_AGENT_DIR = input.agentDir;
  env.PI_SHEPHERD_SHEEP_DIR = layout.dir;
  env.PI_SHEPHERD_AGENT_ID = input.agentId;
  env.PI_SHEPHERD_DEPTH = String(input.depth);
  for (const k of ["PI_SHEPHERD_RUNTIME", "PI_SHEPHERD_TMUX_SOCKET", "PI_SHEPHERD_HERDR_BIN"]) {
    const v = input.env[k];
    if (v !== undefined) env[k] = v;
  }
  return { argv: [...input.piCommand, ...args], env, cwd: input.cwd };
}
