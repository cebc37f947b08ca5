/** The page's static files (src/panel/page/), served with a policy that allows no script or style but its own. */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ServerResponse } from "node:http";
import { COMMON_HEADERS, HttpError } from "./errors.ts";

export const PAGE_DIR = fileURLToPath(new URL("./page/", import.meta.url));

export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** Request path → the file and its type: only these, so no path from a request ever reaches the file system. */
const FILES: Record<string, [string, string]> = {
  "/": ["index.html", "text/html; charset=utf-8"],
  "/index.html": ["index.html", "text/html; charset=utf-8"],
  "/assets/app.css": ["app.css", "text/css; charset=utf-8"],
  // The tab's icon; /favicon.ico too, where a browser looks without being told (no token: it is the page's).
  "/assets/favicon.svg": ["favicon.svg", "image/svg+xml"],
  "/favicon.ico": ["favicon.svg", "image/svg+xml"],
  // The page's ES modules: app.js, the entry, imports the others (test/unit/panel/panel-page.test.ts holds this list to the directory).
  ...Object.fromEntries(
    ["app", "api", "dom", "fleet", "sheep", "diff", "start", "history", "work", "shepherds", "attention"].map((m) => [
      `/assets/${m}.js`,
      [`${m}.js`, "text/javascript; charset=utf-8"],
    ]),
  ),
};

export function isPagePath(path: string): boolean {
  return Object.hasOwn(FILES, path);
}

export async function sendPage(res: ServerResponse, path: string, dir: string = PAGE_DIR, head = false): Promise<void> {
  const [file, type] = FILES[path]!;
  let data: Buffer;
  try {
    data = await readFile(join(dir, file));
  } catch {
    throw new HttpError(404, "not_found", `the panel's page file ${file} is missing from ${dir}.`);
  }
  res.writeHead(200, { ...COMMON_HEADERS, "content-type": type, "content-length": data.length, "content-security-policy": CONTENT_SECURITY_POLICY });
  res.end(head ? undefined : data);
}
