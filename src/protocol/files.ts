import { randomBytes } from "node:crypto";
import { closeSync, linkSync, openSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { chmod, link, mkdir, rename, unlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { readJsonBounded, readJsonBoundedSync, jsonValue } from "./bounded-read.ts";

/** Private directories are 0700 even where the umask would allow more. */
export async function ensurePrivateDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  await chmod(path, 0o700);
}

/** Readers never see half a file: write a private temp file, then rename it into place. */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const tmp = join(dirname(path), `.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(tmp, data, { mode: 0o600, flag: "wx" });
    await rename(tmp, path);
  } catch (e) {
    // A full disk or a directory in the way must not leave a temp file behind on every retry.
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") await unlink(tmp).catch(() => undefined);
    throw e;
  }
}

export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  await writeFileAtomic(path, JSON.stringify(value, null, 2) + "\n");
}

/**
 * writeJsonAtomic's synchronous twin, for a writer whose event loop is busy (a sheep right after
 * its turn) or whose writes must land in the order they were made.
 */
export function writeJsonAtomicSync(path: string, value: unknown): void {
  const tmp = join(dirname(path), `.${randomBytes(6).toString("hex")}.tmp`);
  try {
    writeFileSync(tmp, JSON.stringify(value, null, 2) + "\n", { mode: 0o600, flag: "wx" });
    renameSync(tmp, path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") {
      try {
        unlinkSync(tmp);
      } catch {
        // never written
      }
    }
    throw e;
  }
}

/**
 * Writes the file only if no file of that name exists, never half: a private temp file is linked
 * into place (link fails when the name is taken, where rename would replace). True when this call
 * created it; false when someone else's file was there first.
 */
export async function writeJsonExclusive(path: string, value: unknown): Promise<boolean> {
  const tmp = join(dirname(path), `.${randomBytes(6).toString("hex")}.tmp`);
  await writeFile(tmp, JSON.stringify(value, null, 2) + "\n", { mode: 0o600, flag: "wx" });
  try {
    await link(tmp, path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

/** writeJsonExclusive's synchronous twin, for the sheep. */
export function writeJsonExclusiveSync(path: string, value: unknown): boolean {
  const tmp = join(dirname(path), `.${randomBytes(6).toString("hex")}.tmp`);
  writeFileSync(tmp, JSON.stringify(value, null, 2) + "\n", { mode: 0o600, flag: "wx" });
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
  }
}

/** Creates an empty private file; false when it existed already. A marker that says "done once". */
export function createMarkerSync(path: string): boolean {
  try {
    closeSync(openSync(path, "wx", 0o600));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
}

/**
 * Undefined when the file is missing, not (yet) valid JSON, not a regular file or past the bound
 * of an inbox file (a 4 MiB prompt, JSON-escaped): read through the one bounded reader.
 */
export async function readJson<T>(path: string): Promise<T | undefined> {
  return jsonValue(await readJsonBounded<T>(path, "inbox"));
}

/**
 * The same answers as readJson, read synchronously: for files of a few hundred bytes read on every
 * wake-up of every waiter, where four trips through a busy thread pool cost more than the read.
 */
export function readJsonSync<T>(path: string): T | undefined {
  return jsonValue(readJsonBoundedSync<T>(path, "inbox"));
}
