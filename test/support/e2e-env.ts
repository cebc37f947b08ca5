/**
 * The pieces every end-to-end file sets up the same way: an agent directory on the scripted
 * model with agent definitions, and the environment a real pi shepherd runs with.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { writeAgentDir } from "./agent-dir.ts";
import { repoRoot } from "./rpc-shepherd.ts";

export const ECHO_AGENT = "---\nname: echo\ndescription: answers as scripted\n---\nYou answer exactly as scripted.\n";

export interface AgentDirOptions {
  /** Files under <agentDir>/agents, by file name. */
  agents?: Record<string, string>;
  /** <agentDir>/pi-shepherd/settings.json */
  shepherdSettings?: Record<string, unknown>;
  /** More OpenAI-compatible providers, by name, each serving the model id "scripted-model". */
  providers?: Record<string, string>;
  /** More keys of pi's own <agentDir>/settings.json (e.g. the user's extensions). */
  piSettings?: Record<string, unknown>;
}

export async function makeAgentDir(dir: string, baseUrl: string, o: AgentDirOptions = {}): Promise<string> {
  const agentDir = await writeAgentDir(baseUrl, dir);
  if (o.piSettings) {
    const path = join(agentDir, "settings.json");
    const settings = JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
    await writeFile(path, JSON.stringify({ ...settings, ...o.piSettings }), { mode: 0o600 });
  }
  await mkdir(join(agentDir, "agents"), { recursive: true, mode: 0o700 });
  for (const [name, text] of Object.entries(o.agents ?? { "echo.md": ECHO_AGENT })) {
    await writeFile(join(agentDir, "agents", name), text, { mode: 0o600 });
  }
  if (o.shepherdSettings) {
    await mkdir(join(agentDir, "pi-shepherd"), { recursive: true, mode: 0o700 });
    await writeFile(join(agentDir, "pi-shepherd", "settings.json"), JSON.stringify(o.shepherdSettings), { mode: 0o600 });
  }
  if (o.providers) {
    const path = join(agentDir, "models.json");
    const models = JSON.parse(await readFile(path, "utf8")) as { providers: Record<string, Record<string, unknown>> };
    const template = models.providers.scripted!;
    for (const [name, url] of Object.entries(o.providers)) models.providers[name] = { ...template, baseUrl: url };
    await writeFile(path, JSON.stringify(models, null, 2), { mode: 0o600 });
  }
  return agentDir;
}

/** The shepherd sees only the multiplexer the test gives it, never the developer's own. */
export function shepherdEnv(agentDir: string, runtimeEnv: NodeJS.ProcessEnv, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const outer = Object.fromEntries(Object.entries(base).filter(([k]) => !/^(TMUX|TMUX_PANE|HERDR_\w+|PI_SHEPHERD_\w+)$/.test(k)));
  const env: NodeJS.ProcessEnv = { ...outer, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", ...runtimeEnv };
  env.PATH = `${join(repoRoot, "node_modules", ".bin")}:${env.PATH ?? ""}`;
  return env;
}
