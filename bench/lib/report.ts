/**
 * Turns raw samples into the published figures: one row per metric, a column per runtime,
 * the target and whether every runtime met it.
 */
import type { PeerSamples, PeerSeries } from "./peer.ts";
import { sandboxSummary } from "./sandbox-summary.ts";
import type { BareMode } from "./runtime-fixture.ts";
import { median, ms, quantile, round, summarize } from "./stats.ts";
import type { Got, Row, RowMaker, RuntimeRun } from "./row.ts";
import { TOOL_TOKENS_BEFORE } from "./tool-tokens.ts";
import { userRows } from "./user-rows.ts";
import { TOOL_TOKEN_BUDGET } from "../../src/edge/tool-cost.ts";
import { remoteRows } from "../remote.ts";
import { sandboxRows } from "../sandbox.ts";
import { herdrTerminalRows, terminalRows } from "../terminal.ts";

export type { Row, RuntimeRun } from "./row.ts";

type With<K extends keyof RuntimeRun> = RuntimeRun & Required<Pick<RuntimeRun, K>>;
/** A row's pick for the runs that measured its part; the others show "-". */
const withCore = (f: (r: With<"core">) => Got) => (r: RuntimeRun) => (r.core ? f(r as With<"core">) : undefined);
const withRpc = (f: (r: With<"rpc">) => Got) => (r: RuntimeRun) => (r.rpc ? f(r as With<"rpc">) : undefined);

const pct = (cpuMs: number, windowMs: number) => round((cpuMs / windowMs) * 100, 2);
const perSheepSecond = (calls: number, sheep: number, windowMs: number) => round(calls / sheep / (windowMs / 1000), 3);

export function buildRows(runs: Record<string, RuntimeRun>): Row[] {
  const names = Object.keys(runs);
  const rows: Row[] = [];
  const row: RowMaker = (metric, via, unit, pick, target) => {
    const values: Record<string, number | string> = {};
    const detail: Record<string, string> = {};
    const met: Record<string, boolean> = {};
    for (const n of names) {
      const got = pick(runs[n]!);
      if (!got) continue;
      values[n] = got.value;
      if (got.detail) detail[n] = got.detail;
      if (target && typeof got.value === "number" && (!target.runtimes || target.runtimes.includes(n))) met[n] = target.ok(got.value);
    }
    if (Object.keys(values).length) rows.push({ metric, via, unit, values, detail, ...(target ? { target: target.text, met } : {}) });
  };
  const typed = (r: With<"core">) => median(r.core.bareBootMs.typed ?? []);

  row(
    "one multiplexer process (reference)",
    "bench",
    "ms",
    withCore((r) => ({ value: round(median(r.core.multiplexerCallMs), 1) })),
  );
  row(
    "start / bare pi boot",
    "core",
    "x",
    withCore((r) => ({ value: round(median(r.core.startMs) / typed(r), 3), detail: `${ms(median(r.core.startMs))} / ${ms(typed(r))}` })),
    { text: "<= 1.15", ok: (v) => v <= 1.15 },
  );
  row(
    "start / bare pi boot, no shell (reference)",
    "core",
    "x",
    withCore((r) => {
      const direct = r.core.bareBootMs.direct;
      return direct?.length
        ? { value: round(median(r.core.startMs) / median(direct), 3), detail: `${ms(median(r.core.startMs))} / ${ms(median(direct))}` }
        : undefined;
    }),
  );
  const startOver = (mode: BareMode) =>
    withRpc((r) => {
      const bare = r.rpc.bareBootMs[mode];
      if (!bare?.length) return undefined;
      const start = median(r.rpc.pairedStartToolMs);
      return { value: round(start / median(bare), 3), detail: `${ms(start)} / ${ms(median(bare))}` };
    });
  row("start tool call / bare pi boot", "rpc", "x", startOver("typed"), { text: "<= 1.15", ok: (v) => v <= 1.15 });
  // pi as the pane's own command is the least any start can cost: the cold start's reference.
  row("cold start tool call / bare pi boot, no shell", "rpc", "x", startOver("direct"), { text: "<= 1.10", ok: (v) => v <= 1.1 });
  row(
    "prompt",
    "core",
    "ms",
    withCore((r) => ({ value: round(median(r.core.promptMs), 2) })),
    { text: "< 20 ms", ok: (v) => v < 20 },
  );
  row(
    "prompt tool call",
    "rpc",
    "ms",
    withRpc((r) => ({ value: round(median(r.rpc.promptToolMs), 2) })),
    { text: "< 20 ms", ok: (v) => v < 20 },
  );
  row(
    "answer to wait",
    "core",
    "ms",
    withCore((r) => ({
      value: round(median(r.core.answerToWaitMs), 1),
      detail: `last byte->result file ${ms(median(r.core.lastByteToResultFileMs))}, file->wait ${ms(median(r.core.resultFileToWaitMs))}`,
    })),
    { text: "< 25 ms", ok: (v) => v < 25 },
  );
  row(
    "answer to wait tool result",
    "rpc",
    "ms",
    withRpc((r) => ({ value: round(median(r.rpc.answerToWaitToolMs), 1) })),
    { text: "< 25 ms", ok: (v) => v < 25 },
  );
  const sizes = [...new Set(Object.values(runs).flatMap((r) => (r.core?.herd ?? []).map((h) => h.n)))];
  for (const n of sizes) {
    const biggest = n === Math.max(...sizes);
    row(
      `herd of ${n}: tail after the last answer`,
      "core",
      "ms",
      withCore((r) => {
        const rounds = r.core.herd.filter((h) => h.n === n);
        return {
          value: round(median(rounds.map((h) => h.tailMs)), 1),
          detail: `${rounds.every((h) => h.overlapped) ? "overlapped" : "NOT overlapped"}, answers within ${ms(median(rounds.map((h) => h.answerSpreadMs)))}, after the last result file ${ms(median(rounds.map((h) => h.afterLastResultMs)))}`,
        };
      }),
      biggest ? { text: "< 60 ms", ok: (v) => v < 60 } : undefined,
    );
  }
  row(
    "herd: all sheep worked at the same time",
    "core",
    "",
    withCore((r) => ({ value: r.core.herd.every((h) => h.overlapped) ? "yes" : "no" })),
  );
  row(
    "resident memory of a sheep's pane / a bare pi's",
    "core",
    "x",
    withCore((r) => {
      const m = r.core.memory;
      if (!m?.length) return undefined;
      const mb = (kb: number) => round(kb / 1024, 1);
      return {
        value: round(median(m.map((x) => x.sheepKb / x.bareKb)), 3),
        detail: `${mb(median(m.map((x) => x.sheepKb)))} / ${mb(median(m.map((x) => x.bareKb)))} MB; the pane: ${m[0]!.sheepProcesses.join(" + ")}`,
      };
    }),
    { text: "<= 1.05 (tmux)", ok: (v) => v <= 1.05, runtimes: ["tmux"] },
  );
  row(
    "CPU while waiting on 8 sheep",
    "core",
    "% of a core",
    withCore((r) => ({
      value: pct(r.core.overhead.cpuMs, r.core.overhead.windowMs),
      detail: `idle ${pct(r.core.overhead.idle.cpuMs, r.core.overhead.idle.windowMs)}%, multiplexer children ${pct(r.core.overhead.childCpuMs, r.core.overhead.windowMs)}%`,
    })),
    { text: "< 2 %", ok: (v) => v < 2 },
  );
  row(
    "CPU while one wait waits on 16 busy sheep (pi shepherd process)",
    "rpc",
    "% of a core",
    withRpc((r) => ({
      value: pct(r.rpc.overhead.cpuMs, r.rpc.overhead.windowMs),
      detail: `${r.rpc.overhead.sheep} sheep; idle pi ${pct(r.rpc.overhead.idle.cpuMs, r.rpc.overhead.idle.windowMs)}%`,
    })),
    { text: "<= 1 %", ok: (v) => v <= 1 },
  );
  row(
    "multiplexer processes while waiting",
    "core",
    "/sheep/s",
    withCore((r) => ({
      value: perSheepSecond(r.core.overhead.multiplexerCalls, r.core.overhead.sheep, r.core.overhead.windowMs),
      detail: `${r.core.overhead.multiplexerCalls} in ${ms(r.core.overhead.windowMs)}`,
    })),
    { text: "<= 1", ok: (v) => v <= 1 },
  );
  row(
    "multiplexer processes while waiting",
    "rpc",
    "/sheep/s",
    withRpc((r) => ({
      value: perSheepSecond(r.rpc.overhead.multiplexerCalls, r.rpc.overhead.sheep, r.rpc.overhead.windowMs),
      detail: `${r.rpc.overhead.multiplexerCalls} in ${ms(r.rpc.overhead.windowMs)}`,
    })),
    { text: "<= 1", ok: (v) => v <= 1 },
  );
  panelRows(row);
  terminalRows(row);
  herdrTerminalRows(row);
  userRows(row);
  remoteRows(row);
  sandboxRows(row);
  row(
    "tokens the tool adds to each model request",
    "bench",
    "tokens",
    (r) =>
      r.toolTokens && {
        value: r.toolTokens.tokens,
        detail: `before ${TOOL_TOKENS_BEFORE}; ${r.toolTokens.chars} chars: description ${r.toolTokens.descriptionChars}, schema ${r.toolTokens.schemaChars}, system prompt ${r.toolTokens.promptChars}`,
      },
    { text: `<= ${TOOL_TOKEN_BUDGET}`, ok: (v) => v <= TOOL_TOKEN_BUDGET },
  );
  row(
    "sandbox egress: a model request, through forwarder + proxy - direct",
    "bench",
    "ms",
    (r) => {
      if (!r.egress) return undefined;
      const [p, d] = [median(r.egress.proxiedMs), median(r.egress.directMs)];
      return { value: round(p - d, 2), detail: `proxied ${ms(p)} / direct ${ms(d)}, n ${r.egress.proxiedMs.length}` };
    },
    { text: "<= +5 ms", ok: (v) => v <= 5 },
  );
  row(
    "sandbox egress: proxy memory, 16 sheep sockets with a tunnel each",
    "bench",
    "MB",
    (r) =>
      r.egress && {
        value: round((r.egress.rssAfterKiB - r.egress.rssBeforeKiB) / 1024, 1),
        detail: `RSS ${r.egress.rssBeforeKiB} -> ${r.egress.rssAfterKiB} KiB`,
      },
    { text: "<= 30 MB", ok: (v) => v <= 30 },
  );
  return rows;
}

/** The panel's rows (issue 25): its list route, an event's way to an open page, and the CPU of waiting with it on. */
function panelRows(row: RowMaker): void {
  const withPanel = (f: (p: NonNullable<RuntimeRun["panel"]>) => Got) => (r: RuntimeRun) => (r.panel ? f(r.panel) : undefined);
  row(
    "panel GET /api/v1/sheep, 64 sheep",
    "core",
    "ms",
    withPanel((p) => ({ value: round(median(p.listMs), 2), detail: `${p.listSheep} sheep, p90 ${ms(quantile(p.listMs, 0.9))}` })),
    { text: "<= 20 ms", ok: (v) => v <= 20 },
  );
  row(
    "panel event to an open page (result written → SSE)",
    "rpc",
    "ms",
    withPanel((p) => ({ value: round(median(p.eventMs), 1), detail: `n=${p.eventMs.length}, p90 ${ms(quantile(p.eventMs, 0.9))}` })),
    { text: "<= 100 ms median", ok: (v) => v <= 100 },
  );
  row(
    "panel on, one page: shepherd CPU while waiting",
    "rpc",
    "%",
    withPanel((p) => ({ value: pct(p.cpu.cpuMs, p.cpu.windowMs), detail: `${p.cpu.sheep} sheep, ${p.cpu.events} events in ${ms(p.cpu.windowMs)}` })),
    { text: "<= 1 %", ok: (v) => v <= 1 },
  );
}

export function renderTable(rows: Row[], names: string[]): string {
  const header = ["metric", "via", ...names, "target", ""];
  const body = rows.map((r) => [
    r.metric,
    r.via,
    ...names.map((n) => {
      const v = r.values[n];
      if (v === undefined) return "-";
      const d = r.detail[n];
      return `${v}${r.unit && typeof v === "number" ? ` ${r.unit}` : ""}${d ? ` (${d})` : ""}`;
    }),
    r.target ?? "",
    verdict(r),
  ]);
  return formatTable(header, body);
}

/** Columns padded to their widest cell, a rule under the header. */
export function formatTable(header: string[], body: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join(" | ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("-|-"), ...body.map(line)].join("\n");
}

/** "met", or which runtimes missed the target. */
export function verdict(r: Row): string {
  // A row whose every value is text (n/a) was judged for no runtime.
  if (!r.met || Object.keys(r.met).length === 0) return "";
  const missed = Object.entries(r.met)
    .filter(([, ok]) => !ok)
    .map(([n]) => n);
  return missed.length === 0 ? "met" : `MISSED (${missed.join(", ")})`;
}

/** Raw samples condensed for the JSON file: summaries, not thousands of numbers. */
export function summarizeRun(r: RuntimeRun) {
  const c = r.core;
  const samples = (byMode: Partial<Record<BareMode, number[]>>) => Object.fromEntries(Object.entries(byMode).map(([k, v]) => [k, summarize(v)]));
  const series = (x: PeerSeries) => ({ ms: summarize(x.ms), toModelMs: summarize(x.toModelMs), fromAnswerMs: summarize(x.fromAnswerMs) });
  const peer = (p: PeerSamples) => ({ one: series(p.one), four: series(p.four) });
  return {
    ...(c
      ? {
          core: {
            multiplexerCallMs: summarize(c.multiplexerCallMs),
            startMs: summarize(c.startMs),
            bareBootMs: samples(c.bareBootMs),
            promptMs: summarize(c.promptMs),
            answerToWaitMs: summarize(c.answerToWaitMs),
            lastByteToResultFileMs: summarize(c.lastByteToResultFileMs),
            resultFileToWaitMs: summarize(c.resultFileToWaitMs),
            herd: c.herd.map((h) => ({
              ...h,
              tailMs: round(h.tailMs, 1),
              afterLastResultMs: round(h.afterLastResultMs, 1),
              answerSpreadMs: round(h.answerSpreadMs, 1),
            })),
            overhead: c.overhead,
            memory: c.memory,
          },
        }
      : {}),
    ...(r.rpc
      ? {
          rpc: {
            startToolMs: summarize(r.rpc.startToolMs),
            pairedStartToolMs: summarize(r.rpc.pairedStartToolMs),
            bareBootMs: samples(r.rpc.bareBootMs),
            promptToolMs: summarize(r.rpc.promptToolMs),
            answerToWaitToolMs: summarize(r.rpc.answerToWaitToolMs),
            overhead: r.rpc.overhead,
          },
        }
      : {}),
    ...(r.warmStart !== undefined ? { warmStart: r.warmStart && { pool: r.warmStart.pool, startToolMs: summarize(r.warmStart.startToolMs) } } : {}),
    ...(r.terminal ? { terminal: { echoMs: summarize(r.terminal.echoMs), cpu: r.terminal.cpu } } : {}),
    ...(r.herdrTerminal
      ? {
          herdrTerminal: {
            echoMs: summarize(r.herdrTerminal.echoMs),
            afterKeysMs: summarize(r.herdrTerminal.afterKeysMs),
            callMs: summarize(r.herdrTerminal.callMs),
            failedKeys: r.herdrTerminal.failedKeys,
            cpu: r.herdrTerminal.cpu,
          },
        }
      : {}),
    ...(r.panel ? { panel: { listMs: summarize(r.panel.listMs), listSheep: r.panel.listSheep, eventMs: summarize(r.panel.eventMs), cpu: r.panel.cpu } } : {}),
    ...(r.subagents
      ? {
          subagents: {
            cold: { delegate: peer(r.subagents.cold.delegate), subagents: peer(r.subagents.cold.subagents) },
            default: r.subagents.default
              ? { delegate: peer(r.subagents.default.delegate), subagents: peer(r.subagents.default.subagents), memory: r.subagents.default.memory }
              : null,
            pool: r.subagents.pool
              ? { size: r.subagents.pool.size, delegate: peer(r.subagents.pool.delegate), subagents: peer(r.subagents.pool.subagents) }
              : null,
          },
        }
      : {}),
    ...(r.firstCall ? { firstCall: r.firstCall } : {}),
    ...(r.peer
      ? {
          peer: {
            cold: { delegate: peer(r.peer.cold.delegate), example: peer(r.peer.cold.example) },
            warm: r.peer.warm ? { pool: r.peer.warm.pool, delegate: peer(r.peer.warm.delegate), example: peer(r.peer.warm.example) } : null,
            ...(r.peer.floor ? { floor: { interactiveMs: summarize(r.peer.floor.interactiveMs), headlessMs: summarize(r.peer.floor.headlessMs) } } : {}),
          },
        }
      : {}),
    ...(r.egress
      ? {
          egress: {
            directMs: summarize(r.egress.directMs),
            proxiedMs: summarize(r.egress.proxiedMs),
            rssBeforeKiB: r.egress.rssBeforeKiB,
            rssAfterKiB: r.egress.rssAfterKiB,
          },
        }
      : {}),
    ...(r.sandbox ? { sandbox: sandboxSummary(r.sandbox) } : {}),
    ...(r.toolTokens ? { toolTokens: r.toolTokens } : {}),
    ...(r.remote
      ? {
          remote: {
            firstStartMs: round(r.remote.firstStartMs, 1),
            localStartMs: summarize(r.remote.localStartMs),
            remoteStartMs: summarize(r.remote.remoteStartMs),
            localPromptMs: summarize(r.remote.localPromptMs),
            remotePromptMs: summarize(r.remote.remotePromptMs),
            localAnswerToWaitMs: summarize(r.remote.localAnswerToWaitMs),
            remoteAnswerToWaitMs: summarize(r.remote.remoteAnswerToWaitMs),
            overhead: r.remote.overhead,
            connections: r.remote.connections,
          },
        }
      : {}),
  };
}
