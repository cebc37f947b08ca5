/** Whether bubblewrap runs here, asked once per shepherd: a sandboxed start never runs unsandboxed instead. */
import type { Writable } from "node:stream";
import { execa } from "execa";
import { ShepherdError } from "../domain/errors.ts";
import { seccompProgram } from "./seccomp.ts";

export const INSTALL_HINT =
  "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ also an AppArmor profile for bwrap)";

export interface BwrapCheck {
  ok: boolean;
  /** bubblewrap's path when found. */
  path?: string;
  /** What is missing, when not ok. */
  problem?: string;
}

/**
 * Runs `bwrap` with the namespaces a sheep gets and its seccomp filter, around `true`: a kernel that
 * cannot load the filter refuses a sandboxed start here, not in the pane.
 */
export async function checkBwrap(bwrap = "bwrap", env: NodeJS.ProcessEnv = process.env, program: Buffer = seccompProgram()): Promise<BwrapCheck> {
  const where = await execa("sh", ["-c", 'command -v "$1"', "sh", bwrap], { env, reject: false, timeout: 5000 });
  const path = String(where.stdout).trim();
  if (where.exitCode !== 0 || !path) return { ok: false, problem: `bubblewrap (${bwrap}) is not installed` };
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-net", "--die-with-parent", "--seccomp", "3", "true"];
  const child = execa(path, args, { env, reject: false, timeout: 10_000, stdio: ["ignore", "pipe", "pipe", "pipe"] });
  // bubblewrap reads the program to its end before it goes on; one it never reads must not fail this shepherd.
  const fd3 = child.stdio[3] as unknown as Writable;
  fd3.on("error", () => {});
  fd3.end(program);
  const run = await child;
  if (run.exitCode !== 0) {
    const why = String(run.stderr).trim().split("\n")[0]?.slice(0, 300) || `exit ${run.exitCode}`;
    return {
      ok: false,
      path,
      problem: `bubblewrap at ${path} cannot make a sandbox here (${why}): user namespaces are likely not allowed, or seccomp filters`,
    };
  }
  return { ok: true, path };
}

/** One check per shepherd while it passes; a failed one is asked again next time (the person may have installed it meanwhile). */
export function bwrapProbe(check: () => Promise<BwrapCheck> = () => checkBwrap()): () => Promise<string> {
  let passed: Promise<string> | undefined;
  return () => {
    passed ??= check().then((c) => {
      if (c.ok && c.path) return c.path;
      passed = undefined;
      throw new ShepherdError(
        "sandbox_unavailable",
        `cannot start a sandboxed sheep: ${c.problem}. To fix: ${INSTALL_HINT}. It does not run unsandboxed instead.`,
      );
    });
    return passed;
  };
}
