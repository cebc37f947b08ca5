/**
 * The panel's own private files under `<agentDir>/pi-shepherd/panel/` (0700): its auth (auth-file.ts)
 * and the register of this user's shepherds (registry.ts). Each is read only when it is a regular
 * file of this user that nobody else may read or write, so a file another user or a sheep's
 * process put there with looser modes is refused, not believed.
 */
import { chmodSync, lstatSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { stateDir } from "../protocol/layout.ts";

/** The panel's directory under the agent dir. */
export function panelDir(agentDir: string): string {
  return join(stateDir(agentDir), "panel");
}

/** Made 0700 (and made so again when it exists with looser modes). */
export function ensurePanelDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** Why a file is not one of the panel's private ones, or undefined when it is; `missing` when it is not there. */
export function privateFileProblem(path: string, kind: "file" | "dir" = "file"): string | undefined {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return "missing";
  }
  if (kind === "file" ? !st.isFile() : !st.isDirectory()) return `${path} is not a ${kind === "file" ? "regular file" : "directory"}`;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `${path} belongs to uid ${st.uid}, not to this user`;
  if ((st.mode & 0o077) !== 0)
    return `${path} may be read or written by others (mode ${(st.mode & 0o777).toString(8)}, not ${kind === "file" ? "600" : "700"})`;
  return undefined;
}
