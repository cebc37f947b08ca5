/**
 * A sheep waiting on a pi dialog reads "blocked" on tmux, where no multiplexer reports it: pi's
 * ui_prompt_start/end events reach status.json, `wait`, `status` and the herd widget. A real pi
 * shepherd over RPC, a real sheep in a private tmux server, the scripted model; the person is
 * played by send-keys into the sheep's pane. The sheep runs a test extension whose tool asks a
 * yes/no question (test/support/dialog-ext.ts), given to it through the user's piCommand setting.
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { sheepRoot } from "../support/leftovers.ts";
import { node22, piCli, repoRoot } from "../support/rpc-shepherd.ts";
import { type Scene, tmuxPanes, untilLogged } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";

const QUESTION = "Shear the whole flock now?";

describe("a sheep waiting on a dialog, on tmux", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let tmux: PrivateTmux;
  let model: ScriptedModel;
  let scene: Scene;
  let agentDir: string;
  let panes: () => Promise<string[]>;

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const statusFile = async (agentId: string) =>
    JSON.parse(await readFile(join(sheepRoot(agentDir), agentId, "status.json"), "utf8")) as { state: string; blocked?: string };
  /** The herd widget's line for one sheep, as the shepherd last sent it to its RPC client. */
  const widgetLine = (label: string) => {
    const widgets = scene.shepherd.events.filter((e) => e.type === "extension_ui_request" && e.method === "setWidget") as { widgetLines?: string[] }[];
    return widgets[widgets.length - 1]?.widgetLines?.find((l) => l.trimStart().startsWith(`${label} ·`));
  };
  const untilWidget = async (label: string, re: RegExp) => {
    for (let i = 0; i < 100 && !re.test(widgetLine(label) ?? ""); i++) await sleep(100);
    assert.match(widgetLine(label) ?? "(no line)", re);
  };
  const screen = (paneId: string) => tmux.tmux(["capture-pane", "-p", "-t", paneId]);

  before(async () => {
    world = await e2eWorld("blocked", {
      agent: { shepherdSettings: { piCommand: [node22, piCli, "-e", join(repoRoot, "test", "support", "dialog-ext.ts")] } },
    });
    ({ tmux, model, agentDir } = world);
    scene = world.scene();
    panes = tmuxPanes(tmux.socket);
  });

  after(async () => {
    await world?.cleanup();
  });

  it("wait and status say blocked with the dialog's title; answered in the pane, the turn goes on to its exact answer", async () => {
    const S = await scene.start("asker");
    const p = await scene.prompt(
      S.agentId,
      directive({ tool: { name: "ask_person", arguments: { question: QUESTION } }, afterTool: "sheared after a yes", tag: "ASK" }),
    );

    const r1 = await scene.wait(p, 60);
    assert.deepEqual([r1.status, r1.error], ["blocked", QUESTION], JSON.stringify(r1));
    const report = await statusFile(S.agentId);
    assert.deepEqual([report.state, report.blocked], ["working", QUESTION], "status.json says blocked, with the title");
    await untilWidget("asker", /· blocked$/);
    assert.equal((await scene.state(S.agentId)).state, "blocked");
    assert.deepEqual(
      model.log.filter((l) => l.tag === "ASK").map((l) => l.kind),
      ["tool"],
      "the turn stops at the dialog",
    );

    // The person: the dialog is on the sheep's screen, "Yes" first; Enter takes it.
    const onScreen = (text: string) => text.includes(QUESTION) && text.includes("Yes");
    let shown = await screen(S.paneId);
    for (let i = 0; i < 100 && !onScreen(shown); i++) {
      await sleep(100);
      shown = await screen(S.paneId);
    }
    assert.ok(onScreen(shown), `the dialog is on the sheep's screen:\n${shown}`);
    await tmux.tmux(["send-keys", "-t", S.paneId, "Enter"]);
    // The key reaches the sheep's pi a moment later (longer on a loaded machine); until it has
    // closed the dialog, a wait rightly still says blocked.
    for (let i = 0; i < 200 && (await statusFile(S.agentId)).blocked !== undefined; i++) await sleep(50);

    const r2 = await scene.wait(p, 60);
    assert.deepEqual([r2.status, r2.text, r2.error], ["completed", "sheared after a yes", undefined], JSON.stringify(r2));
    assert.deepEqual(
      model.log.filter((l) => l.tag === "ASK").map((l) => l.kind),
      ["tool", "tool-followup"],
      "the turn went on after the answer",
    );
    const session = await readFile(join(sheepRoot(agentDir), S.agentId, "session.jsonl"), "utf8");
    assert.match(session, /the person said yes/, "the answer typed in the pane reached the tool");
    assert.equal((await statusFile(S.agentId)).blocked, undefined, "status.json no longer says blocked");
    await untilWidget("asker", /· idle$/);
    assert.equal((await scene.state(S.agentId)).state, "idle");
    assert.deepEqual(await readdir(join(sheepRoot(agentDir), S.agentId, "inbox")), [], "the claimed prompt file is gone");
    await scene.ok({ action: "close", agentId: S.agentId });
    await scene.assertNothingLeft(panes, [tmux.userPane]);
  });

  it("a prompt is submitted once and leaves nothing in the inbox, however often the sheep looks again", async () => {
    const { agentId } = await scene.start("counter");
    const p = await scene.prompt(agentId, directive({ reply: "counted once", tag: "ONCE" }));
    const r = await scene.wait(p, 60);
    assert.deepEqual([r.status, r.text], ["completed", "counted once"], JSON.stringify(r));
    await untilLogged(model, "ONCE");
    // The sheep's slow poll looks at the inbox every second: give it a few turns.
    await sleep(3500);
    assert.equal(model.log.filter((l) => l.tag === "ONCE").length, 1, "the prompt reached the model once");
    assert.deepEqual(await readdir(join(sheepRoot(agentDir), agentId, "inbox")), [], "no prompt file, claimed or not, is left");
    await scene.ok({ action: "close", agentId });
    await scene.assertNothingLeft(panes, [tmux.userPane]);
  });
});
