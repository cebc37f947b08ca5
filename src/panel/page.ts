/** The page's static files (src/panel/page/), served with a policy that allows no script or style but its own. */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ServerResponse } from "node:http";
import { COMMON_HEADERS, HttpError } from "./errors.ts";

export const PAGE_DIR = fileURLToPath(new URL("./page/", import.meta.url));

/** Where the terminal's library (the @xterm/xterm package) keeps its files. */
export const XTERM_DIR = dirname(createRequire(import.meta.url).resolve("@xterm/xterm/package.json"));

/**
 * No script or style but the page's own. The terminal's library writes its measured styles into
 * <style> elements it makes: those carry this answer's nonce (the page's terminal.js sets it on each
 * as it is made, from the page's meta tag), and no other inline style is applied.
 */
export function contentSecurityPolicy(nonce: string): string {
  return `default-src 'self'; script-src 'self'; style-src 'self' 'nonce-${nonce}'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`;
}

/** The meta tag of index.html that the nonce is written into. */
const NONCE_META = '<meta name="pi-shepherd-style-nonce" content="">';

/** Request path → the file, its type and (the terminal's library) its directory: only these, so no path from a request ever reaches the file system. */
const FILES: Record<string, [string, string, string?]> = {
  "/": ["index.html", "text/html; charset=utf-8"],
  "/index.html": ["index.html", "text/html; charset=utf-8"],
  "/assets/app.css": ["app.css", "text/css; charset=utf-8"],
  // The tab's icon; /favicon.ico too, where a browser looks without being told (no token: it is the page's).
  "/assets/favicon.svg": ["favicon.svg", "image/svg+xml"],
  "/favicon.ico": ["favicon.svg", "image/svg+xml"],
  // The page's ES modules: app.js, the entry, imports the others (test/unit/panel/panel-page.test.ts holds this list to the directory).
  ...Object.fromEntries(
    ["app", "api", "dom", "fleet", "sheep", "diff", "start", "history", "work", "terminal", "notices", "shepherds", "attention"].map((m) => [
      `/assets/${m}.js`,
      [`${m}.js`, "text/javascript; charset=utf-8"],
    ]),
  ),
  // The terminal: @xterm/xterm's own ES module and style sheet, from the installed package.
  "/assets/xterm.mjs": ["lib/xterm.mjs", "text/javascript; charset=utf-8", XTERM_DIR],
  "/assets/xterm.css": ["css/xterm.css", "text/css; charset=utf-8", XTERM_DIR],
};

export function isPagePath(path: string): boolean {
  return Object.hasOwn(FILES, path);
}

export async function sendPage(res: ServerResponse, path: string, dir: string = PAGE_DIR, head = false): Promise<void> {
  const [file, type, own] = FILES[path]!;
  const from = own ?? dir;
  let data: Buffer;
  try {
    data = await readFile(join(from, file));
  } catch {
    throw new HttpError(404, "not_found", `the panel's page file ${file} is missing from ${from}.`);
  }
  const nonce = randomBytes(16).toString("base64");
  if (file === "index.html") data = Buffer.from(data.toString("utf8").replace(NONCE_META, NONCE_META.replace('content=""', `content="${nonce}"`)));
  res.writeHead(200, { ...COMMON_HEADERS, "content-type": type, "content-length": data.length, "content-security-policy": contentSecurityPolicy(nonce) });
  res.end(head ? undefined : data);
}
