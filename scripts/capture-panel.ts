/**
 * npm run screens:panel: screenshots of the panel for the README, taken in Debian's chromium
 * (headless) on the page a real pi shepherd serves, with three real pi sheep on the scripted
 * model in a private tmux: the herd (one asking a question, one at work, one done), an isolated
 * sheep with its evidence drawn per file, a question with its reply box, the herd's history (a closed
 * sheep listed with the filter), a closed isolated sheep's work (its branch, Land) and a sheep's live
 * terminal. The prompts read as a person writes them: the model is scripted by their text. Saved to
 * docs/screens/panel-*.png.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { e2eWorld } from "../test/support/e2e-world.ts";
import { launchChromium, openPage, panelOn } from "../test/support/panel-browser.ts";
import { repoRoot } from "../test/support/rpc-shepherd.ts";
import type { Directive } from "../test/support/scripted-model.ts";

const out = join(repoRoot, "docs", "screens");

const BUILD = "Make refresh() in src/auth/session.ts report a failed renewal instead of swallowing it, with a test";
const REVIEW = "Review the open pull request for the rate limiter and list what blocks merging";
const SCOUT = "Map where session state is stored in this repository";
const SESSION = "export function refresh(token: string) {\n  try {\n    return renew(token);\n  } catch {}\n}\n";

/** What the scripted model does with each prompt of the screenshots, by its text. */
function script(text: string): Directive | undefined {
  if (text === BUILD)
    return {
      rounds: [
        [
          {
            name: "edit",
            arguments: {
              path: "src/auth/session.ts",
              edits: [{ oldText: "  } catch {}\n", newText: '  } catch (e) {\n    throw new Error("session renewal failed", { cause: e });\n  }\n' }],
            },
          },
        ],
        [
          {
            name: "write",
            arguments: {
              path: "test/session.test.ts",
              content:
                'import { refresh } from "../src/auth/session.ts";\n\ntest("a failed renewal is reported", () => {\n  expect(() => refresh("expired")).toThrow(/renewal failed/);\n});\n',
            },
          },
        ],
      ],
      afterTool: "refresh() now rethrows a failed renewal with its cause; test/session.test.ts covers it.",
    };
  if (text === REVIEW) return { reply: "Reviewing…", delayMs: 600_000 };
  if (text === SCOUT)
    return {
      tool: {
        name: "shepherd_message",
        arguments: {
          kind: "question",
          text: "There are two session stores (redis in src/auth, memory in test/support). Map both, or only redis?",
          awaitReply: true,
          timeout: 3600,
        },
      },
      afterTool: "Mapped.",
    };
  return undefined;
}

async function main() {
  await mkdir(out, { recursive: true });
  const world = await e2eWorld("panel-screens", {
    repo: { "src/auth/session.ts": SESSION, "README.md": "# demo\n" },
    model: { script, fallback: () => "Noted." },
  });
  let browser: Browser | undefined;
  try {
    const scene = world.scene();
    const scout = await scene.start("scout");
    const builder = await scene.start("builder", { isolate: true });
    const reviewer = await scene.start("reviewer");
    await scene.wait(await scene.prompt(builder.agentId, BUILD), 120);
    await scene.prompt(reviewer.agentId, REVIEW);
    await scene.prompt(scout.agentId, SCOUT);
    await scene.shepherd.untilPush((d) => d.kind === "question" && d.agentId === scout.agentId, 120_000);
    await scene.shepherd.idle();
    const url = await panelOn(scene.shepherd);
    browser = await launchChromium();
    const { page } = await openPage(browser);
    // Each shot is the whole page at 1280 wide, as tall as what it shows.
    await page.setViewportSize({ width: 1280, height: 240 });
    await page.goto(url);
    await page.locator(".sheep-row").nth(2).waitFor();
    await page.locator("#conn", { hasText: "Live" }).waitFor();
    // A few seconds on the clocks, as a person sees a herd at work.
    await page.waitForTimeout(4000);
    await page.screenshot({ path: join(out, "panel-fleet.png"), fullPage: true });
    console.log(`saved ${join(out, "panel-fleet.png")}`);

    await page.locator(".sheep-link", { hasText: "builder" }).click();
    const prompt = page.locator("details.prompt").first();
    await prompt.locator(".ps-completed").waitFor();
    await prompt.locator("summary").click();
    await prompt.locator(".file").nth(1).waitFor();
    await page.locator(".conv-answer").first().waitFor();
    await page.screenshot({ path: join(out, "panel-sheep.png"), fullPage: true });
    console.log(`saved ${join(out, "panel-sheep.png")}`);

    await page.locator(".back").click();
    await page.locator(".sheep-link", { hasText: "scout" }).click();
    await page.locator(".message.msg-question .reply-form").waitFor();
    await page.locator(".message.msg-question textarea").fill("Only redis: the memory store is for tests.");
    await page.screenshot({ path: join(out, "panel-question.png"), fullPage: true });
    console.log(`saved ${join(out, "panel-question.png")}`);

    // The builder's live terminal: its pi as the pane shows it, drawn by xterm in the page.
    await page.locator(".back").click();
    await page.locator(".sheep-link", { hasText: "builder" }).click();
    await page.locator('.term-screen[data-state="live"]').waitFor();
    await page.waitForTimeout(1000);
    await page.locator(".term-box").screenshot({ path: join(out, "panel-terminal.png") });
    console.log(`saved ${join(out, "panel-terminal.png")}`);
    // History: builder closed (its worktree kept), found again with the filter, its work still to land.
    await scene.ok({ action: "close", agentId: builder.agentId });
    await page.locator(".back").click();
    await page.locator("#filter-state").selectOption("all");
    await page.locator(".sheep-row", { hasText: "builder" }).locator("td", { hasText: "closed" }).waitFor();
    await page.screenshot({ path: join(out, "panel-history.png"), fullPage: true });
    console.log(`saved ${join(out, "panel-history.png")}`);
    await page.locator(".sheep-link", { hasText: "builder" }).click();
    await page.locator("section.work .branch-state", { hasText: "ahead" }).waitFor();
    await page.locator("#land-message").fill("Report a failed session renewal");
    await page.screenshot({ path: join(out, "panel-work.png"), fullPage: true });
    console.log(`saved ${join(out, "panel-work.png")}`);

    // A phone's width, then the system's dark scheme: the herd with its live sheep.
    await page.locator(".back").click();
    await page.locator("#filter-state").selectOption("live");
    await page.locator(".sheep-row", { hasText: "scout" }).waitFor();
    await page.setViewportSize({ width: 360, height: 240 });
    await page.waitForTimeout(500);
    await page.screenshot({ path: join(out, "panel-phone.png"), fullPage: true });
    console.log(`saved ${join(out, "panel-phone.png")}`);
    await page.setViewportSize({ width: 1280, height: 240 });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.waitForTimeout(500);
    await page.screenshot({ path: join(out, "panel-dark.png"), fullPage: true });
    console.log(`saved ${join(out, "panel-dark.png")}`);
  } finally {
    await browser?.close();
    await world.cleanup();
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
