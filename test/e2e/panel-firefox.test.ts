/**
 * The panel in Firefox: Debian's firefox-esr, headless, driven over WebDriver BiDi by
 * puppeteer-core, on the page a real pi shepherd serves, with real pi sheep in a private tmux on
 * the scripted model. The same person's path as in Chromium (panel-browser), by keys where a
 * person uses keys: the herd is listed, a prompt is answered without a reload, hostile answers
 * stay text, a question is answered and the sheep's tool gets the reply, an isolated sheep's
 * evidence is drawn, and a close closes the pane; no script error and no CSP violation on the way.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "puppeteer-core";
import type { E2eWorld } from "../support/e2e-world.ts";
import { pidAlive } from "../support/leftovers.ts";
import { launchFirefox, panelHerd, type StartedSheep, XSS } from "../support/panel-browser.ts";
import { type Scene, tmuxPanes } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";

describe("the panel in Firefox", { timeout: 900_000 }, () => {
  let world: E2eWorld | undefined;
  let scene: Scene;
  let model: ScriptedModel;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  let url: string;
  let alpha: StartedSheep;
  let beta: StartedSheep;

  /** Waits until an element of `selector` holds `text`. */
  const waitText = (selector: string, text: string, timeout = 30_000) =>
    page.waitForFunction((s, t) => [...document.querySelectorAll(s)].some((e) => (e.textContent ?? "").includes(t)), { timeout, polling: 100 }, selector, text);
  const texts = (selector: string) => page.$$eval(selector, (els) => els.map((e) => e.textContent ?? ""));
  const ctrlEnter = async () => {
    await page.keyboard.down("Control");
    await page.keyboard.press("Enter");
    await page.keyboard.up("Control");
  };
  /** A prompt from the sheep's page: put in its box, sent with Ctrl+Enter from the keyboard. */
  const sendPrompt = async (text: string) => {
    await page.locator("#prompt-text").fill(text);
    await page.focus("#prompt-text");
    await ctrlEnter();
    await page.waitForFunction(() => /^Sent as p_\w+\.$/.test(document.querySelector(".prompt-form .note")?.textContent ?? ""), {
      timeout: 30_000,
      polling: 100,
    });
  };
  const answers = () => texts(".conv-answer .conv-text");

  before(async () => {
    ({ world, scene, model, alpha, beta, url } = await panelHerd("panel-firefox"));
    browser = await launchFirefox();
    world.defer(() => browser.close());
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    page.on("pageerror", (e) => errors.push(e instanceof Error ? e.message : String(e)));
    await page.evaluateOnNewDocument(() => {
      const w = window as unknown as { __violations: string[] };
      w.__violations = [];
      document.addEventListener("securitypolicyviolation", (e) => w.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
  });

  after(async () => {
    await world?.cleanup();
  });

  it("trades the token for a cookie, takes it out of the address, and lists both sheep", async () => {
    await page.goto(url);
    await page.waitForSelector(".sheep-row:nth-child(2)");
    assert.equal(await page.evaluate(() => location.hash), "", "the token is gone from the address");
    assert.equal(await page.evaluate(() => document.cookie), "", "the session cookie is HttpOnly: no script reads it");
    assert.deepEqual(await texts(".host h3"), ["local · 2 sheep"]);
    assert.deepEqual(await texts(".sheep-row .sheep-link"), ["alpha", "beta"]);
    await waitText("#conn", "Live");
  });

  it("by keys to alpha; a prompt sent from the page is answered, and the answer appears without a reload", async () => {
    for (let i = 0; i < 12 && (await page.evaluate(() => document.activeElement?.textContent)) !== "alpha"; i++) await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await waitText(".sheep-title", "alpha");
    assert.equal(await page.evaluate(() => document.activeElement?.className), "sheep-title", "the focus follows to the sheep");
    await page.evaluate(() => {
      (window as unknown as { __sameDocument: boolean }).__sameDocument = true;
    });
    await sendPrompt(directive({ reply: "Counted 40 sheep in the north field", chunks: 3, tag: "FF-1" }));
    await waitText(".conv-answer .conv-text", "Counted 40 sheep in the north field");
    assert.equal(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument), true, "the same document: no reload");
    assert.equal(model.log.filter((l) => l.tag === "FF-1").length, 1, "the prompt reached the sheep's model once");
  });

  it("an answer holding an <img onerror>, a <script> and javascript: links is drawn as text", async () => {
    await sendPrompt(directive({ reply: `Here it is: ${XSS}`, tag: "FF-XSS" }));
    await waitText(".conv-answer .conv-text", "Here it is:");
    assert.equal((await answers()).at(-1), `Here it is: ${XSS}`, "the answer exactly, as text");
    await new Promise((r) => setTimeout(r, 500));
    const found = await page.evaluate(() => ({
      xss: (window as unknown as { __xss?: string }).__xss,
      images: document.images.length,
      jsLinks: document.querySelectorAll('a[href^="javascript:" i]').length,
      handlers: [...document.querySelectorAll("*")].filter((el) => [...el.attributes].some((a) => a.name.startsWith("on"))).length,
    }));
    assert.deepEqual(found, { xss: undefined, images: 0, jsLinks: 0, handlers: 0 }, "nothing ran, no image, link or handler was made");
  });

  it("a sheep's question is answered by keys in its reply box, and its shepherd_message call returns the reply", async () => {
    await sendPrompt(
      directive({
        tool: { name: "shepherd_message", arguments: { kind: "question", text: "North or south pasture?", awaitReply: true, timeout: 300 } },
        afterTool: "Going to the south pasture",
        tag: "FF-ASK",
      }),
    );
    const box = ".message.msg-question textarea";
    await page.waitForSelector(box, { visible: true });
    await page.click(box);
    await page.keyboard.type("South, by the river");
    assert.equal(await page.$eval(box, (el) => (el as HTMLTextAreaElement).value), "South, by the river");
    await ctrlEnter();
    await waitText(".conv-answer .conv-text", "Going to the south pasture", 120_000);
    const followup = model.log.find((l) => l.tag === "FF-ASK" && l.kind === "tool-followup");
    assert.match(followup?.toolTexts.at(-1) ?? "", /South, by the river/, "the tool returned the reply typed in the page");
    await waitText(".message.msg-question .msg-head", "answered");
    await page.waitForSelector(".sheep-head .state-idle");
  });

  it("an isolated sheep's evidence is drawn as a per-file diff", async () => {
    await page.click(".back");
    await page.waitForSelector(".sheep-row");
    await page.$$eval(".sheep-link", (links) => (links.find((a) => a.textContent === "beta") as HTMLElement | undefined)?.click());
    await waitText(".sheep-title", "beta");
    await sendPrompt(
      directive({
        rounds: [[{ name: "write", arguments: { path: "fresh.txt", content: "one\ntwo\n" } }]],
        afterTool: "beta is done",
      }),
    );
    await waitText(".conv-answer .conv-text", "beta is done", 120_000);
    await page.waitForSelector("details.prompt .ps-completed");
    await page.click("details.prompt summary");
    await page.waitForSelector("details.prompt .file");
    assert.equal(await page.$eval("details.prompt .diff-summary", (e) => e.textContent), "+2 −0 in 1 file");
    assert.deepEqual(await texts("details.prompt .file .line.add"), ["+one", "+two"]);
  });

  it("a close from the page asks first; confirmed with only 'even if it holds work' ticked, it closes the pane and removes the worktree; nothing in the page misbehaved", async () => {
    const panes = tmuxPanes(world!.tmux.socket);
    const worktree = ((await scene.state(beta.agentId)) as { worktree?: { path: string } }).worktree?.path;
    assert.ok(worktree && existsSync(worktree), "beta works in a worktree of its own");
    await page.click("button.danger");
    await page.waitForSelector("dialog#confirm[open]");
    assert.equal(await page.$eval("dialog#confirm .dialog-title", (e) => e.textContent), "Close beta?");
    await page.click("#confirm-force");
    await page.click("dialog#confirm button[value=ok]");
    await waitText("#announce", "beta closed.");
    await page.waitForFunction(() => ![...document.querySelectorAll(".sheep-link")].some((a) => a.textContent === "beta"), { timeout: 30_000, polling: 100 });
    for (let i = 0; i < 100 && (await panes()).includes(beta.paneId); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal((await panes()).includes(beta.paneId), false, "beta's pane is gone");
    assert.equal(pidAlive(beta.pid), false, "beta's pi has ended");
    assert.equal(existsSync(worktree), false, "its worktree, work and all, is removed as the box said");
    assert.equal((await scene.state(alpha.agentId)).paneAlive, true, "alpha is untouched");
    assert.deepEqual(errors, [], "no script error in the page");
    assert.deepEqual(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations), [], "the page never met its own CSP");
  });
});
