/**
 * The herdr version floor. 0.7.5 is the first release whose CLI matches what this adapter
 * sends (short ids, `--no-focus`, the agent facade, the protocol guard); 0.8.0 adds the
 * structured `server_not_running` error and is recommended.
 */
import { ShepherdError } from "../../core/errors.ts";

export const MIN_HERDR_VERSION = "0.7.5";
export const RECOMMENDED_HERDR_VERSION = "0.8.0";

export interface HerdrVersion {
  major: number;
  minor: number;
  patch: number;
  /** As printed, e.g. "0.8.0-preview.123". */
  text: string;
}

/** Reads `herdr <version>` as printed by `herdr --version`. */
export function parseHerdrVersion(stdout: string): HerdrVersion | undefined {
  const m = /\bherdr\s+v?((\d+)\.(\d+)\.(\d+)\S*)/.exec(stdout);
  if (!m) return undefined;
  return { text: m[1]!, major: Number(m[2]), minor: Number(m[3]), patch: Number(m[4]) };
}

/**
 * Previews (`0.8.0-preview.<id>`) count as their release: they are built from the same
 * CLI, and refusing them would lock out people who run herdr's preview channel.
 */
export function meetsFloor(v: HerdrVersion, floor: string = MIN_HERDR_VERSION): boolean {
  const [fMajor, fMinor, fPatch] = floor.split(".").map(Number) as [number, number, number];
  if (v.major !== fMajor) return v.major > fMajor;
  if (v.minor !== fMinor) return v.minor > fMinor;
  return v.patch >= fPatch;
}

/** Throws `[runtime_unavailable]` unless `stdout` names a herdr that this adapter can drive. */
export function checkHerdrVersion(stdout: string, bin: string): HerdrVersion {
  const v = parseHerdrVersion(stdout);
  if (!v) {
    throw new ShepherdError(
      "runtime_unavailable",
      `could not read the herdr version from \`${bin} --version\` (it printed: ${JSON.stringify(stdout.trim().slice(0, 120))}); pi-shepherd needs herdr ${MIN_HERDR_VERSION} or newer. Set PI_SHEPHERD_HERDR_BIN to the herdr executable, or PI_SHEPHERD_RUNTIME=tmux.`,
    );
  }
  if (!meetsFloor(v)) {
    throw new ShepherdError(
      "runtime_unavailable",
      `herdr ${v.text} found (${bin}), but pi-shepherd needs herdr ${MIN_HERDR_VERSION} or newer (${RECOMMENDED_HERDR_VERSION} recommended). Update herdr (https://herdr.dev/install.sh, brew or mise), or set PI_SHEPHERD_RUNTIME=tmux.`,
    );
  }
  return v;
}
