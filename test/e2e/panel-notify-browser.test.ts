/**
 * The `notify` setting's browser channel in a real browser (issue 35): a real pi shepherd whose
 * only channel is `browser`, a real sheep whose prompt fails on the scripted model, and the panel in
 * Debian's chromium with notifications allowed. The notice reaches the page as its `notify` event and
 * the page shows it once with the Notification API, tagged by the sheep, naming it and why.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { type E2eWorld, e2eWorld } from "../support/e2e-world.ts";
import { launchChromium, openPage, panelOn } from "../support/panel-browser.ts";
import type { Scene } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";

type Note = { title: string; body: string; tag: string };

describe("e2e: the notify setting's browser channel in chromium", () => {
  let world: E2eWorld;
  let browser: Browser;
  let scene: Scene;
  let url: string;
  let alpha: string;
  before(async () => {
    world = await e2eWorld("panel-notify-browser", {
      agent: { shepherdSettings: { panel: { port: 0 }, notify: { channels: [{ type: "browser", events: ["failed"] }] } } },
    });
    browser = await launchChromium();
    scene = world.scene();
    alpha = (await scene.start("alpha")).agentId;
    url = await panelOn(scene.shepherd);
  });
  after(async () => {
    await browser?.close();
    await world?.cleanup();
  });

  it("a failed prompt's notice is shown once by the page, naming the sheep and why", async () => {
    const { page, trouble } = await openPage(browser);
    await page.context().grantPermissions(["notifications"], { origin: new URL(url).origin });
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
    const p = await scene.prompt(alpha, directive({ fail: 500, message: "pasture flooded" }));
    assert.equal((await scene.wait(p, 60)).status, "failed");
    await page.waitForFunction(() => (window as unknown as { __notes: Note[] }).__notes.length > 0, undefined, { timeout: 30_000 });
    await page.waitForTimeout(1500);
    const notes = await page.evaluate(() => (window as unknown as { __notes: Note[] }).__notes);
    assert.equal(notes.length, 1, JSON.stringify(notes));
    assert.match(notes[0]!.title, new RegExp(`^pi-shepherd: alpha \\(${alpha}\\) on local `));
    assert.match(notes[0]!.body, /pasture flooded/);
    assert.equal(notes[0]!.tag, `pi-shepherd-sheep:${alpha}`);
    assert.deepEqual(trouble.errors, []);
    assert.deepEqual(trouble.failed, []);
  });
});
