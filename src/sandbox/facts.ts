/** The facts of one sheep a sandbox policy needs, read from the disk and the shepherd's env. */
import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { PathKind, SandboxFacts } from "./policy.ts";

/**
 * What is at a path, through symlinks as bubblewrap's mounts go through them: a ~/.ssh that is a
 * link to elsewhere is hidden all the same (lstat would take it for no directory and leave it open).
 */
export function pathKind(path: string): PathKind | undefined {
  try {
    const st = statSync(path);
    return st.isDirectory() ? "dir" : "file";
  } catch {
    return undefined;
  }
}

/** The git dir and common dir of the repository cwd is in (a worktree's `.git` file points at the first). */
export function gitLayout(cwd: string): SandboxFacts["git"] {
  for (let dir = resolve(cwd), n = 0; n < 64; dir = dirname(dir), n++) {
    const dotGit = join(dir, ".git");
    const kind = pathKind(dotGit);
    if (kind === "dir") return { gitDir: dotGit, commonDir: dotGit };
    if (kind === "file") {
      const m = /^gitdir: (.+)$/m.exec(readSmall(dotGit) ?? "");
      if (!m) return undefined;
      const gitDir = resolve(dir, m[1]!.trim());
      const common = readSmall(join(gitDir, "commondir"))?.trim();
      return { gitDir, commonDir: common ? resolve(gitDir, common) : gitDir };
    }
    if (dir === "/") return undefined;
  }
  return undefined;
}

function readSmall(path: string): string | undefined {
  try {
    const text = readFileSync(path, "utf8");
    return text.length <= 4096 ? text : undefined;
  } catch {
    return undefined;
  }
}

/** The multiplexer sockets this shepherd's env names: a private tmux -S socket, the one of the tmux it runs in, herdr's. */
export function multiplexerSockets(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  if (env.PI_SHEPHERD_TMUX_SOCKET) out.push(env.PI_SHEPHERD_TMUX_SOCKET);
  const tmux = env.TMUX?.split(",")[0];
  if (tmux) out.push(tmux);
  if (env.HERDR_SOCKET_PATH) out.push(env.HERDR_SOCKET_PATH);
  const uid = process.getuid?.();
  if (uid !== undefined) out.push(join(env.TMUX_TMPDIR || "/tmp", `tmux-${uid}`, "default"));
  return out.filter((s) => s.startsWith("/"));
}

export function homeOf(env: NodeJS.ProcessEnv): string {
  return env.HOME?.startsWith("/") ? env.HOME : homedir();
}

export function dirEntries(dir: string): string[] {
  try {
    return readdirSync(dir).slice(0, 4096);
  } catch {
    return [];
  }
}

export function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The shepherd's compile cache, where node puts it (under the temporary directory). Not the machine's
 * jiti cache: most of it is other projects' code; a sheep's loader cache is seeded from the shepherd's
 * own seed (jiti-seed.ts).
 */
export function codeCaches(tmp = tmpdir()): { compile: string } {
  return { compile: join(tmp, "node-compile-cache") };
}
