import { stat } from "node:fs/promises";
import { isAbsolute } from "node:path";
import { execa } from "execa";
import { stateDir } from "../../protocol/layout.ts";
import type { InitParams, SysInfo } from "../rpc/call.ts";

/** The first line a program prints for its version, or undefined when it does not run here. */
async function versionOf(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const [cmd, ...args] = argv;
  if (!cmd) return undefined;
  const r = await execa(cmd, args, { reject: false, stdin: "ignore", timeout: 10_000, env });
  if (r.exitCode !== 0) return undefined;
  const line = `${String(r.stdout)}\n${String(r.stderr)}`.split("\n").find((l) => l.trim() !== "");
  return line?.trim().slice(0, 200);
}

/**
 * What the doctor asks of a host: node, pi, tmux and herdr versions, and whether the state dir is
 * private. Before init the parameter may name the agentDir and piCommand to look at.
 */
export async function sysInfo(param: unknown, init: InitParams | undefined): Promise<SysInfo> {
  const o = typeof param === "object" && param !== null ? (param as Record<string, unknown>) : {};
  const agentDir = typeof o.agentDir === "string" && isAbsolute(o.agentDir) ? o.agentDir : init?.agentDir;
  const piCommand = Array.isArray(o.piCommand) && o.piCommand.every((s) => typeof s === "string") ? (o.piCommand as string[]) : init?.piCommand;
  const state = init?.stateDir ?? (agentDir ? stateDir(agentDir) : undefined);
  const env = process.env;
  const [pi, tmux, herdr, mode] = await Promise.all([
    piCommand ? versionOf([...piCommand, "--version"], env) : undefined,
    versionOf(["tmux", "-V"], env),
    versionOf([env.PI_SHEPHERD_HERDR_BIN || "herdr", "--version"], env),
    state
      ? stat(state).then(
          (s) => s.mode & 0o777,
          () => null,
        )
      : null,
  ]);
  return { node: process.version, ...(pi ? { pi } : {}), ...(tmux ? { tmux } : {}), ...(herdr ? { herdr } : {}), stateDirMode: mode };
}
