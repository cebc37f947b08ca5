/**
 * Each configured host: its key known here, ssh reaching it without a prompt, and there Node
 * (>= the floor of the pi it runs), pi, the multiplexer its runtime needs, and the remote state
 * dir private. One ssh connection per host, its own (the doctor runs without a shepherd), running
 * a fixed script; nothing is written there.
 */
import { shellQuote } from "../runtimes/shell-line.ts";
import { atLeast } from "../launch/pi-package.ts";
import { hostKeyPolicy, probeHost, type ProbeResult } from "../remote/link/probe.ts";
import { INSTALL_HINT } from "../sandbox/probe.ts";
import { DEFAULT_SANDBOX, type SandboxSettings } from "../sandbox/settings.ts";
import { usernsProblem } from "./sandbox.ts";
import { remoteLine } from "../remote/link/quote.ts";
import { sshFix } from "../remote/link/reasons.ts";
import type { HostSettings } from "../settings.ts";
import { plain } from "./config.ts";
import { fail, pass, warn, type Check } from "./types.ts";
import { SUPPORTED_PI } from "./versions.ts";

/** pi 1.6's floor: the remote pi runs on this Node or newer. */
export const REMOTE_NODE_FLOOR = "22.19.0";

/**
 * A command for the person to paste: plain words as they are; anything else quoted twice, once for
 * their shell and once for the remote shell ssh hands the line to.
 */
export function sshCommand(dest: string, argv: readonly string[]): string {
  if (argv.every((a) => /^[A-Za-z0-9/._,:=+-]+$/.test(a))) return `ssh ${dest} ${argv.join(" ")}`;
  return plain(`ssh ${dest} ${shellQuote(remoteLine(argv))}`);
}

export async function hostChecks(
  hosts: Readonly<Record<string, HostSettings>>,
  env: NodeJS.ProcessEnv,
  settingsPath: string,
  sandbox: SandboxSettings = DEFAULT_SANDBOX,
): Promise<Check[]> {
  const all = await Promise.all(Object.entries(hosts).map(([name, h]) => oneHost(name, h, env, settingsPath, sandbox)));
  return all.flat();
}

async function oneHost(name: string, h: HostSettings, env: NodeJS.ProcessEnv, settingsPath: string, sandbox: SandboxSettings): Promise<Check[]> {
  const label = (what: string) => `host ${name}: ${what}`;
  const dest = plain(h.ssh);
  const target = {
    name,
    ssh: h.ssh,
    ...(h.sshOptions ? { sshOptions: h.sshOptions } : {}),
    ...(h.node ? { node: h.node } : {}),
    ...(h.agentDir ? { agentDir: h.agentDir } : {}),
    ...(h.piCommand ? { piCommand: h.piCommand } : {}),
  };
  const setting = (key: string) => `set "hosts"."${name}"."${key}" in ${settingsPath}`;
  const checks: Check[] = [];
  const [key, probe] = await Promise.all([hostKeyPolicy(target, env), probeHost(target, env)]);
  if (key.known) checks.push(pass(label("host key"), `${plain(key.name)} is known`));
  else if (probe.reached)
    checks.push(pass(label("host key"), `${plain(key.name)} is in no known hosts file, but ssh accepted it (a KnownHostsCommand, a CA, or the policy below)`));
  else
    checks.push(
      fail(
        label("host key"),
        `no key for ${plain(key.name)} in ${key.files.map(plain).join(", ") || "any known hosts file"}`,
        `run \`ssh ${dest}\` once by hand to check the host key's fingerprint and accept it (pi-shepherd never accepts a host key by itself)`,
      ),
    );
  if (/^(false|no|accept-new)$/.test(key.strict)) {
    checks.push(
      warn(
        label("host key policy"),
        `StrictHostKeyChecking is ${key.strict} for ${dest}: a new or changed host key is accepted unchecked`,
        "set StrictHostKeyChecking yes (or ask) for this host in ~/.ssh/config",
      ),
    );
  }
  if (!probe.reached) {
    checks.push(fail(label("reachable"), `ssh ${dest}: ${probe.reason}`, sshFix(probe.reason, dest)));
    return checks;
  }
  checks.push(pass(label("reachable"), `ssh ${dest} answers without a prompt`));

  const node = probe.node;
  if (!node)
    checks.push(
      fail(
        label("node"),
        `${plain(h.node ?? "node")} does not run there`,
        `install Node ${REMOTE_NODE_FLOOR} or newer there, or ${setting("node")} to its path`,
      ),
    );
  else if (!atLeast(node, REMOTE_NODE_FLOOR))
    checks.push(
      fail(
        label("node"),
        `Node ${node} there; pi 1.6 needs ${REMOTE_NODE_FLOOR} or newer`,
        `install Node ${REMOTE_NODE_FLOOR} or newer there, or ${setting("node")} to one`,
      ),
    );
  else checks.push(pass(label("node"), `Node ${node}`));

  const pi = probe.pi;
  const piShown = plain(JSON.stringify(h.piCommand ?? ["pi"]));
  const version = pi ? /(\d+\.\d+\.\d+)/.exec(pi)?.[1] : undefined;
  if (!version)
    checks.push(
      fail(
        label("pi"),
        `${piShown} --version did not run there${pi ? ` (${pi})` : ""}`,
        `install pi there (npm install -g @earendil-works/pi-coding-agent), or ${setting("piCommand")}`,
      ),
    );
  else if (!SUPPORTED_PI.some((s) => version.startsWith(s.line)))
    checks.push(
      warn(label("pi"), `pi ${version} there is not a version pi-shepherd is tested on`, `use pi ${SUPPORTED_PI.map((s) => `${s.line}x`).join(" or ")} there`),
    );
  else checks.push(pass(label("pi"), `pi ${version}`));

  const runtime = h.runtime ?? "auto";
  const tmux = probe.tmux && /^tmux /.test(probe.tmux) ? probe.tmux : undefined;
  const herdr = probe.herdr && /\d+\.\d+/.test(probe.herdr) ? probe.herdr : undefined;
  const found = [tmux, herdr ? `herdr ${herdr.replace(/^herdr\s*/, "")}` : undefined].filter(Boolean).join(", ");
  const needs = runtime === "tmux" ? !tmux : runtime === "herdr" ? !herdr : !tmux && !herdr;
  if (needs) {
    const fix =
      runtime === "herdr" ? "install herdr there (https://herdr.dev)" : `install tmux there (apt-get install tmux)${runtime === "auto" ? ", or herdr" : ""}`;
    checks.push(
      fail(label("multiplexer"), `runtime ${runtime} needs ${runtime === "auto" ? "tmux or herdr" : runtime} there; found ${found || "neither"}`, fix),
    );
  } else checks.push(pass(label("multiplexer"), `${found} (runtime ${runtime})`));

  const dir = plain(probe.stateDir);
  if (probe.stateMode === undefined) checks.push(pass(label("state dir"), `${dir} (not created yet; made 0700 on first use)`));
  else if (probe.uid !== undefined && probe.stateUid !== undefined && probe.stateUid !== probe.uid)
    checks.push(
      fail(
        label("state dir"),
        `${dir} belongs to uid ${probe.stateUid} there, not the ssh user (${probe.uid})`,
        sshCommand(dest, ["chown", "-R", String(probe.uid), probe.stateDir]),
      ),
    );
  else if ((probe.stateMode & 0o077) !== 0)
    checks.push(
      fail(label("state dir"), `${dir} is mode ${probe.stateMode.toString(8)} there; others may look in`, sshCommand(dest, ["chmod", "700", probe.stateDir])),
    );
  else checks.push(pass(label("state dir"), `${dir} (private)`));
  checks.push(...hostSandboxChecks(probe, label, sandbox));
  return checks;
}

/** Longest egress socket path there: <state dir>/egress/<agent id>/egress.sock, under sun_path's 108 bytes. */
const SOCKET_PATH_MAX = 107;
const EGRESS_SOCKET_TAIL = "/egress/a_0123456789/egress.sock";

/**
 * A sandboxed sheep there needs bubblewrap there, the user namespaces it makes, and the agent's egress
 * proxy there (its socket path short enough). A failure where the user's default is "on" (no sheep
 * there can start), else a warning (only sandboxed starts there fail), as for this machine.
 */
export function hostSandboxChecks(probe: Extract<ProbeResult, { reached: true }>, label: (what: string) => string, sandbox: SandboxSettings): Check[] {
  const bad = sandbox.default === "on" ? fail : warn;
  const ns = probe.userns ? usernsProblem(probe.userns) : undefined;
  const checks: Check[] = [];
  if (!probe.bwrap) checks.push(bad(label("bubblewrap"), "bubblewrap (bwrap) is not installed there: a sandboxed sheep there cannot start", INSTALL_HINT));
  else if (probe.bwrapRun !== "ok")
    checks.push(
      bad(label("bubblewrap"), `bubblewrap at ${plain(probe.bwrap)} cannot make a sandbox there (${plain(probe.bwrapRun ?? "no answer")})`, INSTALL_HINT),
    );
  else checks.push(pass(label("bubblewrap"), `bubblewrap at ${plain(probe.bwrap)} makes a sandbox there (default ${sandbox.default ?? "off"})`));
  if (ns) checks.push(bad(label("user namespaces"), `${ns} there`, INSTALL_HINT));
  else
    checks.push(
      pass(
        label("user namespaces"),
        probe.bwrapRun === "ok" ? "unprivileged user namespaces are allowed there" : "no kernel switch there forbids unprivileged user namespaces",
      ),
    );
  const socket = `${probe.stateDir}${EGRESS_SOCKET_TAIL}`;
  if (Buffer.byteLength(socket) > SOCKET_PATH_MAX)
    checks.push(
      bad(
        label("egress proxy"),
        `a sandboxed sheep's proxy socket there (${plain(socket)}) is over ${SOCKET_PATH_MAX} bytes, too long for a Unix socket`,
        `set "agentDir" of this host to a shorter path`,
      ),
    );
  else checks.push(pass(label("egress proxy"), `served there by pi-shepherd's agent, sockets under ${plain(probe.stateDir)}/egress`));
  return checks;
}
