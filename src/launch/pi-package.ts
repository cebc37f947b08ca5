import { readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";

export interface PiPackage {
  name: string;
  version: string;
  /** Its `engines.node`, e.g. ">=22.19.0". */
  node?: string;
  root: string;
}

/** The pi package a cli script belongs to: the nearest package.json above it named *pi-coding-agent. */
export function piPackageOf(script: string): PiPackage | undefined {
  let dir: string;
  try {
    dir = dirname(realpathSync(script));
  } catch {
    return undefined;
  }
  for (let i = 0; i < 8; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown; version?: unknown; engines?: { node?: unknown } };
      if (typeof pkg.name === "string" && /(^|\/)pi-coding-agent$/.test(pkg.name) && typeof pkg.version === "string") {
        return { name: pkg.name, version: pkg.version, ...(typeof pkg.engines?.node === "string" ? { node: pkg.engines.node } : {}), root: dir };
      }
    } catch {
      // no package.json here, or not one we can read: look further up
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

/** "v22.19.1" or "22.19.1" as numbers; undefined when it is no version. */
export function versionParts(v: string): [number, number, number] | undefined {
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

export function atLeast(v: string, floor: string): boolean {
  const a = versionParts(v);
  const b = versionParts(floor);
  if (!a || !b) return false;
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! > b[i]!;
  return true;
}
