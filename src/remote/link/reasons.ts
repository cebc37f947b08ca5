/**
 * ssh's own reason for a failure, in one line, and the one fix for it. ssh's stderr may carry text
 * from the other side (a banner, the server's identification string): shown as one plain line,
 * bounded.
 */
import { ShepherdError, shorten } from "../../domain/errors.ts";
import { oneLine } from "../../domain/labels.ts";

interface Known {
  test: RegExp;
  fix(dest: string): string;
}

const KNOWN: Known[] = [
  {
    test: /REMOTE HOST IDENTIFICATION HAS CHANGED|Host key for .* has changed/i,
    fix: (d) =>
      `the host key of ${d} changed: find out why before anything else; if the change is expected, remove the old key (ssh-keygen -R <host>) and run \`ssh ${d}\` once by hand to check and accept the new one`,
  },
  {
    test: /Host key verification failed|No \S+ host key is known|host key is not known/i,
    fix: (d) => `run \`ssh ${d}\` once by hand to check the host key's fingerprint and accept it (pi-shepherd never accepts a host key by itself)`,
  },
  {
    test: /Permission denied \(/i,
    fix: (d) =>
      `the key ssh offers is not accepted there: load it into ssh-agent (ssh-add) or name it with IdentityFile in ~/.ssh/config, and add its .pub to ~/.ssh/authorized_keys there; \`ssh ${d} true\` must work without a prompt`,
  },
  {
    test: /Could not resolve hostname|Name or service not known|nodename nor servname/i,
    fix: () => `check the host name, or the Host alias in ~/.ssh/config (and DNS)`,
  },
  {
    test: /Connection refused/i,
    fix: () => `is sshd running there, on that port? (Port in ~/.ssh/config, or -p in the host's sshOptions)`,
  },
  {
    test: /timed out|No route to host|Network is unreachable|not responding|Timeout/i,
    fix: () => `check the network path to the host (link, VPN, firewall) and the port; a slow link may need a longer ConnectTimeout in the host's sshOptions`,
  },
  {
    test: /Connection (closed|reset)|kex_exchange_identification|Broken pipe/i,
    fix: () => `the connection was closed: check sshd there (its log, MaxStartups, MaxSessions, AllowUsers)`,
  },
];

/**
 * Any reason a link is down for, as status lines and errors carry it: one plain line of at most
 * 1000 characters (an agent's init error may be many lines of its own; a deploy's refusal names a
 * long path before its fix, so it gets room for both).
 */
export const MAX_DOWN_REASON = 1000;
export function downReason(text: string): string {
  return shorten(oneLine(String(text)), MAX_DOWN_REASON);
}

/** The line of ssh's stderr that says why, as one plain line. */
export function sshReason(stderr: string): string {
  const lines = String(stderr)
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !/^Warning: Permanently added/.test(l));
  const known = lines.find((l) => KNOWN.some((k) => k.test.test(l)));
  const line = known ?? lines[lines.length - 1] ?? "ssh ended without saying why";
  return shorten(oneLine(line.replace(/^ssh: /, "")), 240);
}

/**
 * A reason no retry can change by itself (a host key to check, a key not accepted, a name that does not
 * resolve): the person must act, so nothing tries again in the background.
 */
export function lasting(reason: string): boolean {
  return /REMOTE HOST IDENTIFICATION HAS CHANGED|Host key for .* has changed|Host key verification failed|No \S+ host key is known|host key is not known|Permission denied \(|Could not resolve hostname|Name or service not known|nodename nor servname/i.test(
    reason,
  );
}

/** The fix for a reason sshReason gave. */
export function sshFix(reason: string, dest: string): string {
  const k = KNOWN.find((x) => x.test.test(reason));
  return k ? k.fix(dest) : `check that \`ssh ${dest} true\` works from this machine without a prompt (action doctor checks each host)`;
}

/** `[host_unreachable] host "<name>" unreachable since <ISO time>: <reason>. <fix>`. */
export function unreachable(name: string, dest: string, since: Date, reason: string): ShepherdError {
  return new ShepherdError(
    "host_unreachable",
    `host "${name}" unreachable since ${since.toISOString()}: ${reason.replace(/[.\s]+$/, "")}. ${sshFix(reason, dest)}.`,
  );
}
