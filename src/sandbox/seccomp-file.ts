/**
 * The seccomp program as a file the pane's shell opens for bubblewrap's `--seccomp` fd: in the
 * shepherd's state dir, which every sandbox hides (no sheep can change the filter of the next), 0600
 * in a 0700 directory, named by its content so that shepherds of different versions never share one.
 */
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { seccompProgram } from "./seccomp.ts";

export function seccompFile(stateDir: string): string {
  const program = seccompProgram();
  const dir = join(stateDir, "sandbox");
  const path = join(dir, `seccomp-${createHash("sha256").update(program).digest("hex").slice(0, 16)}.bpf`);
  if (sameBytes(path, program)) return path;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  // Written aside and renamed: a pane starting meanwhile never reads half a program.
  const tmp = join(dir, `.${randomBytes(6).toString("hex")}.tmp`);
  try {
    writeFileSync(tmp, program, { mode: 0o600, flag: "wx" });
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  return path;
}

function sameBytes(path: string, want: Buffer): boolean {
  try {
    // Bounded: a file of another size is no program of ours, and is not read.
    return statSync(path).size === want.length && readFileSync(path).equals(want);
  } catch {
    return false;
  }
}
