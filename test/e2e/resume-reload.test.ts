/**
 * Issue 21, item 8, in pi's interactive screen: a real pi shepherd in its TUI (a private tmux
 * server, read with capture-pane) resumes a closed isolated sheep with `/shepherd resume`, then
 * `/reload`s; the resumed sheep is still in `/shepherd herd`, and `/shepherd land` brings its work in.
 * Before, the resumed record never reached state.json: after the reload the herd said "No live
 * sheep" while its pane ran on, and its worktree could not be landed.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { lines } from "../support/git-repo.ts";
import { directive } from "../support/scripted-model.ts";
import type { TuiShepherd } from "../support/tui-shepherd.ts";

describe("a resumed isolated sheep survives /reload in pi's interactive screen", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let repo: string;
  let tui: TuiShepherd;
  const toolDone = (args: Record<string, unknown>) => tui.toolDone(args);

  before(async () => {
    world = await e2eWorld("resume-reload", { work: "repo", repo: { "a.txt": lines(3) } });
    repo = world.cwd;
    tui = await world.tui({ width: 200, height: 50 });
    await tui.until(/scripted-model/);
  });

  after(() => world?.cleanup());

  it("/shepherd resume, /reload: /shepherd herd lists the resumed sheep, and it lands", async () => {
    await tui.type("/shepherd start echo --label fixer --isolate");
    const first = /Started "fixer" \(echo\) as (a_\w{10})/.exec(await tui.until(/Started "fixer" \(echo\) as a_\w{10}/))![1]!;
    // It works (writes a file in its worktree), so it has a conversation to resume.
    const work = directive({ rounds: [[{ name: "write", arguments: { path: "fixed.txt", content: "fixed\n" } }]], afterTool: "wrote it" });
    await toolDone({ action: "prompt", agentId: "fixer", message: work });
    await tui.type("/shepherd wait fixer");
    await tui.until(/wrote it/, 120_000);
    await tui.type("/shepherd close fixer");
    await tui.until(new RegExp(`Closed fixer \\(${first}\\)`), 60_000);
    await tui.type("/shepherd resume fixer");
    const said = /Resumed "fixer" \(echo\) from (a_\w{10}), its conversation kept, as (a_\w{10})/;
    const [, from, resumed] = said.exec(await tui.until(said, 60_000))!;
    assert.equal(from, first);

    await tui.type("/reload");
    // The re-attach line, where there is a live sheep to say it of; /shepherd waits for the re-attach anyway.
    await tui.until(/re-attached \d+ sheep/, 30_000).catch(() => undefined);
    await tui.type("/shepherd herd");
    const herd = await tui.until(/Herd \(\d+\):|No live sheep/, 60_000);
    assert.match(herd, new RegExp(`Herd \\(1\\):\\n {3}fixer \\(${resumed}, echo\\): idle`), `the herd after /reload:\n${herd}`);
    assert.doesNotMatch(herd, /No live sheep/);

    await tui.type("/shepherd land fixer");
    await tui.until(new RegExp(`Landed shepherd/\\S+ of fixer \\(${resumed}\\)`), 60_000);
    assert.equal(await readFile(join(repo, "fixed.txt"), "utf8"), "fixed\n", "the work of the resumed sheep's worktree is in the checkout");
  });
});
