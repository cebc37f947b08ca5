/**
 * The panel's history, the work from the page and the start form, in Debian's chromium on the page
 * a real pi shepherd serves, with real pi sheep in a private tmux on the scripted model: an isolated
 * sheep's written file lands from the page into the repository as the tool's land does (its own
 * message, squashed) and Sync brings the user's commit into its worktree; a closed sheep's answer and
 * evidence are still on its page after a reload, and Resume from there continues its conversation;
 * the start form lists the real definitions, a user agent file this test writes among them.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { E2eWorld } from "../support/e2e-world.ts";
import { git } from "../support/git-repo.ts";
import { launchChromium, openPage, type PageTrouble, panelHerd, type StartedSheep } from "../support/panel-browser.ts";
import type { Scene } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";

type Call = { name: string; arguments: unknown };
const write = (path: string, content: string): Call => ({ name: "write", arguments: { path, content } });

describe("the panel's history and work in a real browser", { timeout: 900_000 }, () => {
  let world: E2eWorld | undefined;
  let scene: Scene;
  let browser: Browser;
  let page: Page;
  let trouble: PageTrouble;
  let url: string;
  let alpha: StartedSheep;
  let beta: StartedSheep;

  const typePrompt = async (text: string) => {
    await page.locator("#prompt-text").fill(text);
    await page.locator("#prompt-text").press("Control+Enter");
    await page.locator(".prompt-form .note", { hasText: /^Sent as p_\w+\.$/ }).waitFor();
  };
  const openSheep = async (label: string) => {
    if (await page.locator(".back").isVisible()) await page.locator(".back").click();
    await page.locator(".sheep-link", { hasText: label }).click();
    await page.locator(".sheep-title", { hasText: label }).waitFor();
  };

  before(async () => {
    ({ world, scene, alpha, beta, url } = await panelHerd("panel-history"));
    browser = await launchChromium();
    world.defer(() => browser.close());
    ({ page, trouble } = await openPage(browser));
    await page.goto(url);
    await page.locator(".sheep-row").nth(1).waitFor();
  });

  after(async () => {
    await world?.cleanup();
  });

  it("Land from the page (squash, a message of one's own) brings the isolated sheep's file into the repository, as the tool's land does", async () => {
    await openSheep("beta");
    await typePrompt(directive({ rounds: [[write("landed.txt", "from beta\n")]], afterTool: "beta wrote it" }));
    await page.locator(".conv-answer .conv-text", { hasText: "beta wrote it" }).waitFor({ timeout: 120_000 });
    const box = page.locator("section.work");
    await box.waitFor();
    await box.locator(".branch-state", { hasText: "1 uncommitted" }).waitFor();
    const before = (await git(world!.cwd, "rev-parse", "HEAD")).trim();
    await box.locator("#land-message").fill("feat: beta's file, landed from the page");
    await box.locator("#land-squash").check();
    await box.locator("button[data-action=land]").click();
    await box.locator(".note", { hasText: /^Landed shepherd\/beta-\w+ into main \([0-9a-f]{12}\)\.$/ }).waitFor();
    assert.equal((await git(world!.cwd, "show", "HEAD:landed.txt")).toString(), "from beta\n", "the file is in the user's branch");
    assert.equal((await git(world!.cwd, "log", "-1", "--format=%s")).trim(), "feat: beta's file, landed from the page");
    assert.equal((await git(world!.cwd, "rev-parse", "HEAD~1")).trim(), before, "one commit on top: a squash");
    assert.equal((await git(world!.cwd, "status", "--porcelain")).trim(), "", "the user's checkout is clean, its files updated");
    await box.locator(".branch-state", { hasText: "landed" }).waitFor();
    // The tool's own rule, said as the tool says it: nothing more to land.
    await box.locator("button[data-action=land]").click();
    await box.locator(".note", { hasText: "Nothing to land: your branch holds it all." }).waitFor();
    assert.equal(((await scene.ok({ action: "land", agentId: beta.agentId })).details.landed as { landed: boolean }).landed, false, "the tool's land agrees");
  });

  it("Sync from the page brings the user's new commit into the sheep's worktree, as the tool's sync does", async () => {
    const wt = ((await scene.ok({ action: "status", agentId: beta.agentId })).details.status as { worktree: { path: string; branch: string } }).worktree;
    await writeFile(join(world!.cwd, "from-user.txt"), "the user's\n");
    await git(world!.cwd, "add", "from-user.txt");
    await git(world!.cwd, "commit", "--quiet", "-m", "user: a file for beta");
    const box = page.locator("section.work");
    // The branch's state is read with the page: a reload of its facts shows it behind.
    await page.reload();
    await box.locator(".branch-state", { hasText: "1 behind main" }).waitFor();
    await box.locator("button[data-action=sync]").click();
    await box.locator(".note", { hasText: `Synced main into ${wt.branch}.` }).waitFor();
    assert.equal((await git(wt.path, "show", "HEAD:from-user.txt")).toString(), "the user's\n", "the worktree's branch has the user's commit");
    assert.equal((await git(wt.path, "status", "--porcelain")).trim(), "", "a clean merge in the worktree");
    await box.locator(".branch-state", { hasText: "0 behind main" }).waitFor();
  });

  it("a closed sheep's answer and evidence stay on its page after a reload, found with the history's filter", async () => {
    await openSheep("alpha");
    await typePrompt(directive({ rounds: [[write("alpha-notes.txt", "counted\n")]], afterTool: "ALPHA-HIST: 40 sheep counted" }));
    await page.locator(".conv-answer .conv-text", { hasText: "ALPHA-HIST" }).waitFor({ timeout: 120_000 });
    await scene.ok({ action: "close", agentId: alpha.agentId });
    // Reloaded on its page: a closed sheep's page is drawn from what the shepherd kept.
    await page.reload();
    await page.locator(".sheep-title", { hasText: "alpha" }).waitFor();
    await page.locator("pre.answer", { hasText: "ALPHA-HIST: 40 sheep counted" }).waitFor();
    assert.match((await page.locator(".meta").textContent()) ?? "", /session file.*session\.jsonl/);
    // Its evidence: the prompt's diff, file by file.
    await page.locator("details.prompt summary").last().click();
    await page.locator("details.prompt", { hasText: "alpha-notes.txt" }).waitFor();
    assert.match((await page.locator("#totals").textContent()) ?? "", /today/);
    // The herd lists it again only when asked for closed sheep.
    await page.locator(".back").click();
    await page.locator(".sheep-row").first().waitFor();
    assert.deepEqual(await page.locator(".sheep-row .sheep-link").allTextContents(), ["beta"], "live only by default");
    await page.locator("#filter-state").selectOption("closed");
    await page.locator(".sheep-row .sheep-link", { hasText: "alpha" }).waitFor();
    assert.deepEqual(await page.locator(".sheep-row .sheep-link").allTextContents(), ["alpha"]);
    assert.equal(await page.locator(".sheep-row", { hasText: "alpha" }).locator("td").nth(0).textContent(), "closed");
    await page.locator("#filter-label").fill("nobody");
    await page.locator("#fleet-hosts .empty", { hasText: "No sheep kept match this filter." }).waitFor();
    await page.locator("#filter-label").fill("ALP");
    await page.locator(".sheep-row .sheep-link", { hasText: "alpha" }).waitFor();
    // Resume from its page: a new sheep on its session file, as the tool's start with resume makes one.
    await page.locator(".sheep-link", { hasText: "alpha" }).click();
    await page.locator("section.work button[data-action=resume]").click();
    await page.waitForFunction((old) => location.hash.startsWith("#/sheep/") && !location.hash.endsWith(old), alpha.agentId);
    const resumed = decodeURIComponent((await page.evaluate(() => location.hash)).slice("#/sheep/".length));
    await page.locator(".sheep-title", { hasText: "alpha" }).waitFor();
    const herd = (await scene.ok({ action: "herd" })).details.agents as { agentId: string; label: string }[];
    assert.ok(
      herd.some((x) => x.agentId === resumed && x.label === "alpha"),
      `the tool's herd has the resumed sheep ${resumed}: ${JSON.stringify(herd)}`,
    );
    await page.locator(".conv-answer .conv-text", { hasText: "ALPHA-HIST: 40 sheep counted" }).waitFor({ timeout: 60_000 });
    await page.locator(".back").click();
    await page.locator("#filter-state").selectOption("live");
    await page.locator(".sheep-row .sheep-link", { hasText: "alpha" }).waitFor();
    assert.deepEqual(trouble.errors, []);
    assert.deepEqual(await trouble.violations(), []);
  });

  it("the start form lists the real definitions, a user agent file among them, with its source and description", async () => {
    await mkdir(join(world!.agentDir, "agents"), { recursive: true });
    await writeFile(join(world!.agentDir, "agents", "historian.md"), "---\nname: historian\ndescription: keeps the <b>records</b>\n---\nKeep records.\n");
    if (await page.locator(".back").isVisible()) await page.locator(".back").click();
    await page.locator("details.start summary").click();
    await page.locator("#start-agent option[value=historian]").waitFor({ state: "attached" });
    const defined = ((await scene.ok({ action: "sheep" })).details.agents as { name: string }[]).map((a) => a.name);
    assert.ok(defined.includes("historian"));
    assert.deepEqual(await page.locator("#start-agent option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)), defined);
    await page.locator("#start-agent").selectOption("historian");
    await page.locator(".agent-about", { hasText: "user agent: keeps the <b>records</b>" }).waitFor();
    assert.equal(await page.locator(".agent-about b").count(), 0, "the description is text");
    assert.deepEqual(await page.locator("#start-host option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)), ["local"]);
    assert.equal(await page.locator("#start-placement").evaluate((el) => el.tagName), "SELECT");
  });
});
