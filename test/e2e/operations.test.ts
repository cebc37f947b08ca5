/**
 * Operations with real pi shepherds over RPC on one agent dir: model aliases from the user's
 * settings (a project's are refused), resuming a sheep that a quitting shepherd closed from the
 * next shepherd, and the audit log those sessions leave.
 */
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { recordTrustDecision } from "../../src/project-trust.ts";
import type { AuditEvent } from "../../src/ports/audit.ts";
import { ECHO_AGENT } from "../support/e2e-env.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { sheepPid } from "../support/leftovers.ts";
import { type Scene, tmuxPanes } from "../support/scene.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";

describe("operations with real pi: model aliases, resume after the shepherd quit, the audit log", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let tmux: PrivateTmux;
  let model: ScriptedModel;
  let other: ScriptedModel;
  let agentDir: string;
  let work: string;
  let first: Scene;
  let second: Scene;
  const ids: Record<string, string> = {};
  const A1 = directive({ reply: "noted: the word is PAPAYA", tag: "A1" });

  const shepherd = () => world!.scene();
  const tagged = (m: ScriptedModel, tag: string) => m.log.filter((l) => l.tag === tag);

  before(async () => {
    world = await e2eWorld("operations", {
      agent: {
        agents: { "echo.md": ECHO_AGENT, "aliased.md": "---\nname: aliased\ndescription: runs on the fast alias\nmodel: fast\n---\nYou answer as scripted.\n" },
        shepherdSettings: { models: { fast: "other/scripted-model" } },
      },
      providers: ["other"],
      work: true,
    });
    ({ tmux, model, agentDir, cwd: work } = world);
    other = world.providers.other!;
    await mkdir(join(work, ".pi", "agents"), { recursive: true });
    // Were the project's alias honoured (project values win), "fast" would reach the first model.
    await writeFile(join(work, ".pi", "shepherd.json"), JSON.stringify({ models: { fast: "scripted/scripted-model" } }));
    await writeFile(join(work, ".pi", "agents", "proj.md"), "---\nname: proj\ndescription: the repository's agent\n---\nYou help.\n");
    // The person trusted the project (as /shepherd trust records it): its user-only keys are still refused.
    await recordTrustDecision(agentDir, work, "trusted");
  });

  after(() => world?.cleanup());

  it("an agent file's model: and the model parameter go through the user's aliases; the project's are ignored and reported", async () => {
    first = shepherd();
    const alpha = await first.start("alpha", { agent: "aliased" });
    ids.alpha = alpha.agentId;
    assert.equal((await first.wait(await first.prompt(alpha.agentId, A1), 30)).status, "completed");
    assert.equal(tagged(other, "A1").length, 1, "the alias sent the sheep to the model it names");
    assert.equal(tagged(model, "A1").length, 0);
    const bravo = await first.start("bravo", { model: "fast" });
    ids.bravo = bravo.agentId;
    assert.equal((await first.wait(await first.prompt(bravo.agentId, directive({ reply: "b", tag: "B1" })), 30)).status, "completed");
    assert.deepEqual([tagged(other, "B1").length, tagged(model, "B1").length], [1, 0]);
    const [settings] = await first.shepherd.slash("/shepherd settings");
    assert.equal(settings!.level, "warning");
    assert.match(settings!.text, /shepherd\.json: "models" can only be set in the user's settings \(.*settings\.json\); ignored here/);
    assert.match(settings!.text, /\n {2}models: \{"fast":"other\/scripted-model"\} \(user\) \[user-only\]\n/);
  });

  it("another live shepherd may not close these sheep, and an unapproved project agent is refused", async () => {
    second = shepherd();
    await second.fails({ action: "close", agentId: ids.bravo }, /^\[not_owned\]/);
    const stop = second.shepherd.answerDialogs(() => ({ confirmed: false }));
    await second.fails({ action: "start", agent: "proj", agentScope: "project" }, /^\[project_agent_refused\] project agent "proj" .* was not approved/);
    stop();
  });

  it("after the first shepherd quit and closed its sheep, the second resumes one and its conversation reaches the model", async () => {
    await first.shepherd.stop();
    assert.deepEqual(await tmuxPanes(tmux.socket)(), [tmux.userPane], "the quitting shepherd closed its sheep");
    const [notice] = await second.shepherd.slash("/shepherd resume alpha");
    assert.equal(notice!.level, "info", notice!.text);
    assert.match(notice!.text, new RegExp(`^Resumed "alpha" \\(aliased\\) from ${ids.alpha}, its conversation kept, as (a_\\w+) in tmux pane`));
    ids.resumed = /as (a_\w+) in tmux/.exec(notice!.text)![1]!;
    second.pids.push(await sheepPid(agentDir, ids.resumed));
    const p = await second.prompt(ids.resumed, directive({ reply: "still PAPAYA", tag: "A2" }));
    const r = await second.wait(p, 30);
    assert.equal(r.text, "still PAPAYA");
    const [request] = tagged(other, "A2");
    assert.ok(request, "the resumed sheep kept its (aliased) model");
    assert.ok(request.userTexts.includes(A1), "the earlier prompt reached the model with the new one");
    const [live] = await second.shepherd.slash("/shepherd resume alpha");
    assert.deepEqual([live!.level, /^\[not_resumable\] sheep a_\w+ \(alpha\) is still running/.test(live!.text)], ["error", true], live!.text);
    const [unknown] = await second.shepherd.slash("/shepherd resume zulu");
    assert.match(unknown!.text, /^\[unknown_agent\] no closed or exited sheep labelled "zulu"/);
  });

  it("the audit log holds the events in order, with owners and ids, privately; /shepherd log shows them", async () => {
    const path = join(agentDir, "pi-shepherd", "audit.ndjson");
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const events = (await readFile(path, "utf8"))
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as AuditEvent);
    const ownerPid = (e: AuditEvent) => Number(e.owner.split(":")[0]);
    const of = (agentId: string) => events.filter((e) => e.agentId === agentId).map((e) => e.event);
    assert.deepEqual(of(ids.alpha!), ["start", "ready", "prompt", "result", "close"]);
    assert.deepEqual(of(ids.bravo!), ["start", "ready", "prompt", "result", "close"]);
    assert.deepEqual(of(ids.resumed!), ["start", "ready", "prompt", "result"]);
    assert.ok(events.filter((e) => e.agentId === ids.alpha || e.agentId === ids.bravo).every((e) => ownerPid(e) === first.shepherd.proc.pid));
    const resumedStart = events.find((e) => e.agentId === ids.resumed && e.event === "start")!;
    assert.deepEqual([resumedStart.resumedFrom, resumedStart.model, ownerPid(resumedStart)], [ids.alpha, "other/scripted-model", second.shepherd.proc.pid]);
    const result = events.find((e) => e.agentId === ids.alpha && e.event === "result")!;
    assert.equal(result.status, "completed");
    assert.ok(typeof result.durationMs === "number" && result.usage?.output !== undefined, "a result has its duration and usage");
    assert.ok(events.find((e) => e.event === "prompt" && e.agentId === ids.alpha)?.promptId?.startsWith("p_"));
    const sequence = events.map((e) => `${e.event}${e.reason ? ` [${e.reason}]` : ""}${e.agentId ? ` ${e.agentId}` : ""}`);
    const at = (s: string) => sequence.indexOf(s);
    assert.ok(at(`result ${ids.bravo}`) < at("refusal [not_owned]"), sequence.join("\n"));
    assert.ok(at("refusal [not_owned]") < at("refusal [trust]"));
    assert.ok(at("refusal [trust]") < at(`close ${ids.alpha}`));
    assert.ok(at(`close ${ids.alpha}`) < at(`start ${ids.resumed}`));
    assert.ok(at(`result ${ids.resumed}`) < at("failure [not_resumable]"));
    assert.ok(at("failure [not_resumable]") < at("failure [unknown_agent]"));
    assert.ok(events.every((e) => typeof e.time === "string" && !Number.isNaN(Date.parse(e.time))));

    const [log] = await second.shepherd.slash("/shepherd log 4 --agent alpha");
    const lines = log!.text.split("\n");
    assert.equal(lines[0], "Audit log of alpha, last 4 (UTC):");
    assert.match(
      lines[1]!,
      new RegExp(
        `^ {2}\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d {2}start {3}alpha \\(${ids.resumed}\\) aliased on tmux pane %\\d+, model other/scripted-model, resuming ${ids.alpha} · by you \\(/shepherd\\)$`,
      ),
    );
    assert.match(lines[4]!, /result {2}alpha \(a_\w+\) p_\w+ completed in \d+\.\ds ↑\d+ ↓\d+ · by the model \(tool\)$/);
  });

  it("when the second shepherd quits too, nothing is left but sessions and resume cards", async () => {
    await second.shepherd.stop();
    await second.assertNothingLeft(tmuxPanes(tmux.socket), [tmux.userPane]);
  });
});
