/**
 * Launch specs no launcher read: the launcher removes its spec before pi runs, so a spec still
 * there long after prepare wrote it belongs to a start that was cut short (the shepherd killed
 * between prepare and the pane). It holds forwarded secrets; the caller decides, by its records,
 * which are stale, and removes them. Read only here.
 */
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { isWellFormedId } from "../domain/ids.ts";
import { sheepLayout } from "./layout.ts";

/** At most this many are listed in one look: a directory full of them is reported, not read whole. */
const MAX_LISTED = 200;

/** Agent ids whose spec file in `<stateDir>/sheep/<id>/` is older than `olderThanMs`. */
export async function specsOlderThan(stateDir: string, olderThanMs: number, now = Date.now()): Promise<string[]> {
  const root = join(stateDir, "sheep");
  const names = await readdir(root).catch(() => [] as string[]);
  const out: string[] = [];
  for (const id of names) {
    if (out.length >= MAX_LISTED) break;
    if (!isWellFormedId(id, "agent")) continue;
    const st = await lstat(sheepLayout(join(root, id)).spec).catch(() => undefined);
    if (st?.isFile() && now - st.mtimeMs >= olderThanMs) out.push(id);
  }
  return out;
}
