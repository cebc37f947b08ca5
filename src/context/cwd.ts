import { statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { ShepherdError } from "../domain/errors.ts";

/** A cwd from the model, relative to the shepherd's own; it must be an existing directory. */
export function resolveCwd(base: string, wanted: string | undefined): string {
  if (wanted === undefined) return base;
  const dir = isAbsolute(wanted) ? wanted : resolve(base, wanted);
  let ok = false;
  try {
    ok = statSync(dir).isDirectory();
  } catch {
    ok = false;
  }
  if (!ok) throw new ShepherdError("invalid_params", `cwd "${wanted}" is not an existing directory.`);
  return dir;
}
