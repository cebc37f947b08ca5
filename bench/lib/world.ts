import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentDefinition } from "../../src/ports/types.ts";
import { writeAgentDir } from "../../test/support/agent-dir.ts";
import { repoRoot } from "../../test/support/rpc-shepherd.ts";

/** A private place for one runtime's run: agent dir on the scripted model, a work dir, a clean env. */
export interface World {
  dir: string;
  agentDir: string;
  work: string;
  definition: AgentDefinition;
  /** The shepherd's environment before the runtime adds its own variables. */
  env: NodeJS.ProcessEnv;
  cleanup(): Promise<void>;
}

/** The scripted model's id as writeAgentDir configures it. */
const MODEL = "scripted-model";
const TOOLS = ["read", "bash"] as const;

// The developer's own multiplexer and shepherd settings must not leak into a measurement.
const DROPPED = /^(TMUX|TMUX_PANE|HERDR_\w+|PI_SHEPHERD_\w+|FAKE_HERDR_\w+)$/;

export async function makeWorld(baseUrl: string, name: string): Promise<World> {
  const dir = await mkdtemp(join(tmpdir(), `pi-shepherd-bench-${name}-`));
  // pi's default settings, as a person has them: its startup header is part of what a sheep boots.
  // pi-shepherd installed as a person installs it (`pi install <dir>`): the shepherd, every sheep
  // and every bare pi of this agent dir load it, as they do on a person's machine.
  const agentDir = await writeAgentDir(baseUrl, join(dir, "agent"), { quietStartup: false, packages: [repoRoot] });
  const body = "You answer exactly as scripted.";
  await mkdir(join(agentDir, "agents"), { recursive: true });
  const defPath = join(agentDir, "agents", "echo.md");
  // Tools and model named as a person's agent file names them: both become pi arguments of every
  // sheep (and of the example subagent's pi), so a bench without them would boot a lighter pi.
  const front = ["name: echo", "description: answers as scripted", `tools: ${TOOLS.join(", ")}`, `model: ${MODEL}`];
  await writeFile(defPath, `---\n${front.join("\n")}\n---\n${body}\n`);
  const work = join(dir, "work");
  await mkdir(work);
  const outer = Object.fromEntries(Object.entries(process.env).filter(([k]) => !DROPPED.test(k)));
  const env: NodeJS.ProcessEnv = {
    ...outer,
    PATH: `${join(repoRoot, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
    PI_CODING_AGENT_DIR: agentDir,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
  };
  return {
    dir,
    agentDir,
    work,
    definition: { name: "echo", description: "answers as scripted", source: "user", path: defPath, tools: [...TOOLS], model: MODEL, systemPrompt: body },
    env,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
