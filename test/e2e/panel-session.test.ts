/**
 * Issue 31, items 12 and 14, in a real browser (Debian's chromium, headless) on the page a real pi
 * shepherd serves: a page on another port of 127.0.0.1 tosses in a cookie of the panel's name
 * (`path=/api`, so the browser sends it first) and the panel's tab stays signed in, and opening
 * the token's address again signs in too; a page with no session says why and how to get a new
 * address (`/shepherd panel url`).
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext } from "playwright-core";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { launchChromium, panelOn } from "../support/panel-browser.ts";

describe("the panel's session in a real browser", { timeout: 300_000 }, () => {
  let world: E2eWorld | undefined;
  let browser: Browser;
  let context: BrowserContext;
  let url: string;
  let tosser: Server;

  before(async () => {
    world = await e2eWorld("panel-session");
    const scene = world.scene();
    await scene.start("alpha");
    url = await panelOn(scene.shepherd);
    browser = await launchChromium();
    world.defer(() => browser.close());
    context = await browser.newContext();
    // Another local server (a sheep's dev server, say), whose page sets a cookie of the panel's name.
    const name = `pi_shepherd_panel_${new URL(url).port}`;
    tosser = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<!doctype html><script>document.cookie = "${name}=tossed; path=/api";</script><p>tossed</p>`);
    });
    await new Promise<void>((r) => tosser.listen({ host: "127.0.0.1", port: 0 }, () => r()));
    world.defer(() => new Promise<void>((r) => tosser.close(() => r())));
  });
  after(() => world?.cleanup());

  const signedIn = async (page: import("playwright-core").Page) => {
    await page.locator(".sheep-row .sheep-link", { hasText: "alpha" }).waitFor({ timeout: 30_000 });
    assert.equal(
      await page
        .locator("#notice")
        .textContent()
        .then((t) => (t ?? "").trim()),
      "",
    );
  };

  it("a cookie of the panel's name tossed in from another port locks nobody out, and the token's address signs in again", async () => {
    const panel = await context.newPage();
    await panel.goto(url);
    await signedIn(panel);
    const other = await context.newPage();
    await other.goto(`http://127.0.0.1:${(tosser.address() as AddressInfo).port}/`);
    await other.locator("p", { hasText: "tossed" }).waitFor();
    const cookies = await context.cookies(`http://127.0.0.1:${new URL(url).port}/api/v1/sheep`);
    assert.equal(
      cookies.filter((c) => c.name === `pi_shepherd_panel_${new URL(url).port}`).length,
      2,
      "the browser holds both: the panel's and the tossed one",
    );
    // The panel's tab, reloaded (its key kept in sessionStorage), sends both cookies, the tossed one first.
    await panel.reload();
    await signedIn(panel);
    // A new tab on the token's address signs in too.
    const again = await context.newPage();
    await again.goto(url);
    await signedIn(again);
  });

  it("a page without a session says it is not signed in and how to get a new address", async () => {
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${new URL(url).port}/`);
    const said = page.locator("#notice", { hasText: "Not signed in" });
    await said.waitFor({ timeout: 30_000 });
    assert.match((await said.textContent()) ?? "", /session ends after 12 hours unused.*\/shepherd panel url in the shepherd's pi/);
  });
});
