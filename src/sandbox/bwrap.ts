/**
 * A sandbox policy as bubblewrap's arguments. Mounts apply in order, later ones over earlier: the
 * root read-only, a private /tmp, what stays readable under it and the code caches, the writable roots, the hidden
 * places, the sheep's own places inside them, and last what stays read-only inside writable roots.
 */
import { EGRESS_DIR_INSIDE, EGRESS_SOCKET_INSIDE, JITI_SEED_INSIDE, type SandboxPolicy } from "./policy.ts";

export interface BwrapInput {
  bwrap: string;
  policy: SandboxPolicy;
  /** Plain, non-secret variables set inside (HOME, USER, SHELL…); the launcher sets the rest from its private spec. */
  env: Readonly<Record<string, string>>;
  /** What runs inside: the launcher with its spec. */
  argv: readonly string[];
}

/** Taken from the pane, since only the multiplexer knows them: what the terminal is. Nothing else of the pane's env. */
export const PANE_VARS = ["TERM", "COLORTERM"] as const;

export function bwrapArgv(input: BwrapInput): string[] {
  const { policy } = input;
  // bwrap clears the environment where --clearenv stands: first, so every --setenv after it holds.
  // Nothing of the pane's environment (TMUX, TMUX_PANE, HERDR_*, the tmux server's own tokens) goes in.
  const a: string[] = [input.bwrap, "--clearenv", "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"];
  a.push("--unshare-net");
  // Run by root, bubblewrap keeps every capability: the sheep could unmount what hides the secrets or
  // remount the root writable. Dropped, root inside is only a uid (and no new privileges: no setuid).
  a.push("--cap-drop", "ALL");
  a.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp");
  for (const p of policy.readable) a.push("--ro-bind", p, p);
  for (const c of policy.caches) a.push("--ro-bind", c.from, c.to);
  for (const p of policy.writable) a.push("--bind", p, p);
  for (const p of policy.scratch) a.push("--tmpfs", p);
  for (const p of policy.agentFiles) a.push("--ro-bind", p, p);
  for (const h of policy.hidden) {
    if (h.kind === "dir") a.push("--tmpfs", h.path);
    else a.push("--ro-bind", "/dev/null", h.path);
  }
  for (const p of policy.reopened) a.push("--bind", p, p);
  for (const p of policy.unhidden) a.push("--ro-bind", p, p);
  // Read-only once the sheep's own places are in them (bubblewrap makes their mount points first); not their submounts.
  for (const h of policy.hidden) if (h.kind === "dir") a.push("--remount-ro", h.path);
  for (const r of policy.readOnly) {
    if (r.kind === "missing") a.push("--tmpfs", r.path, "--remount-ro", r.path);
    else a.push("--ro-bind", r.path, r.path);
  }
  if (policy.egressDir !== undefined) a.push("--bind", policy.egressDir, EGRESS_DIR_INSIDE);
  for (const [k, v] of Object.entries(input.env)) a.push("--setenv", k, v);
  if (policy.egressDir !== undefined) a.push("--setenv", "PI_SHEPHERD_EGRESS_SOCKET", EGRESS_SOCKET_INSIDE);
  if (policy.caches.some((c) => c.to === JITI_SEED_INSIDE)) a.push("--setenv", "PI_SHEPHERD_JITI_SEED", JITI_SEED_INSIDE);
  a.push("--", ...input.argv);
  return a;
}

/** The fd bubblewrap reads the seccomp program from: the pane's shell opens the program's file there for it. */
export const SECCOMP_FD = 3;

/**
 * The pane's command: a fixed shell text (no path or name of ours in it) that hands the pane's
 * terminal type to bwrap and opens the seccomp program (src/sandbox/seccomp-file.ts) on its fd, then
 * bwrap's own argv as positional parameters, never parsed by a shell. A program that cannot be
 * opened fails the shell's exec: the sheep never runs without its filter.
 */
export function paneArgv(bwrap: readonly string[], seccompFile: string): string[] {
  if (bwrap[1] !== "--clearenv") throw new Error("paneArgv takes bwrapArgv's argv");
  const pass = PANE_VARS.map((v) => `--setenv ${v} "\${${v}:-${v === "TERM" ? "xterm-256color" : ""}}"`).join(" ");
  // $$ is this shell's pid, which exec makes bubblewrap's: the pid the sheep reports (its own is in a namespace of its own).
  const script = `f="$1"; b="$2"; shift 3; exec "$b" --clearenv ${pass} --setenv PI_SHEPHERD_HOST_PID "$$" --seccomp ${SECCOMP_FD} "$@" ${SECCOMP_FD}<"$f"`;
  return ["/bin/sh", "-c", script, "sh", seccompFile, ...bwrap];
}
