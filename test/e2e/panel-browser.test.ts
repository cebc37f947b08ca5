/**
 * The panel in a real browser: Debian's chromium, headless, on the page a real pi shepherd serves
 * (`/shepherd panel on`), with real pi sheep in a private tmux on the scripted model. Everything
 * is done as a person does it, by typing and clicking in the page: the herd is listed, a prompt is
 * answered and its answer appears without a reload, a sheep's question is answered and its tool
 * gets the reply, hostile answers stay text, an interrupt stops a running turn, an isolated sheep's
 * evidence is drawn file by file, a sheep is started, a close closes the pane, and a stream lost to
 * a /reload comes back by itself and says so.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser, Page, Response } from "playwright-core";
import type { E2eWorld } from "../support/e2e-world.ts";
import { git, lines } from "../support/git-repo.ts";
import { pidAlive } from "../support/leftovers.ts";
import { launchChromium, openPage, type PageTrouble, panelHerd, type StartedSheep, XSS } from "../support/panel-browser.ts";
import { type Scene, tmuxPanes } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";

type Call = { name: string; arguments: unknown };
const write = (path: string, content: string): Call => ({ name: "write", arguments: { path, content } });
const edit = (path: string, oldText: string, newText: string): Call => ({ name: "edit", arguments: { path, edits: [{ oldText, newText }] } });

describe("the panel in a real browser", { timeout: 900_000 }, () => {
  let world: E2eWorld | undefined;
  let scene: Scene;
  let model: ScriptedModel;
  let browser: Browser;
  let page: Page;
  let trouble: PageTrouble;
  let url: string;
  let alpha: StartedSheep;
  let beta: StartedSheep;

  /** Sends a prompt from the sheep's page: typed into its box, sent with Ctrl+Enter. */
  const typePrompt = async (text: string) => {
    await page.locator("#prompt-text").fill(text);
    await page.locator("#prompt-text").press("Control+Enter");
    await page.locator(".prompt-form .note", { hasText: /^Sent as p_\w+\.$/ }).waitFor();
  };
  /** The sheep's page, reached by its link in the herd (the fleet), as a person gets there. */
  const openSheep = async (label: string) => {
    if (await page.locator(".back").isVisible()) await page.locator(".back").click();
    await page.locator(".sheep-link", { hasText: label }).click();
    await page.locator(".sheep-title", { hasText: label }).waitFor();
  };
  const answers = () => page.locator(".conv-answer .conv-text").allTextContents();

  before(async () => {
    ({ world, scene, model, alpha, beta, url } = await panelHerd("panel-browser"));
    browser = await launchChromium();
    world.defer(() => browser.close());
    ({ page, trouble } = await openPage(browser));
  });

  after(async () => {
    await world?.cleanup();
  });

  it("trades the token for a session (an HttpOnly cookie and a key), takes it out of the address, and lists both sheep under their host", async () => {
    await page.goto(url);
    await page.locator(".sheep-row").nth(1).waitFor();
    assert.equal(await page.evaluate(() => location.hash), "", "the token is gone from the address");
    assert.doesNotMatch(await page.evaluate(() => location.href), /token/);
    assert.equal(await page.evaluate(() => document.cookie), "", "the session cookie is HttpOnly: no script reads it");
    // The tab's icon is the page's own, asked for without a session (issue 31, item 24): no 401, nothing logged.
    const icon = await page.evaluate(async () => {
      const r = await fetch("/favicon.ico", { credentials: "omit" });
      return { status: r.status, type: r.headers.get("content-type") };
    });
    assert.deepEqual(icon, { status: 200, type: "image/svg+xml" });
    await page.waitForTimeout(300);
    assert.deepEqual(trouble.failed, [], "no request of the page was refused");
    assert.deepEqual(trouble.console, [], "the browser logged no error");
    // The browser sends the cookie by itself, as it would to any port of 127.0.0.1: alone it opens nothing.
    assert.equal(await page.evaluate(async () => (await fetch("/api/v1/sheep")).status), 401, "the cookie without the page's key");
    assert.deepEqual(await page.locator(".host h3").allTextContents(), ["local · 2 sheep"]);
    assert.deepEqual(await page.locator(".sheep-row .sheep-link").allTextContents(), ["alpha", "beta"]);
    assert.deepEqual(await page.locator(".sheep-row td:nth-child(2)").allTextContents(), ["idle", "idle"]);
    assert.equal(await page.locator(".sheep-row", { hasText: "beta" }).locator(".tag").textContent(), "isolated");
    assert.match((await page.locator("#totals").textContent()) ?? "", /^2 sheep \(2 idle\)/);
    await page.locator("#conn", { hasText: "Live" }).waitFor();
  });

  it("a prompt typed in the page is answered, and the answer appears without a reload", async () => {
    // By keyboard alone: Tab to alpha's link, Enter; the focus goes to the sheep's heading.
    for (let i = 0; i < 12 && (await page.evaluate(() => document.activeElement?.textContent)) !== "alpha"; i++) await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.locator(".sheep-title", { hasText: "alpha" }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.className), "sheep-title", "the focus follows to the sheep");
    await page.evaluate(() => {
      (window as unknown as { __sameDocument: boolean }).__sameDocument = true;
    });
    await typePrompt(directive({ reply: "Counted 40 sheep in the north field", chunks: 3, tag: "PAGE-1" }));
    await page.locator(".conv-answer .conv-text", { hasText: "Counted 40 sheep in the north field" }).waitFor();
    await page.locator("details.prompt .ps-completed").first().waitFor();
    assert.equal(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument), true, "the same document: no reload");
    assert.equal(model.log.filter((l) => l.tag === "PAGE-1").length, 1, "the prompt reached the sheep's model once");
    assert.deepEqual(await answers(), ["Counted 40 sheep in the north field"]);
  });

  it("an answer holding an <img onerror>, a <script> and javascript: links is drawn as text: nothing runs, no element is made", async () => {
    await typePrompt(directive({ reply: `Here it is: ${XSS}`, tag: "XSS" }));
    await page.locator(".conv-answer .conv-text", { hasText: "Here it is:" }).waitFor();
    assert.equal((await answers()).at(-1), `Here it is: ${XSS}`, "the answer exactly, as text");
    // Give an image's error handler every chance to run, had an image been made.
    await page.waitForTimeout(500);
    const found = await page.evaluate(() => ({
      xss: (window as unknown as { __xss?: string }).__xss,
      images: document.images.length,
      scripts: [...document.scripts].map((s) => s.getAttribute("src")),
      jsLinks: document.querySelectorAll('a[href^="javascript:" i]').length,
      handlers: [...document.querySelectorAll("*")].filter((el) => [...el.attributes].some((a) => a.name.startsWith("on"))).length,
      links: [...document.links].map((a) => a.getAttribute("href")),
    }));
    assert.equal(found.xss, undefined, "no handler ran");
    assert.deepEqual([found.images, found.jsLinks, found.handlers], [0, 0, 0], "no image, no javascript: link, no handler attribute");
    assert.deepEqual(found.scripts, ["/assets/app.js"], "the page's own module is its only script");
    assert.ok(
      found.links.every((href) => href?.startsWith("#")),
      `every link is the page's own: ${found.links.join(", ")}`,
    );
    // The same text in the prompts list (the prompt's first line) and on the live screen is text too.
    assert.match((await page.locator("details.prompt .prompt-line").first().textContent()) ?? "", /<img src=x onerror=/);
    assert.deepEqual(trouble.errors, [], "no script error in the page");
  });

  it("a prompt on its way is sent once, however often Ctrl+Enter is pressed; what the person types on meanwhile stays in the box", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const route = "**/api/v1/sheep/*/prompt";
    let posts = 0;
    await page.route(route, async (r) => {
      posts++;
      await held;
      await r.continue();
    });
    const box = page.locator("#prompt-text");
    await box.fill(directive({ reply: "Held at the gate, then answered", tag: "HELD" }));
    await box.press("Control+Enter");
    await page.locator(".prompt-form .note", { hasText: "Sending…" }).waitFor();
    // Impatient: Ctrl+Enter again while it is on its way. Nothing more is sent, and Send waits.
    await box.press("Control+Enter");
    assert.equal(await page.locator(".prompt-form button[type=submit]").isDisabled(), true, "Send is off while the prompt is on its way");
    await page.keyboard.type("and the next thought");
    release();
    await page.locator(".prompt-form .note", { hasText: /^Sent as p_\w+\.$/ }).waitFor();
    await page.unroute(route);
    assert.equal(posts, 1, "one prompt sent, however often it was asked for meanwhile");
    assert.equal(await page.locator(".prompt-form button[type=submit]").isEnabled(), true, "Send is back");
    assert.equal(await box.inputValue(), "and the next thought", "the words typed meanwhile are kept");
    await page.locator(".conv-answer .conv-text", { hasText: "Held at the gate, then answered" }).waitFor();
    assert.equal(model.log.filter((l) => l.tag === "HELD").length, 1, "the prompt was sent once");
  });

  it("a sheep's question is answered from the page by keys, its shepherd_message call returns the reply, and the herd moving meanwhile takes no key from the reply box", async () => {
    const question = `North or south pasture? ${XSS}`;
    await typePrompt(
      directive({
        tool: { name: "shepherd_message", arguments: { kind: "question", text: question, awaitReply: true, timeout: 300 } },
        afterTool: "Going to the south pasture",
        tag: "ASK",
      }),
    );
    const item = page.locator(".message.msg-question");
    const box = item.locator("textarea");
    await item.locator(".reply-form").waitFor();
    assert.equal(await item.locator(".msg-text").textContent(), question, "the question as its text, exactly");
    // As a person: a click into the box, then keys. Halfway, the shepherd queues alpha a follow-up,
    // and the page redraws alpha (its prompts, then its messages) while the person types on.
    const seen: { path: string; body: () => Promise<unknown>; done: Promise<unknown> }[] = [];
    const onResponse = (r: Response) => {
      seen.push({ path: new URL(r.url()).pathname, body: () => r.json().catch(() => undefined), done: r.finished() });
    };
    page.on("response", onResponse);
    await box.click();
    await page.keyboard.type("South, ");
    const promptsBefore = await page.locator("details.prompt").count();
    await scene.ok({
      action: "prompt",
      agentId: alpha.agentId,
      message: directive({ reply: "The gate is shut behind them", tag: "FOLLOW" }),
      deliverAs: "followUp",
    });
    const detailPath = `/api/v1/sheep/${alpha.agentId}`;
    let redrawn: Promise<unknown> | undefined;
    for (let tries = 0; !redrawn && tries < 600; tries++) {
      const i = await (async () => {
        for (const [n, r] of seen.entries()) {
          if (r.path === detailPath && ((await r.body()) as { prompts?: unknown[] } | undefined)?.prompts?.length === promptsBefore + 1) return n;
        }
        return -1;
      })();
      redrawn = i < 0 ? undefined : seen.slice(i + 1).find((r) => r.path === `${detailPath}/messages`)?.done;
      if (!redrawn) await page.waitForTimeout(100);
    }
    page.off("response", onResponse);
    assert.ok(redrawn, "the page read alpha's prompts with the follow-up, then its messages");
    await redrawn;
    // The messages just read are drawn in the task after the answer's body: one more turn of the page's loop.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
    await page.keyboard.type("by the river");
    assert.equal(await box.inputValue(), "South, by the river", "every key went into the reply box, the redraw in between");
    assert.equal(await box.evaluate((el) => el === document.activeElement), true, "the reply box kept the focus");
    await page.keyboard.press("Control+Enter");
    await page.locator(".conv-answer .conv-text", { hasText: "Going to the south pasture" }).waitFor({ timeout: 120_000 });
    const followup = model.log.find((l) => l.tag === "ASK" && l.kind === "tool-followup");
    assert.ok(followup, "the turn went on after the reply");
    assert.match(followup.toolTexts.at(-1) ?? "", /South, by the river/, "the tool returned the reply typed in the page");
    await item.locator(".msg-head", { hasText: "answered" }).waitFor();
    assert.equal(await item.locator(".reply-form").isHidden(), true, "an answered question has no reply box");
    // Its card says what it was told, not only that it was answered (issue 31, item 24).
    await item.locator(".msg-reply .reply-text").waitFor();
    assert.equal(await item.locator(".msg-reply .reply-text").textContent(), "South, by the river");
    assert.equal(await item.evaluate((el) => el === document.activeElement), true, "the focus left with the box stays on its message");
    // The follow-up ran after it, and alpha is idle again for what comes next.
    await page.locator(".conv-answer .conv-text", { hasText: "The gate is shut behind them" }).waitFor({ timeout: 120_000 });
    await page.locator(".sheep-head .state-idle").waitFor();
  });

  it("an interrupt from the page asks first; confirmed, the running turn stops and its prompt settles cancelled", async () => {
    await typePrompt(directive({ reply: "too late", delayMs: 120_000, tag: "LONG" }));
    await page.locator(".sheep-head .state-working").waitFor();
    await page.locator("button", { hasText: "Interrupt" }).click();
    const dialog = page.locator("dialog#confirm");
    assert.match((await dialog.locator(".dialog-title").textContent()) ?? "", /^Interrupt alpha\?$/);
    await dialog.locator("button[value=ok]").click();
    await page.locator("details.prompt").first().locator(".ps-cancelled").waitFor();
    await page.locator(".sheep-head .state-idle").waitFor();
    assert.equal((await scene.state(alpha.agentId)).paneAlive, true, "the sheep is still there");
    assert.ok(!(await answers()).includes("too late"), "the interrupted turn never answered");
  });

  it("what a person selected in the conversation stays selected while new turns come in", async () => {
    const first = page.locator(".conv-answer .conv-text", { hasText: "Counted 40 sheep in the north field" });
    await first.selectText();
    const selected = () => page.evaluate(() => getSelection()?.toString());
    assert.equal(await selected(), "Counted 40 sheep in the north field");
    await scene.prompt(alpha.agentId, directive({ reply: "One more lamb by the gate", tag: "MORE" }));
    await page.locator(".conv-answer .conv-text", { hasText: "One more lamb by the gate" }).waitFor({ timeout: 120_000 });
    await page.locator(".sheep-head .state-idle").waitFor();
    assert.equal(await selected(), "Counted 40 sheep in the north field", "the earlier turn kept its nodes, and the selection in it");
  });

  it("what a person selected in the sheep's facts stays selected while its other facts change", async () => {
    const cwd = page.locator(".meta dd code", { hasText: world!.cwd });
    await cwd.selectText();
    const selected = () => page.evaluate(() => getSelection()?.toString());
    assert.equal(await selected(), world!.cwd);
    await scene.prompt(alpha.agentId, directive({ reply: "Still counting", delayMs: 1500, tag: "FACTS" }));
    await page.locator(".sheep-head .state-working").waitFor();
    await page.locator(".conv-answer .conv-text", { hasText: "Still counting" }).waitFor({ timeout: 120_000 });
    await page.locator(".sheep-head .state-idle").waitFor();
    assert.equal(await selected(), world!.cwd, "the cwd kept its node, and the selection in it");
  });

  it("an isolated sheep's evidence is drawn as a per-file diff; the user's checkout never sees it", async () => {
    await openSheep("beta");
    assert.match((await page.locator(".meta").textContent()) ?? "", /worktree.*pi-shepherd\/beta|worktree/);
    await typePrompt(directive({ rounds: [[write("fresh.txt", "one\ntwo\n")], [edit("a.txt", "line 2", "changed by beta")]], afterTool: "beta is done" }));
    await page.locator(".conv-answer .conv-text", { hasText: "beta is done" }).waitFor({ timeout: 120_000 });
    const prompt = page.locator("details.prompt").first();
    await prompt.locator(".ps-completed").waitFor();
    await prompt.locator("summary").click();
    await prompt.locator(".file").nth(1).waitFor();
    assert.equal(await prompt.locator(".diff-summary").textContent(), "+3 −1 in 2 files");
    const files = prompt.locator(".file");
    assert.deepEqual(await files.evaluateAll((els) => els.map((e) => e.getAttribute("data-path"))), ["a.txt", "fresh.txt"]);
    assert.deepEqual(
      [await files.nth(0).locator(".file-status").textContent(), await files.nth(1).locator(".file-status").textContent()],
      ["modified", "added"],
    );
    assert.deepEqual(await files.nth(0).locator(".line.del").allTextContents(), ["-line 2"]);
    assert.deepEqual(await files.nth(0).locator(".line.add").allTextContents(), ["+changed by beta"]);
    assert.deepEqual(await files.nth(1).locator(".line.add").allTextContents(), ["+one", "+two"]);
    assert.equal(await readFile(join(world!.cwd, "a.txt"), "utf8"), lines(3), "the user's checkout is untouched");
    assert.equal(await git(world!.cwd, "status", "--porcelain"), "");
  });

  it("a path or a prompt with a bidi override or right-to-left letters reorders nothing beside it: the mark is shown, the counts read left to right", async () => {
    const rlo = "\u202E";
    await typePrompt(
      directive({
        rounds: [[write(`evil${rlo}gpj.exe`, "one\ntwo\nthree\n")], [write("\u05E9\u05DC\u05D5\u05DD", "x\n")]],
        afterTool: `bidi ${rlo}done`,
        tag: `BIDI${rlo}flip`,
      }),
    );
    await page.locator(".conv-answer .conv-text", { hasText: "bidi" }).waitFor({ timeout: 120_000 });
    const prompt = page.locator("details.prompt").first();
    await prompt.locator(".ps-completed").waitFor();
    assert.match((await prompt.locator(".prompt-line").textContent()) ?? "", /"evil⟨U\+202E⟩gpj\.exe"/, "the prompt's line shows the override");
    await prompt.locator("summary").click();
    await prompt.locator(".file").nth(1).waitFor();
    const paths = await prompt.locator(".file-path").allTextContents();
    assert.deepEqual(paths.sort(), ["evil⟨U+202E⟩gpj.exe", "\u05E9\u05DC\u05D5\u05DD"].sort());
    // Where each thing is drawn, left to right: the path before its counts, "+" before its digit, + before −.
    // A string, not a function: the test's compiler would name its inner functions with a helper the page lacks.
    const order = (await page.evaluate(`(() => {
      const x = (node, at) => {
        const r = document.createRange();
        r.setStart(node, at);
        r.setEnd(node, at + 1);
        return r.getBoundingClientRect().left;
      };
      const left = (el) => el.getBoundingClientRect().left;
      const heads = [...document.querySelector("details.prompt").querySelectorAll(".file-head")].map((head) => {
        const path = head.querySelector(".file-path");
        const ins = head.querySelector(".ins");
        const del = head.querySelector(".del");
        const plus = ins.firstChild;
        return { pathBeforeCounts: left(path) < left(ins), insBeforeDel: left(ins) < left(del), plusBeforeDigit: x(plus, 0) < x(plus, 1) };
      });
      // The prompt's id and times after its line read as written: "p_…" from the left.
      const id = document.querySelector("details.prompt summary .prompt-line ~ .muted").firstChild;
      return { heads, idInOrder: x(id, 0) < x(id, 1) && x(id, 1) < x(id, 2) };
    })()`)) as { heads: Record<string, boolean>[]; idInOrder: boolean };
    assert.equal(order.heads.length, 2);
    for (const head of order.heads) assert.deepEqual(head, { pathBeforeCounts: true, insBeforeDel: true, plusBeforeDigit: true });
    assert.equal(order.idInOrder, true, "the prompt's id after its line is not reversed");
    assert.deepEqual(trouble.errors, []);
  });

  it("a running turn's steps appear while it runs, though nothing is told until it ends", async () => {
    await openSheep("alpha");
    await typePrompt(
      directive({ rounds: [[write("step-1.txt", "one\n")], [write("step-2.txt", "two\n")]], afterTool: "steps done", delayMs: 8000, tag: "STEPS" }),
    );
    await page.locator(".conv-line", { hasText: "step-1.txt" }).waitFor({ timeout: 60_000 });
    assert.equal(existsSync(join(world!.cwd, "step-2.txt")), false, "its first step is shown before its second is taken");
    assert.equal(await page.locator(".sheep-head .state-working").count(), 1, "while it still works");
    await page.locator(".conv-answer .conv-text", { hasText: "steps done" }).waitFor({ timeout: 120_000 });
  });

  it("what a person selected in the herd's table stays selected while another sheep's row changes", async () => {
    if (await page.locator(".back").isVisible()) await page.locator(".back").click();
    await page.locator(".sheep-row").nth(1).waitFor();
    const betaAgent = page.locator(".sheep-row", { hasText: "beta" }).locator("th .muted");
    await betaAgent.selectText();
    const selected = () => page.evaluate(() => getSelection()?.toString());
    const before = await selected();
    assert.match(before ?? "", /echo/);
    await scene.prompt(alpha.agentId, directive({ reply: "alpha once more", delayMs: 1500, tag: "ROW" }));
    const alphaRow = page.locator(".sheep-row", { hasText: "alpha" });
    await alphaRow.locator(".state-working").waitFor();
    assert.equal(await selected(), before, "beta's row kept its nodes, and the selection in it");
    await alphaRow.locator(".state-idle").waitFor({ timeout: 60_000 });
    const idleSeen = Date.now();
    assert.equal(await selected(), before);
    // "For" counts from its answer, not from its start minutes ago (issue 31, item 19).
    const since = Date.parse((await alphaRow.locator("time.since").getAttribute("datetime")) ?? "");
    const { createdAt } = (await scene.ok({ action: "status", agentId: alpha.agentId })).details.status as { createdAt: string };
    assert.ok(since > Date.parse(createdAt), `idle since ${new Date(since).toISOString()}, not its start ${createdAt}`);
    assert.ok(idleSeen - since < 15_000, `idle since ${new Date(since).toISOString()}: its answer, seconds before ${new Date(idleSeen).toISOString()}`);
  });

  it("the start form offers the agent definitions there are; a sheep started from it is listed and opened; a start the tool refuses shows its code", async () => {
    if (await page.locator(".back").isVisible()) await page.locator(".back").click();
    await page.locator("details.start summary").click();
    // A list of the real definitions, as the tool's sheep lists them, not a free text field (issue 31, item 24).
    const defined = ((await scene.ok({ action: "sheep" })).details.agents as { name: string }[]).map((a) => a.name);
    await page.locator("#start-agent option[value=echo]").waitFor({ state: "attached" });
    assert.equal(await page.locator("#start-agent").evaluate((el) => el.tagName), "SELECT");
    assert.deepEqual(await page.locator("#start-agent option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)), defined);
    assert.match((await page.locator("#start-agent option[value=echo]").textContent()) ?? "", /^echo — answers as scripted$/);
    await page.locator("#start-agent").selectOption("echo");
    await page.locator("#start-label").fill("beta");
    await page.locator(".start-form button[type=submit]").click();
    await page.locator(".start-form .note", { hasText: /^\[invalid_params\] label "beta" is already used/ }).waitFor();
    await page.locator("#start-label").fill("gamma");
    await page.locator(".start-form button[type=submit]").click();
    await page.locator(".sheep-title", { hasText: "gamma" }).waitFor({ timeout: 120_000 });
    await page.locator(".sheep-head dt", { hasText: "agent" }).waitFor();
    assert.equal(await page.locator("button.danger-soft", { hasText: "Interrupt" }).isDisabled(), true, "gamma runs no prompt: nothing to interrupt");
    await page.locator(".back").click();
    await page.locator(".sheep-row", { hasText: "gamma" }).waitFor();
    assert.deepEqual(await page.locator(".sheep-row .sheep-link").allTextContents(), ["alpha", "beta", "gamma"]);
  });

  it("a close from the page asks first; confirmed, it closes the sheep's pane and the herd no longer lists it", async () => {
    const panes = tmuxPanes(world!.tmux.socket);
    await openSheep("alpha");
    await page.locator("button", { hasText: "Close…" }).click();
    const dialog = page.locator("dialog#confirm");
    await dialog.waitFor();
    assert.match((await dialog.locator(".dialog-title").textContent()) ?? "", /^Close alpha\?$/);
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    assert.ok((await panes()).includes(alpha.paneId), "cancelled: the pane is still there");
    await page.locator("button", { hasText: "Close…" }).click();
    const screens: string[] = [];
    const onRequest = (r: { url(): string }) => {
      if (new URL(r.url()).pathname === `/api/v1/sheep/${alpha.agentId}/screen`) screens.push(r.url());
    };
    page.on("request", onRequest);
    await dialog.locator("button[value=ok]").click();
    await page.locator("#announce", { hasText: "alpha closed." }).waitFor();
    // Longer than one of the screen's reads (every 2 s): a closed sheep's pane is never asked for (issue 31, item 24).
    await page.waitForTimeout(2500);
    page.off("request", onRequest);
    assert.deepEqual(screens, [], "no read of the closed sheep's screen");
    assert.deepEqual(
      trouble.failed.filter((f) => f.includes(alpha.agentId)),
      [],
      "nothing about the closed sheep was refused",
    );
    await page.locator(".sheep-row").first().waitFor();
    await page.locator(".sheep-row", { hasText: "alpha" }).waitFor({ state: "detached" });
    assert.deepEqual(await page.locator(".sheep-row .sheep-link").allTextContents(), ["beta", "gamma"], "the fleet no longer lists alpha");
    for (let i = 0; i < 100 && (await panes()).includes(alpha.paneId); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal((await panes()).includes(alpha.paneId), false, "alpha's pane is gone");
    assert.equal(pidAlive(alpha.pid), false, "alpha's pi has ended");
    assert.equal((await scene.state(beta.agentId)).paneAlive, true, "beta is untouched");
  });

  it("at 420 px wide nothing is wider than the window: the herd's rows are cards, a sheep's page fits", async () => {
    await page.setViewportSize({ width: 420, height: 800 });
    try {
      if (await page.locator(".back").isVisible()) await page.locator(".back").click();
      await page.locator(".sheep-row").first().waitFor();
      const width = () => page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok((await width()) <= 420, `the herd is ${await width()} px wide`);
      assert.equal(
        await page
          .locator(".sheep-row")
          .first()
          .locator("td")
          .nth(1)
          .evaluate((el) => getComputedStyle(el, "::before").content),
        '"Working on: "',
        "each cell names its column",
      );
      await page.locator(".sheep-link", { hasText: "beta" }).click();
      await page.locator(".sheep-title", { hasText: "beta" }).waitFor();
      await page.locator("details.prompt").first().waitFor();
      assert.ok((await width()) <= 420, `beta's page is ${await width()} px wide`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it("a stream lost to a /reload of the shepherd comes back by itself, says so, and is live again", async () => {
    await openSheep("beta");
    await page.evaluate(() => {
      const w = window as unknown as { __conn: string[] };
      w.__conn = [];
      const conn = document.getElementById("conn")!;
      new MutationObserver(() => w.__conn.push(conn.dataset.state ?? "")).observe(conn, { attributes: true, attributeFilter: ["data-state"] });
    });
    // The shepherd's own turns (the question was pushed to it) are over before it reloads.
    await scene.shepherd.idle();
    const reattached = scene.shepherd.next((e) => e.type === "extension_ui_request" && e.method === "notify" && /re-attached/.test(String(e.message)), 60_000);
    await scene.shepherd.command({ type: "prompt", message: "/test-reload" });
    await reattached;
    await page.locator("#conn", { hasText: "Reconnected" }).waitFor({ timeout: 60_000 });
    const seen = await page.evaluate(() => (window as unknown as { __conn: string[] }).__conn);
    assert.ok(seen.includes("lost"), `the page said the stream was lost: ${seen.join(", ")}`);
    await typePrompt(directive({ reply: "still here after the reload", tag: "AFTER" }));
    await page.locator(".conv-answer .conv-text", { hasText: "still here after the reload" }).waitFor();
    assert.deepEqual(trouble.errors, [], "no script error in the page");
    assert.deepEqual(await trouble.violations(), [], "the page never met its own CSP");
  });
});
