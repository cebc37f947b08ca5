/** /metrics in the Prometheus text format (0.0.4): the herd now, and the feed's and the server's counters. */
import type { Shepherd } from "../core/shepherd.ts";
import type { DaySpend } from "../core/herd/spend.ts";
import { DURATION_BUCKETS, type FeedCounters } from "./feed.ts";
import { hostOf } from "./views.ts";

export interface ServerCounters {
  /** Requests answered, by route pattern. */
  requests: Map<string, number>;
  /** Requests answered with an error, by code. */
  errors: Map<string, number>;
  clients: number;
}

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

function labels(l: Record<string, string>): string {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
}

class Text {
  private readonly lines: string[] = [];
  family(name: string, type: "gauge" | "counter" | "histogram", help: string): this {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    return this;
  }
  sample(name: string, l: Record<string, string>, value: number): this {
    this.lines.push(`${name}${labels(l)} ${Number.isFinite(value) ? value : 0}`);
    return this;
  }
  toString(): string {
    return `${this.lines.join("\n")}\n`;
  }
}

export function metricsText(shepherd: Shepherd, feed: FeedCounters, server: ServerCounters, day?: DaySpend): string {
  const reg = shepherd.registry;
  const t = new Text();
  const sheep = new Map<string, { state: string; host: string; n: number }>();
  for (const rec of reg.agents.values()) {
    const host = hostOf(rec);
    const key = `${rec.state}\u0000${host}`;
    const s = sheep.get(key) ?? { state: rec.state, host, n: 0 };
    s.n++;
    sheep.set(key, s);
  }
  t.family("pi_shepherd_sheep", "gauge", "Sheep of this shepherd by state and host (closed ones as far as they are kept).");
  for (const s of sheep.values()) t.sample("pi_shepherd_sheep", { state: s.state, host: s.host }, s.n);
  const prompts = new Map<string, number>();
  for (const p of reg.prompts.values()) {
    const status = p.settled?.status ?? "pending";
    prompts.set(status, (prompts.get(status) ?? 0) + 1);
  }
  t.family("pi_shepherd_prompts", "gauge", "Prompts kept in the records, by status (pending: not settled yet).");
  for (const [status, n] of prompts) t.sample("pi_shepherd_prompts", { status }, n);
  const d = feed.durations;
  t.family("pi_shepherd_prompt_duration_seconds", "histogram", "How long settled prompts took.");
  for (const [i, b] of DURATION_BUCKETS.entries()) t.sample("pi_shepherd_prompt_duration_seconds_bucket", { le: String(b) }, d.buckets[i]!);
  t.sample("pi_shepherd_prompt_duration_seconds_bucket", { le: "+Inf" }, d.count);
  t.sample("pi_shepherd_prompt_duration_seconds_sum", {}, d.sum);
  t.sample("pi_shepherd_prompt_duration_seconds_count", {}, d.count);
  t.family("pi_shepherd_tokens_total", "counter", "Tokens of settled prompts, by kind.");
  t.sample("pi_shepherd_tokens_total", { kind: "input" }, feed.tokens.input);
  t.sample("pi_shepherd_tokens_total", { kind: "output" }, feed.tokens.output);
  t.family("pi_shepherd_cost_total", "counter", "Cost of settled prompts, where pi reports it.");
  t.sample("pi_shepherd_cost_total", {}, feed.cost);
  // Budgets (spec: Budgets): what this shepherd's sheep spent (live, and closed ones as far as they are kept), and the day's of every shepherd.
  const spent = { tokens: 0, outputTokens: 0, costUsd: 0 };
  let limited = 0;
  for (const rec of reg.agents.values()) {
    spent.tokens += rec.spent?.tokens ?? 0;
    spent.outputTokens += rec.spent?.outputTokens ?? 0;
    spent.costUsd += rec.spent?.costUsd ?? 0;
    if (rec.budget && rec.state !== "closed") limited++;
  }
  t.family("pi_shepherd_spent_tokens", "gauge", "Tokens this shepherd's sheep spent since they started, by kind (all: every token; output).");
  t.sample("pi_shepherd_spent_tokens", { kind: "all" }, spent.tokens);
  t.sample("pi_shepherd_spent_tokens", { kind: "output" }, spent.outputTokens);
  t.family("pi_shepherd_spent_cost_usd", "gauge", "Cost in USD this shepherd's sheep spent, where the model reports it.");
  t.sample("pi_shepherd_spent_cost_usd", {}, spent.costUsd);
  t.family("pi_shepherd_budgeted_sheep", "gauge", "Live sheep held to a budget.");
  t.sample("pi_shepherd_budgeted_sheep", {}, limited);
  if (day) {
    t.family("pi_shepherd_day_tokens", "gauge", "The day's tokens of every shepherd of the user (used: spent or reserved; limit: budgets.dailyTokens).");
    t.sample("pi_shepherd_day_tokens", { kind: "used" }, day.used.tokens);
    if (day.daily.dailyTokens !== undefined) t.sample("pi_shepherd_day_tokens", { kind: "limit" }, day.daily.dailyTokens);
    t.family(
      "pi_shepherd_day_cost_usd",
      "gauge",
      "The day's cost in USD of every shepherd of the user (used: spent or reserved; limit: budgets.dailyCostUsd).",
    );
    t.sample("pi_shepherd_day_cost_usd", { kind: "used" }, day.used.costUsd);
    if (day.daily.dailyCostUsd !== undefined) t.sample("pi_shepherd_day_cost_usd", { kind: "limit" }, day.daily.dailyCostUsd);
  }
  t.family("pi_shepherd_pushes_total", "counter", "Results and delegations pushed into the shepherd's conversation.");
  t.sample("pi_shepherd_pushes_total", {}, feed.pushes);
  t.family("pi_shepherd_errors_total", "counter", "Panel requests answered with an error, by code.");
  for (const [code, n] of server.errors) t.sample("pi_shepherd_errors_total", { code }, n);
  t.family("pi_shepherd_panel_clients", "gauge", "Open event streams.");
  t.sample("pi_shepherd_panel_clients", {}, server.clients);
  t.family("pi_shepherd_panel_requests_total", "counter", "Panel requests answered, by route.");
  for (const [route, n] of server.requests) t.sample("pi_shepherd_panel_requests_total", { route }, n);
  return t.toString();
}
