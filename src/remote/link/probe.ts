/**
 * What the doctor asks a host, over one ssh connection of its own (the doctor runs without a
 * shepherd and changes nothing there): a fixed sh script, the host's settings as its arguments,
 * one `key=value` line per answer. And what this machine knows of the host's key.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { shorten } from "../../domain/errors.ts";
import { oneLine } from "../../domain/labels.ts";
import { remoteLine } from "./quote.ts";
import { sshReason } from "./reasons.ts";
import { defaultsFor, effectiveConfig, type SshTarget, sshArgv } from "./ssh-options.ts";

/** argv after "sh -c SCRIPT sh": node, agentDir ("" = ~/.pi/agent), then pi's argv. */
export const PROBE_SCRIPT = `node="$1"; agentdir="$2"; shift 2
[ -n "$agentdir" ] || agentdir="$HOME/.pi/agent"
case "$agentdir" in "~/"*) agentdir="$HOME/\${agentdir#"~/"}";; esac
first() { sed -n '/[^[:space:]]/{p;q;}'; }
printf 'node=%s\\n' "$("$node" --version 2>/dev/null | first)"
printf 'pi=%s\\n' "$("$@" --version 2>&1 </dev/null | first)"
printf 'tmux=%s\\n' "$(tmux -V 2>/dev/null | first)"
printf 'herdr=%s\\n' "$("\${PI_SHEPHERD_HERDR_BIN:-herdr}" --version 2>/dev/null | first)"
d="$agentdir/pi-shepherd"
printf 'statedir=%s\\n' "$d"
if [ -d "$d" ]; then printf 'statemode=%s\\n' "$(stat -c '%a %u' "$d" 2>/dev/null || stat -f '%Lp %u' "$d" 2>/dev/null)"; fi
printf 'uid=%s\\n' "$(id -u)"
b="$(command -v bwrap 2>/dev/null)"
printf 'bwrap=%s\\n' "$b"
if [ -n "$b" ]; then
  if e="$("$b" --ro-bind / / --dev /dev --proc /proc --unshare-pid --unshare-net --die-with-parent true 2>&1 </dev/null)"; then echo bwraprun=ok
  else e="$(printf '%s\\n' "$e" | first)"; printf 'bwraprun=%s\\n' "\${e:-failed}"; fi
fi
k() { cat "$1" 2>/dev/null || echo -; }
printf 'userns=%s %s %s\\n' "$(k /proc/sys/kernel/unprivileged_userns_clone)" "$(k /proc/sys/user/max_user_namespaces)" "$(k /proc/sys/kernel/apparmor_restrict_unprivileged_userns)"
echo probe=done
`;

export interface ProbeTarget extends SshTarget {
  node?: string;
  agentDir?: string;
  piCommand?: readonly string[];
}

export type ProbeResult =
  | { reached: false; reason: string }
  | {
      reached: true;
      node?: string;
      pi?: string;
      tmux?: string;
      herdr?: string;
      stateDir: string;
      stateMode?: number;
      stateUid?: number;
      uid?: number;
      /** bubblewrap's path there, when its PATH has one. */
      bwrap?: string;
      /** "ok" when bwrap made a sandbox there (the namespaces a sheep gets, around `true`), else its first line of complaint. */
      bwrapRun?: string;
      /** The kernel's user-namespace switches there, as sandbox.ts reads them here ("-" where absent). */
      userns?: { clone: string; max: string; apparmor: string };
    };

export async function probeHost(t: ProbeTarget, env?: NodeJS.ProcessEnv): Promise<ProbeResult> {
  const defaults = defaultsFor(await effectiveConfig(t, env));
  const line = remoteLine(["sh", "-c", PROBE_SCRIPT, "sh", t.node ?? "node", t.agentDir ?? "", ...(t.piCommand ?? ["pi"])]);
  const r = await execa("ssh", sshArgv(t, undefined, defaults, { kind: "direct", command: line }), {
    reject: false,
    stdin: "ignore",
    timeout: 90_000,
    ...(env ? { env, extendEnv: false } : {}),
  });
  const out = new Map<string, string>();
  for (const l of String(r.stdout).split("\n")) {
    const eq = l.indexOf("=");
    // What the host says is shown on a terminal: one plain line, bounded.
    if (eq > 0) out.set(l.slice(0, eq), shorten(oneLine(l.slice(eq + 1).trim()), 200));
  }
  if (out.get("probe") !== "done") return { reached: false, reason: r.timedOut ? "ssh did not answer within 90 s" : sshReason(String(r.stderr)) };
  const [mode, owner] = (out.get("statemode") ?? "").split(" ");
  const some = (k: string) => (out.get(k) ? { [k]: out.get(k)! } : {});
  return {
    reached: true,
    ...some("node"),
    ...some("pi"),
    ...some("tmux"),
    ...some("herdr"),
    stateDir: out.get("statedir") ?? "",
    ...(mode && /^[0-7]+$/.test(mode) ? { stateMode: Number.parseInt(mode, 8) } : {}),
    ...(owner && /^\d+$/.test(owner) ? { stateUid: Number(owner) } : {}),
    ...(/^\d+$/.test(out.get("uid") ?? "") ? { uid: Number(out.get("uid")) } : {}),
    ...some("bwrap"),
    ...(out.get("bwraprun") ? { bwrapRun: out.get("bwraprun")! } : {}),
    ...usernsOf(out.get("userns")),
  };
}

function usernsOf(line: string | undefined): { userns?: { clone: string; max: string; apparmor: string } } {
  const [clone, max, apparmor] = (line ?? "").split(" ");
  return clone && max && apparmor ? { userns: { clone, max, apparmor } } : {};
}

export interface HostKeyPolicy {
  /** Whether a key for the host is in one of the known hosts files ssh would read. */
  known: boolean;
  /** StrictHostKeyChecking as ssh would use it (true = yes, ask, false = no, accept-new). */
  strict: string;
  files: string[];
  /** How ssh names the host in known_hosts: host, or [host]:port. */
  name: string;
}

/** What this machine's known hosts files hold for the host, read locally (`ssh -G`, `ssh-keygen -F`). */
export async function hostKeyPolicy(t: SshTarget, env?: NodeJS.ProcessEnv): Promise<HostKeyPolicy> {
  const cfg = await effectiveConfig(t, env);
  const host = cfg.get("hostkeyalias") ?? cfg.get("hostname") ?? t.ssh.replace(/^.*@/, "");
  const port = cfg.get("port") ?? "22";
  const name = port === "22" ? host : `[${host}]:${port}`;
  const home = env?.HOME ?? homedir();
  const files = [
    ...(cfg.get("userknownhostsfile") ?? "~/.ssh/known_hosts ~/.ssh/known_hosts2").split(" "),
    ...(cfg.get("globalknownhostsfile") ?? "").split(" "),
  ]
    .filter((f) => f !== "" && f !== "/dev/null" && f !== "none")
    .map((f) => (f.startsWith("~/") ? join(home, f.slice(2)) : f));
  let known = false;
  for (const f of files) {
    const r = await execa("ssh-keygen", ["-F", name, "-f", f], { reject: false, stdin: "ignore", timeout: 10_000 });
    if (r.exitCode === 0 && String(r.stdout).trim() !== "") known = true;
  }
  return { known, strict: cfg.get("stricthostkeychecking") ?? "ask", files, name };
}
