/**
 * Attention, on a real pi shepherd, a real sheep and Debian's chromium: a sheep that asks a
 * question is marked in the herd and counted in the tab's title; with the page in the background
 * and notifications allowed (granted through the driver), the browser's Notification says which
 * sheep and why, once for the wait (its question and its blocked state are one notification). Before the permission is given, a button asks for it.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { launchChromium, openPage, type PageTrouble, panelOn } from "../support/panel-browser.ts";
import type { Scene } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";

type Note = { title: string; body: string; tag: string };

describe("e2e: a sheep that waits for you", () => {
  let world: E2eWorld;
  let browser: Browser;
  let scene: Scene;
  let page: Page;
  let trouble: PageTrouble;
  let url: string;
  let alpha: string;
  before(async () => {
    world = await e2eWorld("panel-attention", { agent: { shepherdSettings: { panel: { port: 0 } } } });
    browser = await launchChromium();
    scene = world.scene();
    alpha = (await scene.start("alpha")).agentId;
    url = await panelOn(scene.shepherd);
  });
  after(async () => {
    await browser?.close();
    await world?.cleanup();
  });

  it("before the permission is given, a button asks for it", async () => {
    const { page: p } = await openPage(browser);
    await p.goto(url);
    await p.locator(".sheep-row").first().waitFor();
    await p.locator("button.notify-ask").waitFor();
    await p.close();
  });

  it("a question marks the sheep and the title, and a page in the background notifies once, naming the sheep and why", async () => {
    ({ page, trouble } = await openPage(browser));
    await page.context().grantPermissions(["notifications"], { origin: new URL(url).origin });
    // Records each Notification the page makes.
    // Written as text: the test's TypeScript loader would add helpers the page does not have.
    await page.addInitScript({
      content: `window.__notes = [];
        const Real = window.Notification;
        window.Notification = class extends Real {
          constructor(title, o) { super(title, o); window.__notes.push({ title, body: (o && o.body) || "", tag: (o && o.tag) || "" }); }
        };`,
    });
    await page.goto(url);
    await page.locator(".sheep-row .sheep-link", { hasText: "alpha" }).waitFor();
    assert.equal(await page.locator("button.notify-ask").count(), 0, "no button once allowed");
    assert.match(await page.title(), /^1 sheep · pi-shepherd$/);
    // The tab goes to the background, as far as the page can tell.
    await page.evaluate('Object.defineProperty(document, "hidden", { configurable: true, get() { return true; } })');
    await scene.prompt(
      alpha,
      directive({
        tool: { name: "shepherd_message", arguments: { kind: "question", text: "North or south pasture?", awaitReply: true, timeout: 300 } },
        tag: "ASK",
      }),
    );
    await page.waitForFunction(() => (window as unknown as { __notes: Note[] }).__notes.length > 0, undefined, { timeout: 30_000 });
    await page.locator(".sheep-row.needs-you", { hasText: "alpha" }).waitFor();
    assert.match((await page.locator(".sheep-row.needs-you .tag-attention").textContent()) ?? "", /waits for you: (asks you a question|blocked)/);
    await page.waitForFunction(() => document.title.startsWith("(1) "));
    const notes = await page.evaluate(() => (window as unknown as { __notes: Note[] }).__notes);
    assert.equal(notes.length, 1, JSON.stringify(notes));
    assert.equal(notes[0]!.title, "alpha asks you");
    assert.equal(notes[0]!.body, "alpha asks: North or south pasture?");
    assert.equal(notes[0]!.tag, `pi-shepherd-sheep:${alpha}`, "tagged by the sheep, as the browser channel's notice about it");
    await page.waitForTimeout(1500);
    assert.equal((await page.evaluate("window.__notes.length")) as number, 1, "nothing more for the same wait");
    // On the sheep's own page the title names it, the count still first.
    await page.evaluate(`location.hash = "#/sheep/${alpha}"`);
    await page.locator(".sheep-title", { hasText: "alpha" }).waitFor();
    await page.waitForFunction(() => /^\(1\) alpha · pi-shepherd$/.test(document.title));
    assert.deepEqual(trouble.errors, []);
    assert.deepEqual(trouble.failed, []);
  });
});
