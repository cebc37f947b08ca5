/**
 * The panel in real browsers: Debian's chromium driven headless by playwright-core, and Debian's
 * firefox-esr by puppeteer-core over WebDriver BiDi (playwright drives only its own patched
 * Firefox; neither driver downloads a browser here), and the panel's address from a real
 * shepherd's `/shepherd panel`. Each browser runs on a fresh profile of its own and is closed by
 * its handle, never by name.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import puppeteer, { type Browser as BidiBrowser } from "puppeteer-core";
import { join } from "node:path";
import { type E2eWorld, e2eWorld } from "./e2e-world.ts";
import { lines } from "./git-repo.ts";
import { repoRoot, type RpcShepherd } from "./rpc-shepherd.ts";
import type { Scene } from "./scene.ts";
import type { ScriptedModel } from "./scripted-model.ts";

/** An answer no page may draw as anything but text: an image's handler, a script, javascript: links. */
export const XSS = [
  `<img src=x onerror="window.__xss = 'img'">`,
  `<script>window.__xss = 'script'</script>`,
  `[a link](javascript:window.__xss='md')`,
  `<a href="javascript:window.__xss = 'a'">click me</a>`,
].join(" ");

export const CHROMIUM = "/usr/bin/chromium";
export const FIREFOX = "/usr/bin/firefox-esr";

/** Flags for a quiet browser in a container: no sandbox (no user namespaces), no GPU, nothing it fetches for itself. */
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function launchChromium(): Promise<Browser> {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium; .ci/run does)`);
  // launch() gives the browser a fresh temporary profile and removes it on close.
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

export async function launchFirefox(): Promise<BidiBrowser> {
  assert.ok(existsSync(FIREFOX), `${FIREFOX} is missing: install Debian's firefox-esr (apt-get install firefox-esr; .ci/run does)`);
  // A fresh temporary profile, removed on close; BiDi is puppeteer's protocol for Firefox.
  return puppeteer.launch({ browser: "firefox", executablePath: FIREFOX, headless: true });
}

/** Turns the shepherd's panel on; the address it prints, with the token in its fragment. */
export async function panelOn(shepherd: RpcShepherd): Promise<string> {
  const notices = await shepherd.slash("/shepherd panel on");
  const text = notices.map((n) => n.text).join("\n");
  const url = /http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]+/.exec(text)?.[0];
  assert.ok(url, `/shepherd panel on printed no address with a token:\n${text}`);
  return url;
}

/** What the page hears that a test asserts never happens: script errors, CSP violations, console errors, failed requests. */
export interface PageTrouble {
  errors: string[];
  violations(): Promise<string[]>;
  /** What the browser logged as an error (a request answered 4xx is one: "Failed to load resource"). */
  console: string[];
  /** Every request answered 400 or more, as `<status> <method> <path>`. */
  failed: string[];
}

/** A new page at 1280×800 that records its script errors and every CSP violation it meets. */
export async function openPage(browser: Browser): Promise<{ page: Page; trouble: PageTrouble }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  const logged: string[] = [];
  const failed: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") logged.push(`${m.text()} (${m.location().url})`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  await page.addInitScript(() => {
    const w = window as unknown as { __violations: string[] };
    w.__violations = [];
    document.addEventListener("securitypolicyviolation", (e) => w.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  return {
    page,
    trouble: {
      errors,
      console: logged,
      failed,
      violations: () => page.evaluate(() => (window as unknown as { __violations: string[] }).__violations),
    },
  };
}

export type StartedSheep = { agentId: string; paneId: string; pid: number };

/**
 * The herd both browsers' suites stand on: a real pi shepherd (with the test's /reload command) in
 * a git repository, alpha and an isolated beta, and the panel on. A setup that fails half-way ends
 * what it made.
 */
export async function panelHerd(
  name: string,
): Promise<{ world: E2eWorld; scene: Scene; model: ScriptedModel; alpha: StartedSheep; beta: StartedSheep; url: string }> {
  const world = await e2eWorld(name, { repo: { "a.txt": lines(3), "README.md": "# pasture\n" } });
  try {
    const scene = world.scene({ extraArgs: ["-e", join(repoRoot, "test", "support", "reload-ext.ts")] });
    const alpha = await scene.start("alpha");
    const beta = await scene.start("beta", { isolate: true });
    const url = await panelOn(scene.shepherd);
    return { world, scene, model: world.model, alpha, beta, url };
  } catch (e) {
    await world.cleanup();
    throw e;
  }
}
