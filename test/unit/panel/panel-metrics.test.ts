/**
 * /metrics parses as the Prometheus text format (0.0.4) line by line, and holds the named
 * families with their types: sheep by state and host, prompts by status, prompt durations
 * (a histogram whose buckets only grow), tokens and cost, pushes, errors by code.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ask, type PanelWorld, panelWorld } from "../../support/panel-world.ts";
import { parsePromptId } from "../../../src/domain/ids.ts";

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
const SAMPLE = new RegExp(`^(${NAME})(\\{(?:${LABEL})(?:,${LABEL})*\\})? (-?[0-9.eE+-]+|NaN|\\+Inf|-Inf)$`);

interface Family {
  type: string;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

/** A strict reader of the text format: every line a HELP, a TYPE or a sample of the family typed last. */
function parsePrometheus(text: string): Map<string, Family> {
  assert.ok(text.endsWith("\n"), "ends with a newline");
  const families = new Map<string, Family>();
  let current: string | undefined;
  for (const line of text.slice(0, -1).split("\n")) {
    const help = /^# HELP ([^ ]+) (.*)$/.exec(line);
    if (help) continue;
    const type = /^# TYPE ([^ ]+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      assert.ok(!families.has(type[1]!), `${type[1]} typed once`);
      families.set(type[1]!, { type: type[2]!, samples: [] });
      current = type[1];
      continue;
    }
    const m = SAMPLE.exec(line);
    assert.ok(m, `a well-formed sample line: ${JSON.stringify(line)}`);
    const name = m[1]!;
    assert.ok(current && (name === current || name.startsWith(`${current}_`)), `${name} belongs to the family typed before it (${current})`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").slice(1, -1).matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    families.get(current)!.samples.push({ name, labels, value: Number(m[3]) });
  }
  return families;
}

describe("panel /metrics", () => {
  let w: PanelWorld;
  before(async () => {
    w = await panelWorld();
  });
  after(() => w.close());

  it("parses as Prometheus text and holds every named family, counting what happened", async () => {
    const a = await w.start("m-1");
    await w.start('m"2\\odd');
    const post = (path: string, body: object) => ask(w.port, { method: "POST", path, headers: w.authed({ "content-type": "application/json" }), body });
    const { promptId } = (await post(`/api/v1/sheep/${a.agentId}/prompt`, { message: "measure" })).json() as { promptId: string };
    w.world.mem(a.agentId).outbox.set(promptId, {
      promptId,
      status: "completed",
      text: "ok",
      usage: { input: 1000, output: 50, cost: 0.25 },
      startedAt: new Date(Date.now() - 7000).toISOString(),
      finishedAt: new Date().toISOString(),
    });
    w.world.ring(a.agentId);
    await w.shepherd.wait([parsePromptId(promptId)], { timeoutSec: 5 });
    await post(`/api/v1/sheep/${a.agentId}/prompt`, {}); // an error: invalid_params
    await new Promise((r) => setImmediate(r));
    const m = await ask(w.port, { path: "/metrics", headers: w.authed() });
    assert.equal(m.status, 200);
    assert.match(String(m.headers["content-type"]), /^text\/plain; version=0\.0\.4/);
    const f = parsePrometheus(m.text);
    const types = Object.fromEntries([...f].map(([k, v]) => [k, v.type]));
    assert.deepEqual(types, {
      pi_shepherd_sheep: "gauge",
      pi_shepherd_prompts: "gauge",
      pi_shepherd_prompt_duration_seconds: "histogram",
      pi_shepherd_tokens_total: "counter",
      pi_shepherd_cost_total: "counter",
      // Budgets (issue 35); the day's families only where the budgets setting has a daily limit.
      pi_shepherd_spent_tokens: "gauge",
      pi_shepherd_spent_cost_usd: "gauge",
      pi_shepherd_budgeted_sheep: "gauge",
      pi_shepherd_pushes_total: "counter",
      pi_shepherd_errors_total: "counter",
      pi_shepherd_panel_clients: "gauge",
      pi_shepherd_panel_requests_total: "counter",
    });
    const value = (family: string, name: string, labels: Record<string, string> = {}) =>
      f.get(family)!.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    assert.equal(value("pi_shepherd_sheep", "pi_shepherd_sheep", { state: "idle", host: "local" }), 2);
    assert.equal(value("pi_shepherd_prompts", "pi_shepherd_prompts", { status: "completed" }), 1);
    const buckets = f.get("pi_shepherd_prompt_duration_seconds")!.samples.filter((s) => s.name.endsWith("_bucket"));
    assert.deepEqual(
      buckets.map((b) => [b.labels.le, b.value]),
      [
        ["1", 0],
        ["5", 0],
        ["15", 1],
        ["60", 1],
        ["300", 1],
        ["900", 1],
        ["3600", 1],
        ["+Inf", 1],
      ],
    );
    assert.equal(value("pi_shepherd_prompt_duration_seconds", "pi_shepherd_prompt_duration_seconds_count"), 1);
    assert.equal(value("pi_shepherd_tokens_total", "pi_shepherd_tokens_total", { kind: "input" }), 1000);
    assert.equal(value("pi_shepherd_tokens_total", "pi_shepherd_tokens_total", { kind: "output" }), 50);
    assert.equal(value("pi_shepherd_cost_total", "pi_shepherd_cost_total"), 0.25);
    assert.equal(value("pi_shepherd_pushes_total", "pi_shepherd_pushes_total"), 0);
    assert.equal(value("pi_shepherd_errors_total", "pi_shepherd_errors_total", { code: "invalid_params" }), 1);
    assert.ok((value("pi_shepherd_panel_requests_total", "pi_shepherd_panel_requests_total", { route: "/api/v1/sheep/:id/prompt" }) ?? 0) >= 2);
  });
});
