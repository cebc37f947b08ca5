/**
 * A herdr sheep's live terminal in a real browser (Debian's chromium, headless): a real pi shepherd
 * inside the fake herdr (its panes real tmux panes) serves the page, its sheep runs pi on the
 * scripted model in a herdr pane, and the panel's terminal, fed by the herdr runtime's poll of the
 * pane's visible screen, shows pi's screen; keys typed in it reach pi's editor through herdr's
 * send-text and send-keys, and the answer shows; keys to a pane not marked as the sheep's are
 * refused and typed nowhere.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { type E2eWorld, e2eWorld } from "../support/e2e-world.ts";
import { lines } from "../support/git-repo.ts";
import { launchChromium, openPage, type PageTrouble, panelOn, type StartedSheep } from "../support/panel-browser.ts";

describe("a herdr sheep's terminal in a real browser", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
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
  const capture = async () => {
    const fake = world!.herdr!.fake;
    return fake.tmux(["capture-pane", "-p", "-t", await fake.tmuxPaneOf(alpha.paneId)]);
  };

  before(async () => {
    world = await e2eWorld("panel-terminal-herdr", { herdr: true, repo: { "a.txt": lines(3) } });
    const scene = world.scene();
    alpha = await scene.start("alpha");
    assert.match(alpha.paneId, /^w\w+:p\w+$/, "the sheep runs in a herdr pane");
    url = await panelOn(scene.shepherd);
    browser = await launchChromium();
    world.defer(() => browser.close());
    ({ page, trouble } = await openPage(browser));
  });

  after(async () => {
    await world?.cleanup();
  });

  it("shows the herdr pane's pi, and keys typed in it reach pi's editor and the answer shows", async () => {
    await page.goto(url);
    await page.locator(".sheep-link", { hasText: "alpha" }).click();
    await page.locator('.term-screen[data-state="live"]').waitFor();
    await untilRows("pi's screen", (t) => t.trim().length > 0);
    await page.locator(".term-screen").click();
    await page.locator("#term-typing").check();
    await page.keyboard.type("hello from herdr");
    await untilRows("the typed prompt in pi's editor", (t) => t.includes("hello from herdr"));
    await page.keyboard.press("Enter");
    await untilRows("the answer", (t) => t.includes("ECHO: hello from herdr"));
    assert.ok(
      world!.model.log.some((l) => l.lastUserText === "hello from herdr"),
      "the prompt typed in the page reached the sheep's model",
    );
    assert.deepEqual(trouble.errors, [], "no script error");
    assert.deepEqual(await trouble.violations(), [], "no policy violation");
    assert.deepEqual(trouble.failed, [], "no request refused");
    assert.deepEqual(trouble.console, [], "nothing logged as an error");
  });

  it("refuses keys to a pane not marked as the sheep's, and types them nowhere", async () => {
    const fake = world!.herdr!.fake;
    const renamed = await fake.herdr(["pane", "rename", alpha.paneId, "someone [a_zzzzzzzzzz]"]);
    assert.equal(renamed.exitCode, 0, renamed.stderr);
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
  });
});
