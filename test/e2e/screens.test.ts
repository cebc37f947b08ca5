/**
 * What a person sees: a real pi shepherd in pi's interactive TUI (200×50, a private tmux
 * server), driven by keys and read with capture-pane, with real pi sheep on the scripted model.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { livingSheep } from "../support/leftovers.ts";
import { directive } from "../support/scripted-model.ts";
import type { TuiShepherd } from "../support/tui-shepherd.ts";
import { recordedSheep } from "../support/state-file.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the shepherd in pi's interactive TUI", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let agentDir: string;
  let tui: TuiShepherd;
  const tool = (args: Record<string, unknown>) => tui.tool(args);
  const toolDone = (args: Record<string, unknown>) => tui.toolDone(args);
  const recorded = (label: string) => recordedSheep(agentDir, label);

  before(async () => {
    // No warm pool (warmMemory 0): the widget goes once the herd is empty, as the screens show it.
    world = await e2eWorld("screens-e2e", { work: true, agent: { shepherdSettings: { warmMemory: 0 } } });
    agentDir = world.agentDir;
    tui = await world.tui({ width: 200, height: 50 });
    await tui.until(/scripted-model/);
  });

  after(() => world?.cleanup());

  it("/shepherd answers stay on screen: the overview, then a start, then the herd", async () => {
    await tui.type("/shepherd");
    await tui.until(/No live sheep\.[\s\S]*\/shepherd <subcommand>; the most used:[\s\S]*Every subcommand and flag: \/shepherd help/);
    await tui.type("/shepherd start echo --label a");
    const started = await tui.until(/Started "a" \(echo\) as (a_\w{10})/, 60_000);
    const id = /Started "a" \(echo\) as (a_\w{10})/.exec(started)![1]!;
    await tui.type("/shepherd herd");
    const screen = await tui.until(new RegExp(`Herd \\(1\\):\\n {3}a \\(${id}, echo\\): idle`));
    // Every answer is still there, in order: none replaced the one before.
    const at = (re: RegExp) => screen.search(re);
    const order = [/No live sheep\./, /\/shepherd <subcommand>/, /Started "a" \(echo\) as a_/, /Herd \(1\):/].map(at);
    assert.ok(
      order.every((i) => i >= 0),
      `every answer is on screen:\n${screen}`,
    );
    assert.deepEqual(
      [...order].sort((x, y) => x - y),
      order,
      `in the order they came:\n${screen}`,
    );
  });

  it("a wait's progress and the herd widget show the sheep in the same state at the same second", async () => {
    await toolDone({ action: "start", agent: "echo", label: "w" });
    const { agentId } = await recorded("w");
    await toolDone({ action: "prompt", agentId, message: directive({ reply: "slow answer", delayMs: 12_000 }) });
    const { activePromptId: promptId } = await recorded("w");
    assert.ok(promptId);
    await sleep(3000); // the prompt's clock runs before the wait starts: both views count from the prompt
    const done = await tool({ action: "wait", promptId, timeout: 60 });
    const during = await tui.until((s) => /⏳ w · echo · working \d+s/.test(s) && /^ {3}w · echo · working \d+s$/m.test(s), 30_000);
    const progress = /⏳ w · echo · working (\d+)s/.exec(during)![1]!;
    const widget = /^ {3}w · echo · working (\d+)s$/m.exec(during)![1]!;
    assert.equal(progress, widget, `one clock:\n${during}`);
    assert.ok(Number(progress) >= 3, `counted from the prompt, not from the wait (${progress}s):\n${during}`);
    const result = await tui.until(done, 60_000);
    assert.match(result, /✓ w · echo\b.*\n {5}slow answer/, "the result names the sheep, not the prompt");
    assert.doesNotMatch(result, new RegExp(`✓ ${promptId}`));
    await toolDone({ action: "close", agentId: "w" });
  });

  it("a parallel delegate to two sheep of one agent tells them apart by label", async () => {
    const tasks = [1, 2].map((n) => ({ agent: "echo", task: directive({ reply: `answer ${n}`, delayMs: 4000 }) }));
    const done = await tool({ action: "delegate", tasks });
    const running = await tui.until((s) => /⏳ echo · working \d+s/.test(s) && /⏳ echo-2 · echo · working \d+s/.test(s), 60_000);
    assert.match(running, /^ {3}echo-2 · echo · working \d+s$/m, `the widget names the same sheep:\n${running}`);
    const result = await tui.until(done, 60_000);
    assert.match(result, /✓ echo(?: ↑\d+ ↓\d+)?\n {5}answer 1\n/);
    assert.match(result, /✓ echo-2 · echo(?: ↑\d+ ↓\d+)?\n {5}answer 2\n/);
  });

  it("a chain's header keeps {previous}, and Ctrl+O shows every task whole", async () => {
    const long = `Take what the scout found and write it up for the team, then list the open questions. Found: {previous}`;
    const done = await toolDone({
      action: "delegate",
      chain: [
        { agent: "echo", task: directive({ reply: "SCOUTED" }) },
        { agent: "echo", task: "got: {previous}" },
        { agent: "echo", task: long },
      ],
    });
    assert.match(done, /\n {3}2\. echo got: \{previous\}\n/, "a short task is shown whole, {previous} included");
    assert.match(done, /\n {3}3\. echo Take what the scout found and write it up for the team, the…\n/, "a long one is cut until expanded");
    await tui.keys("C-o");
    // The typed directive holds the long task too (inside its JSON), so wait for the header line itself:
    // pi redraws the whole conversation on Ctrl+O, and a screen caught mid-redraw may show either.
    const header = `   3. echo ${long}`;
    const expanded = await tui.until((s) => s.split("\n").some((l) => l === header), 20_000);
    assert.ok(expanded.split("\n").includes(header), `the whole task, {previous} and all:\n${expanded}`);
    await tui.keys("C-o");
  });

  it("a sheep prompted by its label answers; /shepherd read shows its conversation; after it closes, its session is found", async () => {
    await toolDone({ action: "prompt", agentId: "a", message: directive({ reply: "hello from a\nsecond line" }) });
    const { activePromptId } = await recorded("a");
    await toolDone({ action: "wait", promptIds: [activePromptId], timeout: 60 });
    await tui.type("/shepherd read a");
    await tui.until(
      /The last turn of a \(a_\w{10}, echo\), from \/\S+session\.jsonl:\n\n {1}> #script \{"reply":"hello from a\\nsecond line"\}\n {1}hello from a\n {1}second line\n/,
    );
    await tui.type("/shepherd close a");
    const closed = await tui.until(/Closed a \(a_\w{10}\); its session file is kept at (\/\S+session\.jsonl)\./, 60_000);
    const path = /its session file is kept at (\/\S+session\.jsonl)\./.exec(closed)![1]!;
    assert.match(await readFile(path, "utf8"), /"role":"user"/, "the file it names holds the conversation");
    await tui.until((s) => !/🐑 herd/.test(s), 10_000);
    await tui.type("/shepherd start echo --label b");
    await tui.until(/Started "b" \(echo\) as a_\w{10}/, 60_000);
    await tui.type("/shepherd close b");
    await tui.until(/Closed b \(a_\w{10}\); it wrote no session file\./, 60_000);
    assert.deepEqual(await livingSheep(agentDir, []), [], "no sheep pi is left");
  });
});
