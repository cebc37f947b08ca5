/**
 * Quitting never throws away a prompt in flight, checked in pi's interactive screen: a real pi
 * shepherd in its TUI (a private tmux server) quits with Ctrl+C twice while a sheep works and a
 * wait runs. The working sheep's pane and pi stay, the idle one is closed, the quit says so in one
 * line; a new shepherd on the same agent dir adopts the sheep and its wait gets the answer.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { pidAlive, sheepPid } from "../support/leftovers.ts";
import { type Item, untilLogged } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";
import type { TuiShepherd } from "../support/tui-shepherd.ts";
import { recordedSheep } from "../support/state-file.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("quitting the shepherd in pi's TUI while a sheep works", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let model: ScriptedModel;
  let agentDir: string;
  let tui: TuiShepherd;

  const recorded = (label: string) => recordedSheep(agentDir, label);
  /** Every pane of the private server, with whether its program ended. */
  const panes = async () =>
    new Map(
      (await tui.tmux(["list-panes", "-a", "-F", "#{pane_id} #{pane_dead}"]))
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split(" ") as [string, string]),
    );

  before(async () => {
    world = await e2eWorld("quit-e2e", { work: true });
    ({ model, agentDir } = world);
    tui = await world.tui();
    await tui.until(/scripted-model/);
  });

  after(() => world?.cleanup());

  it("Ctrl+C twice during a wait: the working sheep stays and is adopted, the idle one is closed, and the quit says so", async () => {
    await tui.type("/shepherd start echo --label idle");
    await tui.until(/Started "idle"/);
    await tui.type("/shepherd start echo --label busy");
    await tui.until(/Started "busy"/);
    const idle = await recorded("idle");
    const busy = await recorded("busy");
    const busyPid = await sheepPid(agentDir, busy.agentId);

    const prompted = "turn 1 done";
    await tui.type(
      directive({
        tool: {
          name: "shepherd",
          arguments: { action: "prompt", agentId: busy.agentId, message: directive({ reply: "the slow answer", delayMs: 20_000, tag: "SLOW" }) },
        },
        afterTool: prompted,
      }),
    );
    await tui.until((s) => s.split("\n").some((l) => l.trim() === prompted), 60_000);
    const { activePromptId: promptId } = await recorded("busy");
    assert.ok(promptId, "the prompt is recorded");
    await untilLogged(model, "SLOW");
    // The shepherd's model waits for it: the quit comes in the middle of that wait.
    await tui.type(directive({ tool: { name: "shepherd", arguments: { action: "wait", promptId, timeout: 120 } }, afterTool: "never said" }));
    await tui.until(/⏳[^\n]*busy/, 30_000);

    // The shepherd's pane is kept when pi ends, so what pi left on the terminal can be read.
    await tui.tmux(["set-option", "-p", "-t", tui.target, "remain-on-exit", "on"]);
    const shepherdPid = Number((await tui.tmux(["display", "-p", "-t", tui.target, "#{pane_pid}"])).trim());
    await tui.keys("C-c", "C-c");
    for (let i = 0; (await panes()).get((await tui.tmux(["display", "-p", "-t", tui.target, "#{pane_id}"])).trim()) !== "1"; i++) {
      assert.ok(i < 200, `pi did not quit:\n${await tui.screen()}`);
      await sleep(100);
    }
    // pi leaves the terminal before its quit handlers end (the pane is dead while it still writes
    // the records): the next shepherd comes once that pi is gone, as a person's next pi would.
    for (let i = 0; pidAlive(shepherdPid); i++) {
      assert.ok(i < 200, "the quitting pi ended");
      await sleep(100);
    }
    const after = await panes();
    assert.equal(after.get(busy.paneId), "0", "the working sheep's pane stays, its pi running");
    assert.ok(pidAlive(busyPid), "its pi still runs");
    assert.ok(!after.has(idle.paneId), "the idle sheep was closed");
    const screen = await tui.screen();
    assert.match(
      screen.replace(/\n/g, ""),
      new RegExp(
        `pi-shepherd: left 1 sheep running for the next shepherd on this agent dir to take back: busy \\(${busy.agentId}, working on ${promptId}\\); closed 1 idle\\.`,
      ),
      screen,
    );
    const kept = await recorded("busy");
    assert.deepEqual([kept.state, kept.activePromptId], ["working", promptId], "recorded as working, for the next shepherd to adopt");

    // On the TUI's server, where its sheep are.
    const next = world!.shepherd({ env: { ...world!.env, PI_SHEPHERD_TMUX_SOCKET: tui.socket } });
    const waited = await next.ok({ action: "wait", promptId, timeout: 120 });
    const [item] = waited.details.results as Item[];
    assert.deepEqual([item?.status, item?.text], ["completed", "the slow answer"], waited.text);
    assert.notEqual((await recorded("busy")).owner, kept.owner, "the new shepherd adopted it");
    await next.ok({ action: "close", agentId: busy.agentId });
    assert.ok(!(await panes()).has(busy.paneId));
  });

  it("an answer the person saw by /shepherd wait counts as received: the quit closes that sheep (issue 31, item 17)", async () => {
    const person = await world!.tui();
    await person.until(/scripted-model/);
    await person.type("/shepherd start echo --label seen");
    await person.until(/Started "seen"/);
    const seen = await recorded("seen");
    await person.type("/shepherd prompt seen hello there");
    await person.until(/Its answer: \/shepherd wait seen/);
    await person.type("/shepherd wait seen");
    await person.until(/ECHO: hello there/, 60_000);
    await person.tmux(["set-option", "-p", "-t", person.target, "remain-on-exit", "on"]);
    const shepherdPid = Number((await person.tmux(["display", "-p", "-t", person.target, "#{pane_pid}"])).trim());
    await person.keys("C-c", "C-c");
    for (let i = 0; pidAlive(shepherdPid); i++) {
      assert.ok(i < 300, `pi did not quit:\n${await person.screen()}`);
      await sleep(100);
    }
    const screen = (await person.screen()).replace(/\n/g, "");
    assert.doesNotMatch(screen, /not received|left 1 sheep running/, screen);
    assert.equal((await recorded("seen").catch(() => undefined))?.state ?? "closed", "closed", "the sheep is closed (closeOnExit)");
    const left = await person.tmux(["list-panes", "-a", "-F", "#{pane_id}"]);
    assert.ok(!left.split("\n").includes(seen.paneId), `its pane is closed: ${left}`);
  });
});
