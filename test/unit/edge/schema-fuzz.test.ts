/**
 * Schema fuzz: thousands of random parameter objects through the tool's dispatch, on a Shepherd
 * over the in-memory world and a fake clock. Each call gives a result or an Error whose message
 * starts with a [code]; never another exception, never a hang. The PRNG is seeded (FUZZ_SEED
 * overrides it), and a failure names the case, so it reproduces.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Shepherd } from "../../../src/core/shepherd.ts";
import { DEFAULT_SETTINGS } from "../../../src/settings.ts";
import type { DispatchContext } from "../../../src/context/context.ts";
import { dispatch } from "../../../src/edge/dispatch.ts";
import { ACTIONS, parameterNames } from "../../../src/edge/schema.ts";
import { FakeClock, settle } from "../../support/fake-clock.ts";
import { MemoryWorkspace } from "../../support/memory-workspace.ts";
import { MemoryWorld } from "../../support/memory-world.ts";
import { prng, type Rng } from "../../support/prng.ts";

const CASES = 3000;
const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed);
const DAY = 24 * 3600 * 1000;

// Every parameter the schema has: a new one is fuzzed from the day it is added.
const FIELDS = parameterNames();

/** Ids the world has handed out so far, so fuzzed calls also hit live records. */
interface Pool {
  agentIds: string[];
  promptIds: string[];
  labels: string[];
  /** Sheep that are not closed right now. */
  live: () => string[];
}

function junkString(r: Rng): string {
  return r.pick([
    "",
    " ",
    "\n",
    "x",
    "null",
    "undefined",
    "true",
    "false",
    "0",
    "-1",
    "1e309",
    "NaN",
    "[]",
    "{}",
    "[1,2",
    '["p_x"]',
    "p_1, p_2,,",
    "a_0000000000",
    "p_0000000000",
    "../..",
    "/etc/passwd",
    "$(touch /tmp/never)",
    "`id`",
    "#(id)",
    "-h",
    "--help",
    "ünï 🐑 \u0000",
    "scout",
    "echo",
    "tab",
    "pane",
    "workspace",
    "right",
    "down",
    "user",
    "project",
    "both",
    "start",
    "wait",
    "x".repeat(r.pick([100, 10_000, 300_000])),
  ]);
}

function junkValue(r: Rng, pool: Pool, depth = 0): unknown {
  switch (r.int(depth > 2 ? 8 : 11)) {
    case 0:
      return junkString(r);
    case 1:
      return r.pick([
        0,
        -0,
        1,
        -1,
        0.5,
        30,
        7 * 24 * 3600,
        7 * 24 * 3600 + 1,
        10_000,
        10_001,
        1e308,
        -1e308,
        Number.MAX_SAFE_INTEGER + 2,
        Infinity,
        -Infinity,
        NaN,
      ]);
    case 2:
      return r.pick([true, false]);
    case 3:
      return null;
    case 4:
      return undefined;
    case 5:
      return r.pick([...pool.agentIds, ...pool.promptIds, "a_0000000000", "p_0000000000"]);
    case 6:
      return r.pick(pool.labels.length ? pool.labels : ["scout"]);
    case 7: // JSON text of something else
      return JSON.stringify(junkValue(r, pool, depth + 1)) ?? "undefined";
    case 8:
      return Array.from({ length: r.int(4) }, () => junkValue(r, pool, depth + 1));
    case 9:
      return Object.fromEntries(Array.from({ length: r.int(4) }, () => [r.pick([...FIELDS, "__proto__", "constructor", "x"]), junkValue(r, pool, depth + 1)]));
    default: // a delegate task, well formed or not
      return {
        agent: r.pick(["scout", "echo", "nope", 7]),
        task: r.pick(["do it", "", 3, null]),
        ...(r.chance(0.3) ? { cwd: junkValue(r, pool, depth + 1) } : {}),
      };
  }
}

/** The fields each action reads; a "clean" call sets only these. */
const RELEVANT: Record<string, readonly string[]> = {
  start: ["agent", "label", "placement", "cwd", "model", "agentScope", "confirmProjectAgents", "isolate"],
  prompt: ["agentId", "message", "notify", "deliverAs", "requestId"],
  wait: ["promptId", "promptIds", "timeout"],
  status: ["agentId"],
  close: ["agentId", "removeWorktree", "force"],
  sheep: ["agentScope"],
  herd: ["all"],
  read: ["target", "lines"],
  prune: [],
  delegate: ["agent", "task", "tasks", "chain", "keepOpen", "cwd", "background", "isolate"],
  messages: ["agentId", "unreadOnly"],
  reply: ["agentId", "messageId", "text"],
  diff: ["target", "stat"],
  land: ["agentId", "squash"],
  sync: ["agentId"],
  doctor: [],
};

const WEIGHTED = [...ACTIONS, "start", "prompt", "wait"];

/** Half clean calls (the right fields, mostly plausible), half noise; a few not even objects. */
function randomParams(r: Rng, pool: Pool): unknown {
  if (r.chance(0.03)) return r.pick([null, undefined, 42, "start", "{", "[]", [], [{ action: "herd" }], true]);
  // The lifecycle counts twice: each new action would otherwise thin out the starts and prompts that
  // take the world into deep states.
  const action = r.chance(0.9) ? r.pick(WEIGHTED) : junkValue(r, pool);
  const p: Record<string, unknown> = { action };
  const relevant = typeof action === "string" ? RELEVANT[action] : undefined;
  const clean = relevant !== undefined && r.chance(0.5);
  const plausible: Record<string, () => unknown> = {
    agent: () => r.pick(["scout", "echo", "worker", "nope"]),
    agentId: () => r.pick(pool.live().length && r.chance(0.7) ? pool.live() : pool.agentIds.length ? pool.agentIds : ["a_0000000000"]),
    promptId: () => r.pick(pool.promptIds.length ? pool.promptIds : ["p_0000000000"]),
    promptIds: () => Array.from({ length: 1 + r.int(3) }, () => r.pick([...pool.promptIds, "p_0000000000", ...pool.agentIds])),
    message: () => r.pick(["hello", "x".repeat(5000)]),
    timeout: () => r.pick([0, 1, 5, "2"]),
    target: () => r.pick([...pool.labels, ...pool.agentIds, "nope"]),
    lines: () => r.pick([1, 40, "10"]),
    task: () => "do it",
    tasks: () =>
      [
        { agent: "scout", task: "a" },
        { agent: "echo", task: "b" },
      ].slice(0, 1 + r.int(2)),
    chain: () => [
      { agent: "scout", task: "a" },
      { agent: "echo", task: "{previous} b" },
    ],
    placement: () => r.pick(["tab", "pane", "workspace"]),
    label: () => `l${r.int(1000)}`,
    direction: () => r.pick(["right", "down"]),
    cwd: () => r.pick([".", "./", "nope"]),
    model: () => r.pick(["scripted/scripted-model", "x"]),
    agentScope: () => r.pick(["user", "both"]),
    confirmProjectAgents: () => r.pick([true, false, "true"]),
    keepOpen: () => r.pick([true, false, "false"]),
    all: () => r.pick([true, false]),
    notify: () => r.pick([true, false, "true"]),
    deliverAs: () => r.pick(["steer", "followUp", "later"]),
    requestId: () => r.pick(["r1", "r2", "", "x".repeat(300)]),
    background: () => r.pick([true, false]),
    unreadOnly: () => r.pick([true, false, "true"]),
    messageId: () => r.pick(["m_0000000000", "m_../../x", "p_0000000000"]),
    text: () => r.pick(["an answer", ""]),
    isolate: () => r.pick([true, false, "true"]),
    removeWorktree: () => r.pick([true, false]),
    force: () => r.pick([true, false]),
    squash: () => r.pick([true, false, "false"]),
    stat: () => r.pick([true, false]),
  };
  for (const f of FIELDS) {
    if (f === "action") continue;
    if (clean) {
      if (!relevant.includes(f) || !r.chance(f === "agent" || f === "agentId" || f === "message" ? 0.95 : 0.4)) continue;
      p[f] = plausible[f] && r.chance(0.9) ? plausible[f]() : junkValue(r, pool);
    } else if (r.chance(0.25)) {
      p[f] = plausible[f] && r.chance(0.6) ? plausible[f]() : junkValue(r, pool);
    }
  }
  // delegate takes exactly one of its three forms
  if (clean && action === "delegate")
    for (const k of r.pick([
      ["tasks", "chain"],
      ["agent", "task", "chain"],
      ["agent", "task", "tasks"],
    ]))
      delete p[k];
  if (r.chance(0.05)) return JSON.stringify(p);
  return p;
}

describe("schema fuzz: dispatch gives a result or a [code] error", { timeout: 300_000 }, () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-fuzz-"));
    await mkdir(join(dir, "agent", "agents"), { recursive: true });
    await writeFile(join(dir, "agent", "agents", "echo.md"), "---\nname: echo\ndescription: echoes\n---\nEcho.\n");
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`${CASES} random calls (seed ${SEED})`, async () => {
    const r = prng(SEED);
    const world = new MemoryWorld();
    const clock = new FakeClock();
    // The fuzz's cwd counts as a repository: isolation, evidence, diff and land are fuzzed too.
    const workspace = new MemoryWorkspace([dir, "/wt"]);
    const shepherd = new Shepherd({ runtime: world.runtime, files: world.files, owner: "s_fuzz", clock, startTimeoutMs: 10_000, workspace });
    const ctx: DispatchContext = {
      shepherd,
      settings: { ...DEFAULT_SETTINGS, waitTimeout: 5 },
      cwd: dir,
      agentDir: join(dir, "agent"),
      bundledDir: join(import.meta.dirname, "..", "..", "..", "agents"),
      trust: { hasUI: false },
      onProgress: () => undefined,
    };
    const live = () => [...shepherd.registry.agents.values()].filter((a) => a.state !== "closed").map((a) => a.agentId);
    const pool: Pool = { agentIds: [], promptIds: [], labels: [], live };
    const codes = new Map<string, number>();
    let results = 0;

    for (let i = 0; i < CASES; i++) {
      // The world moves between calls: answers, failures, dead panes, blocked sheep.
      for (const [agentId, s] of world.sheep) {
        for (const promptId of s.inbox.keys()) {
          if (!s.outbox.has(promptId) && r.chance(0.3))
            world.answer(agentId, promptId, "done", r.pick(["completed", "failed", "cancelled"] as const), "scripted");
        }
        if (s.paneId && r.chance(0.001)) world.killPane(agentId);
        if (r.chance(0.002)) s.snapshot.blocked = "approve?";
        else if (r.chance(0.05)) delete s.snapshot.blocked;
      }
      world.onLaunch = r.pick(["ready", "ready", "ready", "never", "exit"] as const);

      const params = randomParams(r, pool);
      const where = `case ${i} (FUZZ_SEED=${SEED}): ${describeParams(params)}`;
      let done = false;
      let outcome: { ok: true; value: Awaited<ReturnType<typeof dispatch>> } | { ok: false; error: unknown } | undefined;
      const call = dispatch(params, ctx).then(
        (value) => (outcome = { ok: true, value }),
        (error: unknown) => (outcome = { ok: false, error }),
      );
      void call.finally(() => (done = true));
      // Real I/O (agent files) gets real time; waits and start timeouts get fake days, and every
      // timeout a call can ask for ends within seven of them. Ten real seconds means a hang.
      const deadline = Date.now() + 10_000;
      while (!done && Date.now() < deadline) {
        await settle();
        if (done) break;
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (!done) await clock.advance(DAY, DAY);
      }
      assert.ok(done, `${where}: still running after 10 s (the fake clock had moved on by days)`);
      if (outcome!.ok) {
        results++;
        const v = outcome!.value;
        assert.equal(typeof v.details.action, "string", where);
        assert.ok(v.content.length > 0 && v.content.every((c) => c.type === "text" && typeof c.text === "string"), where);
        collect(v.details, pool);
      } else {
        const e = outcome!.error;
        assert.ok(e instanceof Error, `${where}: threw a non-Error ${String(e)}`);
        assert.match(e.message, /^\[[a-z_]+\] /, `${where}: ${e.stack}`);
        const code = /^\[([a-z_]+)\]/.exec(e.message)![1]!;
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }
    }
    const stats = `results ${results}, sheep ${pool.agentIds.length}, prompts ${pool.promptIds.length}, errors ${JSON.stringify(Object.fromEntries(codes))}`;
    // The run reached both sides: real results (sheep started and prompted) and several kinds of refusal.
    assert.ok(results > CASES / 10, stats);
    for (const code of ["invalid_params", "unknown_agent", "unknown_definition", "start_failed"]) assert.ok(codes.has(code), stats);
    assert.ok(pool.agentIds.length > 10 && pool.promptIds.length > 10, stats);
  });
});

function collect(details: Record<string, unknown>, pool: Pool) {
  const agent = details.agent as { agentId?: string; label?: string } | undefined;
  if (agent?.agentId) pool.agentIds.push(agent.agentId);
  if (agent?.label) pool.labels.push(agent.label);
  const prompt = details.prompt as { promptId?: string } | undefined;
  if (prompt?.promptId) pool.promptIds.push(prompt.promptId);
}

/** Params as text for a failure message, keeping what JSON would lose. */
function describeParams(p: unknown): string {
  const text = JSON.stringify(p, (_k, v: unknown) => {
    if (v === undefined) return "<undefined>";
    if (typeof v === "number" && !Number.isFinite(v)) return `<${v}>`;
    if (typeof v === "string" && v.length > 200) return `<${v.length} chars: ${v.slice(0, 20)}…>`;
    return v;
  });
  return text ?? String(p);
}
