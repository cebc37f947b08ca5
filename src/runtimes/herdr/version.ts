/**
 * The herdr version floor. 0.7.5 is the first release whose CLI matches what this adapter
 * sends (short ids, `--no-focus`, the agent facade, the protocol guard, `status server --json`);
 * 0.8.0 adds the structured `server_not_running` error. 0.8.2 and 0.9.x change nothing this
 * adapter sends, so the floor stays: keeping 0.7.5 costs only the `recent` read fallback, which
 * 0.8.x needs as well (herdr-09.md §2, #3444).
 */
import { ShepherdError } from "../../domain/errors.ts";

export const MIN_HERDR_VERSION = "0.7.5";
export const RECOMMENDED_HERDR_VERSION = "0.9.4";
/** From here `recent` reads are never empty while output fits the viewport (#3444). */
export const RECENT_READS_FIXED = "0.9.0";

export interface HerdrVersion {
  major: number;
  minor: number;
  patch: number;
  /** As printed, e.g. "0.8.0-preview.123". */
  text: string;
}

/** Reads `herdr <version>` as printed by `herdr --version` (unconfirmed for 0.9.x, so a `v` and a suffix are let through). */
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

/**
 * The protocol a release speaks (herdr-contract.md §1.5, herdr-09.md §1), for messages only: the
 * server's own is read from `status server --json`. 0.9.2, 0.9.4 and 0.9.5 are unconfirmed; the
 * safe reading is 22, as 0.9.0, 0.9.1 and 0.9.3 report. Later lines are unknown.
 */
export function protocolOf(v: HerdrVersion): number | undefined {
  if (v.major !== 0 || v.minor > 9) return undefined;
  if (meetsFloor(v, "0.9.0")) return 22;
  if (meetsFloor(v, "0.8.1")) return 20;
  if (meetsFloor(v, "0.8.0")) return 19;
  if (meetsFloor(v, "0.7.5")) return 17;
  return undefined;
}

/** "herdr 0.9.4 (protocol 22)", the protocol left out where unknown. */
export function describeVersion(version: string | undefined, protocol: number | undefined): string {
  return `herdr ${version ?? "(version unknown)"}${protocol !== undefined ? ` (protocol ${protocol})` : ""}`;
}
