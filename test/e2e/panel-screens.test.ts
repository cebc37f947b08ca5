/**
 * Any screen, on a real pi shepherd with a real sheep and Debian's chromium: the herd, a sheep's
 * page and the history at 360 px wide (a phone) and at 2560 have no horizontal overflow; the page
 * follows the system's dark scheme; a sheep is reached and the herd found again by keyboard alone;
 * and no page logs a console error or fails a request (the favicon included).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { launchChromium, openPage, type PageTrouble, panelOn } from "../support/panel-browser.ts";
import type { Scene } from "../support/scene.ts";

describe("e2e: the panel on any screen", () => {
  let world: E2eWorld;
  let browser: Browser;
  let scene: Scene;
  let url: string;
  let alpha: string;
  before(async () => {
    world = await e2eWorld("panel-screens", { agent: { shepherdSettings: { panel: { port: 0 } } } });
    browser = await launchChromium();
    scene = world.scene();
    alpha = (await scene.start("alpha-with-a-rather-long-label-for-a-phone")).agentId;
    await scene.wait(await scene.prompt(alpha, "Count the sheep in the north field and say how many there are, with a long line of text"), 60);
    url = await panelOn(scene.shepherd);
  });
  after(async () => {
    await browser?.close();
    await world?.cleanup();
  });

  const overflow = (page: Page) => page.evaluate("document.documentElement.scrollWidth - window.innerWidth") as Promise<number>;

  for (const width of [360, 2560]) {
    it(`at ${width} px: the herd (its history filter and start form too) and a sheep's page do not overflow sideways; no console error or failed request`, async () => {
      const { page, trouble } = await openPage(browser);
      await page.setViewportSize({ width, height: width === 360 ? 740 : 1440 });
      await page.goto(url);
      await page.locator(".sheep-row").first().waitFor();
      await page.locator("#conn", { hasText: "Live" }).waitFor();
      assert.ok((await overflow(page)) <= 0, `the herd overflows by ${await overflow(page)} px`);
      await page.goto(`${new URL(url).origin}/#/sheep/${alpha}`);
      await page.locator(".sheep-title").waitFor();
      await page.locator(".conv-answer .conv-text").first().waitFor();
      assert.ok((await overflow(page)) <= 0, `a sheep's page overflows by ${await overflow(page)} px`);
      await page.goto(`${new URL(url).origin}/#/`);
      await page.locator(".sheep-row").first().waitFor();
      await page.waitForTimeout(500);
      assert.ok((await overflow(page)) <= 0, `the herd again overflows by ${await overflow(page)} px`);
      clean(trouble);
      await page.close();
    });
  }

  it("follows the system's dark scheme", async () => {
    const { page, trouble } = await openPage(browser);
    await page.emulateMedia({ colorScheme: "dark" });
    await page.goto(url);
    await page.locator(".sheep-row").first().waitFor();
    const dark = (await page.evaluate("getComputedStyle(document.body).backgroundColor")) as string;
    await page.emulateMedia({ colorScheme: "light" });
    const light = (await page.evaluate("getComputedStyle(document.body).backgroundColor")) as string;
    const lum = (c: string) => (c.match(/\d+/g) ?? []).slice(0, 3).reduce((a, b) => a + Number(b), 0);
    assert.ok(lum(dark) < 150 && lum(light) > 600, `dark ${dark}, light ${light}`);
    clean(trouble);
    await page.close();
  });

  it("by keyboard alone: Tab reaches the sheep's link, Enter opens its page, and the way back is reached too", async () => {
    const { page, trouble } = await openPage(browser);
    await page.goto(url);
    await page.locator(".sheep-row").first().waitFor();
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = (await page.evaluate("document.activeElement?.classList.contains('sheep-link') === true")) as boolean;
    }
    assert.ok(reached, "Tab never reached the sheep's link");
    await page.keyboard.press("Enter");
    await page.locator(".sheep-title").waitFor();
    let back = false;
    for (let i = 0; i < 40 && !back; i++) {
      await page.keyboard.press("Shift+Tab");
      back = (await page.evaluate("document.activeElement?.matches('.back, h1 a') === true")) as boolean;
    }
    assert.ok(back, "Shift+Tab never reached the way back to the herd");
    await page.keyboard.press("Enter");
    await page.locator(".sheep-row").first().waitFor();
    clean(trouble);
    await page.close();
  });
});

function clean(trouble: PageTrouble): void {
  assert.deepEqual(trouble.errors, [], "script errors");
  assert.deepEqual(trouble.console, [], "console errors");
  assert.deepEqual(trouble.failed, [], "failed requests");
}
