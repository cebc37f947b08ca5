/** Whether bubblewrap runs here, asked once per shepherd: a sandboxed start never runs unsandboxed instead. */
import { execa } from "execa";
import { ShepherdError } from "../domain/errors.ts";

export const INSTALL_HINT =
  "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ also an AppArmor profile for bwrap)";

export interface BwrapCheck {
  ok: boolean;
  /** bubblewrap's path when found. */
  path?: string;
  /** What is missing, when not ok. */
  problem?: string;
}

/** Runs `bwrap` with the namespaces a sheep gets, around `true`. */
export async function checkBwrap(bwrap = "bwrap", env: NodeJS.ProcessEnv = process.env): Promise<BwrapCheck> {
  const where = await execa("sh", ["-c", 'command -v "$1"', "sh", bwrap], { env, reject: false, timeout: 5000 });
  const path = String(where.stdout).trim();
  if (where.exitCode !== 0 || !path) return { ok: false, problem: `bubblewrap (${bwrap}) is not installed` };
  const run = await execa(path, ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-net", "--die-with-parent", "true"], {
    env,
    reject: false,
    timeout: 10_000,
    stdin: "ignore",
  });
  if (run.exitCode !== 0) {
    const why = String(run.stderr).trim().split("\n")[0]?.slice(0, 300) || `exit ${run.exitCode}`;
    return { ok: false, path, problem: `bubblewrap at ${path} cannot make a sandbox here (${why}): user namespaces are likely not allowed` };
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
