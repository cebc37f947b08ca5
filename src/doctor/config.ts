/** What the person configured: PI_SHEPHERD_* variables, settings files, agent files, the state dir. */
import { lstat } from "node:fs/promises";
import { join } from "node:path";
import type { Discovery } from "../definitions/discover.ts";
import { UNTRUSTED } from "../definitions/discover.ts";
import { oneLine } from "../domain/labels.ts";
import { shellQuote } from "../runtimes/shell-line.ts";
import type { LoadedSettings } from "../settings.ts";
import { fail, pass, warn, type Check } from "./types.ts";

const KNOWN_ENV = [
  "PI_SHEPHERD_RUNTIME",
  "PI_SHEPHERD_TMUX_SOCKET",
  "PI_SHEPHERD_HERDR_BIN",
  "PI_SHEPHERD_DEPTH",
  "PI_SHEPHERD_SHEEP_DIR",
  "PI_SHEPHERD_AGENT_ID",
  // Set inside a sandbox (src/sandbox/bwrap.ts)..
  "PI_SHEPHERD_HOST_PID",
  "PI_SHEPHERD_EGRESS_SOCKET",
];

/** Values are shown on the person's terminal: one line, no escapes. */
export const plain = oneLine;

export function environmentCheck(env: NodeJS.ProcessEnv): Check[] {
  const names = Object.keys(env)
    .filter((k) => k.startsWith("PI_SHEPHERD_") || k === "PI_CODING_AGENT_DIR")
    .sort();
  const unknown = names.filter((k) => k.startsWith("PI_SHEPHERD_") && !KNOWN_ENV.includes(k));
  const checks: Check[] = unknown.map((k) =>
    warn("environment", `${k} is set but pi-shepherd does not know it`, `unset ${k} (known: ${KNOWN_ENV.slice(0, 3).join(", ")})`),
  );
  const shown = names.filter((k) => !unknown.includes(k)).map((k) => `${k}=${plain(env[k] ?? "")}`);
  checks.unshift(pass("environment", shown.length ? shown.join(", ") : "no PI_SHEPHERD_* variable is set"));
  return checks;
}

export function settingsChecks(loaded: LoadedSettings): Check[] {
  const { problems, paths, files } = loaded;
  if (problems.length === 0) return [pass("settings", files.length ? `read ${files.join(", ")}; no problems` : "no settings files; the defaults apply")];
  return problems.map((p) => {
    const file = p.startsWith(`${paths.project}:`) ? paths.project : paths.user;
    let fix = `edit ${file}`;
    if (p.includes("can only be set in the user's settings")) fix = `remove it from ${file}; set it in ${paths.user} if you want it`;
    else if (p.includes("pi-shepherd does not trust this project")) fix = "run /shepherd trust if its settings should apply (it shows them and asks you)";
    return warn("settings", plain(p), fix);
  });
}

export function agentChecks(found: Discovery, scope: string): Check[] {
  if (found.skipped.length === 0) return [pass("agents", `${found.agents.length} definitions in scope ${scope}, no file skipped`)];
  return found.skipped.map((s) =>
    warn(
      "agents",
      `skipped ${plain(s.path)}: ${plain(s.reason)}`,
      s.reason === UNTRUSTED ? "run /shepherd trust if its agents should be used (it shows them and asks you)" : `fix or remove ${plain(s.path)}`,
    ),
  );
}

/** The state dir and what in it must stay private: 0700 and the user's, files 0600. */
export async function stateDirChecks(dir: string): Promise<Check[]> {
  const uid = process.getuid?.();
  let st: Awaited<ReturnType<typeof lstat>>;
  try {
    st = await lstat(dir);
  } catch {
    return [pass("state dir", `${dir} (not created yet; made 0700 on first use)`)];
  }
  if (!st.isDirectory()) return [fail("state dir", `${dir} is not a directory`, `move ${dir} away; pi-shepherd makes it again`)];
  if (uid !== undefined && st.uid !== uid)
    return [fail("state dir", `${dir} belongs to uid ${st.uid}, not you (${uid})`, `chown -R ${uid} ${shellQuote(dir)}`)];
  const checks: Check[] = [];
  if ((st.mode & 0o077) !== 0)
    checks.push(warn("state dir", `${dir} is mode ${(st.mode & 0o777).toString(8)}; others may look in`, `chmod 700 ${shellQuote(dir)}`));
  for (const name of ["state.json", "audit.ndjson", "audit.ndjson.1"]) {
    const file = join(dir, name);
    const f = await lstat(file).catch(() => undefined);
    if (f && (f.mode & 0o077) !== 0) checks.push(warn("state dir", `${file} is mode ${(f.mode & 0o777).toString(8)}`, `chmod 600 ${shellQuote(file)}`));
  }
  return checks.length ? checks : [pass("state dir", `${dir} (private, yours)`)];
}
