/**
 * Where a host's control socket lives: `<local state dir>/ssh/`, 0700 and ours. A unix socket's
 * path has room for about 104 bytes, and ssh binds a temp name 17 bytes longer first, and ssh's
 * config syntax gives spaces, quotes and "%" meanings; when the state dir's path does not fit, a
 * short dir of ours in /tmp stands in, checked to be ours and private before use.
 */
import { mkdtemp, lstat, mkdir, chmod } from "node:fs/promises";
import { join } from "node:path";
import { ensurePrivateDir } from "../../protocol/files.ts";

/** 104 (the smallest sun_path among the systems we run on) − ssh's ".<16 random>" temp suffix − the NUL. */
export const MAX_SOCKET_PATH = 104 - 17 - 1;
const PLAIN_PATH = /^[A-Za-z0-9/._+-]+$/;

export function socketPathFits(path: string): boolean {
  return Buffer.byteLength(path) <= MAX_SOCKET_PATH && PLAIN_PATH.test(path);
}

/** A dir that exists, is no symlink, is ours, and nobody else may enter. */
async function privateAndOurs(dir: string): Promise<boolean> {
  const st = await lstat(dir).catch(() => undefined);
  if (!st?.isDirectory()) return false;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return false;
  if ((st.mode & 0o077) !== 0) await chmod(dir, 0o700);
  return true;
}

/**
 * The control socket's path for a host of this shepherd process: `<dir>/<host>.<pid>` (the pid:
 * two shepherds on one state dir each hold their own master, and one's close never ends the
 * other's). `tmp` is where the short fallback goes (os.tmpdir() unless a test says otherwise).
 */
export async function controlSocketPath(localStateDir: string, host: string, tmp = "/tmp"): Promise<string> {
  const leaf = `${host}.${process.pid}`;
  const preferred = join(localStateDir, "ssh");
  if (socketPathFits(join(preferred, leaf))) {
    await ensurePrivateDir(preferred);
    return join(preferred, leaf);
  }
  const uid = process.getuid?.() ?? "u";
  const short = join(tmp, `psh-${uid}`);
  await mkdir(short, { mode: 0o700 }).catch(() => undefined);
  if ((await privateAndOurs(short)) && socketPathFits(join(short, leaf))) return join(short, leaf);
  // Someone else holds that name (or it is a link): a fresh dir of our own, made 0700 by mkdtemp.
  const fresh = await mkdtemp(join(tmp, "psh-"));
  return join(fresh, leaf);
}
