/**
 * A sheep's live terminal in a real browser (Debian's chromium, headless) on the page a real pi
 * shepherd serves, with real pi sheep in a private tmux on the scripted model: the terminal shows
 * the sheep's pi, is read-only until the person ticks the box, and then keys typed in it reach pi's
 * editor (a prompt and Enter) and the answer shows in the terminal; keys to a pane not marked as the
 * sheep's are refused and typed nowhere; nothing in the page breaks its policy.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { E2eWorld } from "../support/e2e-world.ts";
import { launchChromium, openPage, type PageTrouble, panelHerd, type StartedSheep } from "../support/panel-browser.ts";
import type { ScriptedModel } from "../support/scripted-model.ts";

const MARK = "@pi_shepherd_agent";

describe("a sheep's terminal in a real browser", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let model: ScriptedModel;
  let browser: Browser;
  let page: Page;
  let trouble: PageTrouble;
  let url: string;
  let alpha: StartedSheep;

  const rows = async () => (await page.locator(".term-screen .xterm-rows").textContent()) ?? "";
  const untilRows = async (what: string, ok: (text: string) => boolean) => {
    for (let i = 0; i < 300; i++) {
      if (ok(await rows())) return;
      await page.waitForTimeout(100);
    }
    assert.fail(`the terminal never showed ${what}; it shows:\n${await rows()}`);
  };
  const capture = async () => world!.tmux.tmux(["capture-pane", "-p", "-t", alpha.paneId]);

  before(async () => {
    ({ world, model, alpha, url } = await panelHerd("panel-terminal"));
    browser = await launchChromium();
    world.defer(() => browser.close());
    ({ page, trouble } = await openPage(browser));
  });

  after(async () => {
    await world?.cleanup();
  });

  it("shows the sheep's pi live, read-only until the person ticks the box", async () => {
    await page.goto(url);
    await page.locator(".sheep-link", { hasText: "alpha" }).click();
    await page.locator('.term-screen[data-state="live"]').waitFor();
    // pi's own screen, as the pane has it: its editor's border and footer are drawn.
    await untilRows("pi's screen", (t) => t.trim().length > 0);
    assert.equal(await page.locator("#term-typing").isChecked(), false, "read-only at first");
    let posts = 0;
    const count = (r: { url(): string; method(): string }) => {
      if (r.method() === "POST" && new URL(r.url()).pathname.endsWith("/terminal")) posts++;
    };
    page.on("request", count);
    await page.locator(".term-screen").click();
    await page.keyboard.type("nothing");
    await page.waitForTimeout(300);
    page.off("request", count);
    assert.equal(posts, 0, "keys typed in a read-only terminal go nowhere");
    assert.doesNotMatch(await capture(), /nothing/);
  });

  it("keys typed in it reach pi's editor, and the scripted model's answer shows in the terminal", async () => {
    await page.locator("#term-typing").check();
    await page.keyboard.type("hello from the terminal");
    await untilRows("the typed prompt in pi's editor", (t) => t.includes("hello from the terminal"));
    await page.keyboard.press("Enter");
    await untilRows("the answer", (t) => t.includes("ECHO: hello from the terminal"));
    assert.ok(
      model.log.some((l) => l.lastUserText === "hello from the terminal"),
      "the prompt typed in the page reached the sheep's model",
    );
    assert.deepEqual(trouble.errors, [], "no script error");
    assert.deepEqual(await trouble.violations(), [], "no policy violation (xterm's styles carry the page's nonce)");
    assert.deepEqual(trouble.failed, [], "no request refused");
    assert.deepEqual(trouble.console, [], "nothing logged as an error");
  });

  it("refuses keys to a pane not marked as the sheep's, and types them nowhere", async () => {
    await world!.tmux.tmux(["set-option", "-p", "-t", alpha.paneId, MARK, "a_zzzzzzzzzz"]);
    try {
      const answer = await page.evaluate(async (id) => {
        const key = sessionStorage.getItem("pi-shepherd-session") ?? "";
        const r = await fetch(`/api/v1/sheep/${id}/terminal`, {
          method: "POST",
          headers: { "Content-Type": "application/json", "x-pi-shepherd-session": key },
          body: JSON.stringify({ keys: "intruder\r" }),
        });
        return { status: r.status, body: await r.json() };
      }, alpha.agentId);
      assert.equal(answer.status, 403);
      assert.equal(answer.body.code, "not_owned");
      await page.waitForTimeout(300);
      assert.doesNotMatch(await capture(), /intruder/);
    } finally {
      await world!.tmux.tmux(["set-option", "-p", "-t", alpha.paneId, MARK, alpha.agentId]);
    }
  });
});
