/**
 * What a sandboxed sheep may touch, from the user's settings and the facts of this one sheep: pure,
 * so the unit tests read every rule (bwrap.ts turns it into bubblewrap's arguments, in this order).
 */
import { dirname, isAbsolute, join, normalize } from "node:path";
import type { SandboxSettings } from "./settings.ts";

export type PathKind = "dir" | "file";

export interface SandboxFacts {
  home: string;
  /** The sheep's working directory: its worktree, or the checkout it was started in. */
  cwd: string;
  /** pi's agent directory: pi reads its settings, models and keys there. */
  agentDir: string;
  /** pi-shepherd's state directory (`<agentDir>/pi-shepherd`): every sheep's files, cards, state.json, the audit log. */
  stateDir: string;
  /** This sheep's own directory there: its inbox, outbox, reports, spec and session. */
  sheepDir: string;
  /** The session file pi writes: in sheepDir, or (resumed) an earlier sheep's. */
  sessionFile: string;
  /** Isolated sheep's worktrees (`<stateDir>/worktrees`). */
  worktreesDir: string;
  /** The cwd's git layout: its own git dir, and the common dir (the main repository's .git) for a worktree. */
  git?: { gitDir: string; commonDir: string };
  /** Multiplexer sockets the shepherd knows of (a private tmux -S socket, herdr's): their directories are hidden. */
  sockets: string[];
  /**
   * Code caches, where they exist: node's compile cache in the shepherd's temporary directory, and the
   * shepherd's seed of pi's TypeScript loader cache (jiti; src/sandbox/jiti-seed.ts, never the machine's
   * <tmpdir>/jiti). Without them a sandbox's empty /tmp makes every sandboxed pi compile pi and transpile
   * its extensions anew: about a second more at each start.
   */
  codeCaches?: { compile?: string; jiti?: string };
  /** What is at a path now: "dir", "file" or undefined (nothing). */
  kind: (path: string) => PathKind | undefined;
  /** The names in a directory (pi's agent dir). */
  entries: (dir: string) => string[];
  /** Where a path really is (symlinks resolved): bubblewrap mounts on a link's own path fail, so a hidden link's target is hidden. */
  real?: (path: string) => string;
}

export interface SandboxPolicy {
  /** Read-only again over the private /tmp: places pi and the sheep need that live under /tmp (a test's HOME). */
  readable: string[];
  /** Bound writable, before anything is hidden. */
  writable: string[];
  /**
   * pi's agent dir: an empty writable tmpfs whose writes vanish (pi takes lock files beside its
   * settings), with `agentFiles` bound read-only in it: never pi-shepherd's state or pi's sessions.
   */
  scratch: string[];
  agentFiles: string[];
  /** Hidden: an empty read-only directory, or an empty file, in their place. */
  hidden: { path: string; kind: PathKind }[];
  /** Bound writable again after the hiding: the sheep's own places inside hidden ones. */
  reopened: string[];
  /** Bound read-only again after the hiding: what allowRead names inside a hidden place (never inside denyRead: deny wins). */
  unhidden: string[];
  /** Read-only even inside a writable root; "missing" ones get an empty read-only directory so nothing can be created there. */
  readOnly: { path: string; kind: PathKind | "missing" }[];
  /**
   * The code caches, bound read-only inside: node's compile cache where node looks for it (it reads it
   * and cannot write it), the shepherd's seed of pi's loader cache for the launcher to copy into the
   * private /tmp (the loader uses only a cache it can write). Nothing a sheep does reaches either.
   */
  caches: { from: string; to: string }[];
  /** The directory of the egress proxy's socket for this sheep, bound at EGRESS_DIR_INSIDE; the sandbox has no network of its own. */
  egressDir?: string;
}

/** Where the egress proxy's socket directory is inside every sandbox; the launcher is told the socket in PI_SHEPHERD_EGRESS_SOCKET. */
// Under the sandbox's own /tmp (a tmpfs made before the binds): a mount point can be made there, never in the read-only root.
export const EGRESS_DIR_INSIDE = "/tmp/.pi-shepherd-egress";
/** The socket's name in its directory, on the host and inside alike. */
export const EGRESS_SOCKET_NAME = "egress.sock";
/** The egress log's name in its directory (outside the sheep's reach; kept when the sheep closes, like its session). */
export const EGRESS_LOG_NAME = "egress.ndjson";
export const EGRESS_SOCKET_INSIDE = `${EGRESS_DIR_INSIDE}/${EGRESS_SOCKET_NAME}`;
/** Where node looks for its compile cache inside (its temporary directory is the private /tmp). */
export const COMPILE_CACHE_INSIDE = "/tmp/node-compile-cache";
/** Where the seed of pi's loader cache is inside; the launcher is told it in PI_SHEPHERD_JITI_SEED. */
export const JITI_SEED_INSIDE = "/tmp/.pi-shepherd-jiti-seed";

/** The user's secrets: never readable by a sandboxed sheep, whatever its cwd. */
export const SECRET_PATHS = [".ssh", ".gnupg", ".aws", ".config/gh", ".netrc", ".docker", ".kube", ".git-credentials", ".config/gcloud", ".azure"];

/** Files a shell runs at its start: a sheep that could write them would run code in the user's next shell. */
export const SHELL_RC = [
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".zlogin",
  ".config/fish/config.fish",
  ".gitconfig",
];

export interface PolicyOptions {
  egressDir?: string;
  /**
   * pi-shepherd's own code the sheep runs (launcher, sheep extension, forwarder) where it lives in a
   * place the sandbox hides or scratches: a remote host's bundle, under that host's state dir. Bound
   * read-only again, that directory only.
   */
  ownCode?: readonly string[];
  /**
   * The programs the sheep's command runs (node, the launcher, pi): where one lies under /tmp, which
   * the sandbox's private /tmp would hide, the project holding it is bound read-only again (the
   * part before its first node_modules, else its nearest package root), so its dependencies come too.
   */
  runs?: readonly string[];
}

export function sandboxPolicy(settings: SandboxSettings, facts: SandboxFacts, o: PolicyOptions = {}): SandboxPolicy {
  const home = normalize(facts.home);
  const expand = (p: string) => normalize(p.startsWith("~/") ? join(home, p.slice(2)) : p);
  const inside = (p: string, root: string) => p === root || p.startsWith(root.endsWith("/") ? root : `${root}/`);
  const exists = (p: string) => facts.kind(p) !== undefined;

  // What the sheep may read though the private /tmp would hide it: HOME, its repository (a worktree's
  // git reads the main .git's config and packed refs), what allowRead names. Elsewhere the read-only root shows them.
  const repo = facts.git ? [facts.git.commonDir, ...(facts.git.commonDir.endsWith("/.git") ? [facts.git.commonDir.slice(0, -5)] : [])] : [];
  const code = (o.runs ?? []).filter((p) => isAbsolute(p) && inside(normalize(p), "/tmp")).map((p) => codeRoot(normalize(p), facts));
  const readable = unique([home, ...repo.reverse(), ...code, ...(settings.allowRead ?? []).map(expand)].filter((p) => inside(p, "/tmp") && exists(p)));

  // A worktree commits into the main repository's objects, refs and logs, and keeps its HEAD and
  // index in .git/worktrees/<name>: those are writable, the rest of the main repository is not.
  const gitWritable: string[] = [];
  if (facts.git && !inside(facts.git.gitDir, facts.cwd)) {
    gitWritable.push(facts.git.gitDir);
    for (const sub of ["objects", "refs", "logs"]) gitWritable.push(join(facts.git.commonDir, sub));
  }
  const writable = unique([facts.cwd, ...gitWritable, ...(settings.allowWrite ?? []).map(expand)].filter(exists));

  const hidden: SandboxPolicy["hidden"] = [];
  const hide = (link: string) => {
    const p = facts.real?.(link) ?? link;
    const kind = facts.kind(p);
    if (kind && !hidden.some((h) => h.path === p)) hidden.push({ path: p, kind });
  };
  for (const s of SECRET_PATHS) hide(join(home, s));
  for (const p of settings.denyRead ?? []) hide(expand(p));
  // pi's agent dir, but not every sheep's files, the cards, state.json, the audit log, other
  // worktrees (all in the state dir), nor pi's other conversations: those are simply not bound.
  const scratch = [facts.agentDir];
  const agentFiles = facts
    .entries(facts.agentDir)
    .map((n) => join(facts.agentDir, n))
    .filter((p) => p !== facts.stateDir && p !== join(facts.agentDir, "sessions") && exists(p));
  // The multiplexer's sockets: whoever reaches one types into every pane of it.
  // Their directory, unless the sheep's own places are in it too: then the socket itself.
  const needed = [facts.cwd, home, facts.agentDir, facts.sheepDir];
  for (const s of facts.sockets) {
    const dir = dirOf(s);
    hide(needed.some((p) => inside(p, dir)) ? s : dir);
  }
  const hiddenPaths = [...hidden.map((h) => h.path), ...scratch];

  // The sheep's own places, and writable roots that the hiding covered (a worktree in the state dir).
  const own = [facts.sheepDir, facts.sessionFile, ...writable];
  const reopened = unique(own.filter((p) => hiddenPaths.some((h) => inside(p, h) && p !== h) && exists(p)));
  const denied = (settings.denyRead ?? []).map(expand);
  const unhidden = unique([
    ...(settings.allowRead ?? [])
      .map(expand)
      .filter((p) => hidden.some((h) => inside(p, h.path) && p !== h.path) && !denied.some((d) => inside(p, d)) && exists(p)),
    ...(o.ownCode ?? []).map(normalize).filter((p) => hiddenPaths.some((h) => inside(p, h) && p !== h) && exists(p)),
  ]);

  const readOnly: SandboxPolicy["readOnly"] = [];
  const guard = (p: string, missingDir: boolean) => {
    if (!allWritable(p)) return;
    const kind = facts.kind(p);
    if (kind) readOnly.push({ path: p, kind });
    else if (missingDir) readOnly.push({ path: p, kind: "missing" });
  };
  const allWritable = (p: string) => [...writable, ...reopened].some((w) => inside(p, w));
  if (facts.git) {
    guard(join(facts.git.commonDir, "hooks"), true);
    guard(join(facts.git.commonDir, "config"), false);
    guard(join(facts.git.gitDir, "config.worktree"), false);
  }
  for (const rc of SHELL_RC) guard(join(home, rc), false);

  const caches: SandboxPolicy["caches"] = [];
  const c = facts.codeCaches;
  if (c?.compile && facts.kind(c.compile) === "dir") caches.push({ from: c.compile, to: COMPILE_CACHE_INSIDE });
  if (c?.jiti && facts.kind(c.jiti) === "dir") caches.push({ from: c.jiti, to: JITI_SEED_INSIDE });

  return {
    readable: unique(readable),
    writable,
    scratch,
    agentFiles,
    hidden,
    reopened,
    unhidden,
    readOnly,
    caches,
    ...(o.egressDir !== undefined ? { egressDir: o.egressDir } : {}),
  };
}

function dirOf(socket: string): string {
  const i = socket.lastIndexOf("/");
  return i > 0 ? socket.slice(0, i) : socket;
}

function unique(xs: string[]): string[] {
  return [...new Set(xs.filter((x) => isAbsolute(x)).map((x) => normalize(x)))];
}

/** The project a program under /tmp belongs to: before its first node_modules, else its nearest package root, else its directory. */
function codeRoot(path: string, facts: SandboxFacts): string {
  const nm = path.indexOf("/node_modules/");
  if (nm > 0) return path.slice(0, nm);
  for (let dir = dirname(path); dir !== "/tmp" && dir !== "/"; dir = dirname(dir)) {
    if (facts.kind(join(dir, "package.json")) === "file") return dir;
  }
  return dirname(path);
}
