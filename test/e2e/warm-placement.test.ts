/**
 * Every sheep follows the placement settings, however it starts, and the warm pool never takes
 * room in the shepherd's window: checked as a person meets it, a real pi shepherd in its TUI (a
 * private tmux server, its sheep in the same server) with `placement: "pane"` and one warm echo.
 * The warm sheep waits in a window of its own; a delegate takes it (no second boot) and it works
 * as a split of the shepherd's window, as a started sheep does; back in the pool it leaves the
 * shepherd's window again.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { AuditEvent } from "../../src/ports/audit.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { directive } from "../support/scripted-model.ts";
import type { TuiShepherd } from "../support/tui-shepherd.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Recorded = { agentId: string; agent: string; label: string; state: string; paneId: string; warm?: true };

describe("placement for every sheep; the warm pool outside the shepherd's window", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let agentDir: string;
  let tui: TuiShepherd;

  /** Every pane of the private server: its window and the sheep's mark. */
  const panes = async () =>
    (await tui.tmux(["list-panes", "-a", "-F", "#{session_name}:#{window_index} #{pane_id} #{@pi_shepherd_agent}"]))
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const [window, paneId, mark] = l.split(" ");
        return { window: window!, paneId: paneId!, mark: mark ?? "" };
      });
  const shepherdWindow = async () => (await panes()).filter((p) => p.window === "shepherd:0");
  const state = async () =>
    (JSON.parse(await readFile(join(agentDir, "pi-shepherd", "state.json"), "utf8").catch(() => '{"agents":[]}')) as { agents: Recorded[] }).agents;
  const audit = async () =>
    (await readFile(join(agentDir, "pi-shepherd", "audit.ndjson"), "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEvent);
  /** The ready warm echo sheep, once there is one. */
  const warmReady = async (not?: string): Promise<Recorded> => {
    for (let i = 0; i < 600; i++) {
      const w = (await state()).find((a) => a.warm && a.state === "idle" && a.agent === "echo" && a.agentId !== not);
      if (w) return w;
      await sleep(100);
    }
    throw new Error(`no warm echo sheep became ready: ${JSON.stringify(await state())}`);
  };

  before(async () => {
    world = await e2eWorld("warm-placement", { work: true, agent: { shepherdSettings: { placement: "pane", direction: "right", warm: { echo: 1 } } } });
    ({ agentDir } = world);
    tui = await world.tui();
    await tui.until(/scripted-model/);
  });

  after(() => world?.cleanup());

  it("a warm sheep waits in its own window; a delegate takes it and it splits the shepherd's window; back in the pool it leaves", async () => {
    const warm = await warmReady();
    const shepherdPane = (await shepherdWindow())[0]!.paneId;
    assert.deepEqual(
      (await shepherdWindow()).map((p) => p.paneId),
      [shepherdPane],
      "the warm sheep takes no room in the shepherd's window",
    );
    assert.ok(
      (await panes()).some((p) => p.mark === warm.agentId && p.window !== "shepherd:0"),
      "the warm sheep runs in a window of its own",
    );

    // A delegate with keepOpen: the sheep stays after its task, where the placement put it.
    const before = (await audit()).length;
    await tui.toolDone({ action: "delegate", keepOpen: true, tasks: [{ agent: "echo", task: directive({ reply: "delegated answer" }) }] });
    const events = (await audit()).slice(before);
    const took = events.find((e) => e.event === "take");
    assert.equal(took?.agentId, warm.agentId, `the delegate took the warm sheep: ${JSON.stringify(events)}`);
    assert.equal(events.filter((e) => e.event === "start" && e.agent === "echo" && !e.warm).length, 0, "and booted no sheep of its own for the task");
    const split = await shepherdWindow();
    assert.deepEqual(
      split.map((p) => p.mark).sort(),
      ["", warm.agentId].sort(),
      "the delegated sheep works as a split of the shepherd's window (placement pane), as a started one does",
    );

    // A started sheep follows the same setting.
    await tui.type("/shepherd start echo --label started");
    await tui.until(/Started "started"/);
    const started = (await state()).find((a) => a.label === "started")!;
    assert.ok(
      (await shepherdWindow()).some((p) => p.mark === started.agentId),
      "a started sheep splits the shepherd's window",
    );
    await tui.type(`/shepherd close started`);
    await tui.until(/Closed started/);
    await tui.type(`/shepherd close ${warm.agentId}`);
    for (let i = 0; i < 100 && (await shepherdWindow()).length > 1; i++) await sleep(100);
    assert.deepEqual(
      (await shepherdWindow()).map((p) => p.paneId),
      [shepherdPane],
      "closed: only the shepherd's pane is left in its window",
    );

    // Without keepOpen the sheep goes back to the pool after its task, out of the shepherd's window.
    const next = await warmReady(warm.agentId);
    await tui.toolDone({ action: "delegate", tasks: [{ agent: "echo", task: directive({ reply: "and back" }) }] });
    const renewed = await (async () => {
      for (let i = 0; i < 300; i++) {
        const e = (await audit()).find((x) => x.event === "renew" && x.agentId === next.agentId);
        if (e) return e;
        await sleep(100);
      }
      return undefined;
    })();
    assert.ok(renewed, "the delegated sheep came back to the pool");
    for (let i = 0; i < 100 && (await shepherdWindow()).length > 1; i++) await sleep(100);
    assert.deepEqual(
      (await shepherdWindow()).map((p) => p.paneId),
      [shepherdPane],
      "back in the pool it left the shepherd's window",
    );
    assert.ok(
      (await panes()).some((p) => p.mark === next.agentId && p.window !== "shepherd:0"),
      "it waits in a window of its own again",
    );
  });
});
