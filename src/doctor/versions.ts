/** Node and pi: the versions the shepherd runs on, and whether the pi that runs sheep answers. */
import { execa } from "execa";
import { atLeast, type PiPackage } from "../launch/pi-package.ts";
import { fail, pass, warn, type Check } from "./types.ts";

/** The pi releases this package is tested against (README, "Supported versions"). */
export const SUPPORTED_PI = [
  { name: "@earendil-works/pi-coding-agent", line: "1.6.", node: "22.19.0" },
  { name: "@mariozechner/pi-coding-agent", line: "0.73.", node: "20.6.0" },
] as const;
const SUPPORTED_TEXT = SUPPORTED_PI.map((p) => `${p.name} ${p.line}x (Node >= ${p.node})`).join(" or ");

/** The Node running this shepherd, against what its pi asks for and what this package needs. */
export function nodeCheck(nodeVersion: string, pi: PiPackage | undefined): Check {
  const floor = pi?.node ? /(\d+\.\d+\.\d+)/.exec(pi.node)?.[1] : undefined;
  if (!atLeast(nodeVersion, "20.6.0")) {
    return fail("node", `Node ${nodeVersion}; pi-shepherd needs Node 20.6 or newer`, "install Node 22.19 or newer (https://nodejs.org) and run pi with it");
  }
  if (floor && !atLeast(nodeVersion, floor)) {
    return fail("node", `Node ${nodeVersion}, but ${pi!.name} ${pi!.version} needs ${pi!.node}`, `run pi with Node ${floor} or newer`);
  }
  return pass("node", `Node ${nodeVersion}${pi?.node ? ` (${pi.name} ${pi.version} needs ${pi.node})` : ""}`);
}

export function piCheck(pi: PiPackage | undefined): Check {
  if (!pi) {
    return warn("pi", "cannot tell which pi package runs this shepherd", `run pi from its npm package, or set "piCommand" in your shepherd settings`);
  }
  const supported = SUPPORTED_PI.some((s) => s.name === pi.name && pi.version.startsWith(s.line));
  if (!supported) return warn("pi", `${pi.name} ${pi.version} is not a version pi-shepherd is tested on`, `use ${SUPPORTED_TEXT}`);
  return pass("pi", `${pi.name} ${pi.version} (${pi.root})`);
}

/** The argv that runs pi for sheep must run: `<argv> --version`, briefly. */
export async function piCommandCheck(argv: readonly string[] | undefined, env: NodeJS.ProcessEnv, settingsPath: string): Promise<Check> {
  const fix = `set "piCommand" in ${settingsPath} to an argv that runs pi, e.g. ["pi"]`;
  if (!argv || argv.length === 0) return fail("pi command", "no command runs pi for sheep (the shepherd's own pi could not be found)", fix);
  const shown = JSON.stringify(argv);
  const r = await execa(argv[0]!, [...argv.slice(1), "--version"], { reject: false, env, extendEnv: false, stdin: "ignore", timeout: 20_000 });
  const out = `${String(r.stdout ?? "")}${String(r.stderr ?? "")}`.trim();
  if (r.exitCode !== 0) {
    const why = r.exitCode === undefined ? String(r.message ?? "").split("\n")[0] : `exit ${r.exitCode}${out ? `: ${out.split("\n")[0]}` : ""}`;
    return fail("pi command", `${shown} --version did not run (${why})`, fix);
  }
  return pass("pi command", `${shown} --version prints ${out.split("\n")[0]?.slice(0, 80) || "(nothing)"}`);
}
