import type { Push } from "../core/courier.ts";

/**
 * What a person sees of a shepherd call in pi's transcript. Pure text with colours from an
 * injected theme, so it is tested without a terminal; extensions/render.ts wraps it.
 */
import type { Evidence, SheepView } from "../core/types.ts";
import { fileLine, inFiles, visibleControls } from "./evidence-text.ts";
import { sameReason } from "./format.ts";
import { sheepName, stateClock } from "./widget-text.ts";

export interface Paint {
  fg(color: "accent" | "success" | "error" | "warning" | "muted" | "dim" | "toolTitle", text: string): string;
  bold(text: string): string;
}

type Args = Record<string, unknown>;

const oneLine = (s: string, max: number) => {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** Text shown whole when expanded (Ctrl+O), else one line cut at `max`. */
function preview(text: string, max: number, expanded: boolean, indent: string): string {
  return expanded ? text.split("\n").join(`\n${indent}`) : oneLine(text, max);
}

export function renderCallText(args: Args, t: Paint, expanded = false): string {
  const action = typeof args.action === "string" ? args.action : "?";
  const head = t.fg("toolTitle", t.bold(`shepherd ${action}`));
  const s = (k: string) => (typeof args[k] === "string" ? (args[k] as string) : undefined);
  const parts: string[] = [];
  switch (action) {
    case "start":
      parts.push(t.fg("accent", s("agent") ?? "?"));
      if (s("label")) parts.push(t.fg("muted", `as ${s("label")}`));
      if (s("placement")) parts.push(t.fg("dim", `[${s("placement")}]`));
      if (args.isolate === true) parts.push(t.fg("dim", "⎇ isolated"));
      break;
    case "prompt":
      parts.push(t.fg("accent", s("agentId") ?? "?"), t.fg("dim", preview(s("message") ?? "", 60, expanded, "  ")));
      break;
    case "wait": {
      const ids = Array.isArray(args.promptIds) ? (args.promptIds as unknown[]).map(String) : s("promptId") ? [s("promptId")!] : [];
      parts.push(t.fg("accent", ids.length > 3 ? `${ids.slice(0, 3).join(", ")} +${ids.length - 3}` : ids.join(", ")));
      if (args.timeout !== undefined) parts.push(t.fg("dim", `(timeout ${String(args.timeout)}s)`));
      break;
    }
    case "status":
    case "close":
    case "land":
      parts.push(t.fg("accent", s("agentId") ?? "?"));
      if (args.removeWorktree === true) parts.push(t.fg("dim", args.force === true ? "(remove worktree, force)" : "(remove worktree)"));
      if (args.squash === true) parts.push(t.fg("dim", "(squash)"));
      break;
    case "read":
    case "diff":
      parts.push(t.fg("accent", s("target") ?? "?"));
      break;
    case "delegate": {
      const list = (Array.isArray(args.tasks) ? args.tasks : Array.isArray(args.chain) ? args.chain : []) as { agent?: string; task?: string }[];
      if (args.isolate === true) parts.push(t.fg("dim", "⎇"));
      if (list.length === 0) {
        parts.push(t.fg("accent", s("agent") ?? "?"), t.fg("dim", preview(s("task") ?? "", 60, expanded, "  ")));
      } else {
        const mode = Array.isArray(args.chain) ? "chain" : "parallel";
        parts.push(t.fg("muted", `${mode} (${list.length} ${mode === "chain" ? "steps" : "tasks"})`));
        // {previous} stays in view: it is where the step before's answer goes.
        const shown = (expanded ? list : list.slice(0, 3)).map(
          (x, i) => `\n  ${i + 1}. ${t.fg("accent", String(x.agent ?? "?"))} ${t.fg("dim", preview(String(x.task ?? ""), 60, expanded, "     "))}`,
        );
        parts.push(shown.join("") + (!expanded && list.length > 3 ? t.fg("dim", `\n  … ${list.length - 3} more`) : ""));
      }
      break;
    }
  }
  return [head, ...parts].join(" ");
}

interface ResultItem {
  status?: string;
  text?: string;
  error?: string;
  agent?: string;
  label?: string;
  agentId?: string;
  promptId?: string;
  usage?: { input?: number; output?: number; cost?: number };
  evidence?: Evidence;
  evidenceError?: string;
  worktree?: { branch?: string };
}

const ICONS: Record<string, [string, Parameters<Paint["fg"]>[0]]> = {
  completed: ["✓", "success"],
  failed: ["✗", "error"],
  timeout: ["⏱", "warning"],
  cancelled: ["⊘", "warning"],
  blocked: ["⏸", "warning"],
  queued: ["·", "dim"],
  starting: ["…", "muted"],
  working: ["⏳", "muted"],
  waiting: ["⏳", "muted"],
};

function icon(status: string | undefined, t: Paint): string {
  const [ch, color] = ICONS[status ?? ""] ?? ["?", "muted"];
  return t.fg(color, ch);
}

function usageLine(u: ResultItem["usage"], t: Paint): string {
  if (!u || (u.input === undefined && u.output === undefined)) return "";
  const cost = u.cost ? ` $${u.cost.toFixed(4)}` : "";
  return t.fg("dim", ` ↑${u.input ?? 0} ↓${u.output ?? 0}${cost}`);
}

/** ` +12 −3 in 4 files` after a sheep's name: what it changed, at a glance. */
function changesLine(i: ResultItem, t: Paint): string {
  const e = i.evidence;
  const where = i.worktree?.branch ? t.fg("dim", ` ⎇ ${i.worktree.branch}`) : "";
  if (!e) return (i.evidenceError ? t.fg("warning", " no evidence") : "") + where;
  if (e.fileCount === 0) return t.fg("dim", " no changes") + where;
  return ` ${t.fg("success", `+${e.insertions}`)} ${t.fg("error", `−${e.deletions}`)}${t.fg("dim", ` ${inFiles(e.fileCount)}`)}${where}`;
}

/** Expanded: every changed file, and where the whole patch is. */
function changedFiles(i: ResultItem, t: Paint): string {
  const e = i.evidence;
  if (!e || e.fileCount === 0) return i.evidenceError ? `\n    ${t.fg("warning", i.evidenceError)}` : "";
  const lines = e.files.map((f) => `    ${t.fg("dim", fileLine(f))}`);
  if (e.fileCount > e.files.length) lines.push(`    ${t.fg("dim", `… ${e.fileCount - e.files.length} more files`)}`);
  lines.push(`    ${t.fg("dim", `patch: ${e.patchPath}`)}`);
  if (e.shared) lines.push(`    ${t.fg("warning", "in your checkout: may include edits made there meanwhile")}`);
  return `\n${lines.join("\n")}`;
}

export interface RenderOptions {
  expanded: boolean;
  isPartial: boolean;
  isError: boolean;
  /** The moment of drawing: progress clocks are read then, as the widget's are. */
  now?: number;
  /** The sheep as the live views show it now; an unfinished item follows it, not its last report. */
  live?: (agentId: string) => SheepView | undefined;
}

const FINAL = new Set(["completed", "failed", "timeout", "cancelled", "blocked"]);

type ProgressItem = { agent?: string; label?: string; agentId?: string; promptId?: string; state?: string; since?: string };

/** One progress item as the widget shows its sheep: the live view wins until the item is final. */
function progressLine(i: ProgressItem, o: RenderOptions, t: Paint): string {
  const reported = i.state ?? "waiting";
  const final = FINAL.has(reported);
  const view = i.agentId && !final ? o.live?.(i.agentId) : undefined;
  const state = view?.state ?? reported;
  const since = final ? undefined : view ? view.since : i.since;
  const name = sheepName(view?.label ?? i.label, view?.agent ?? i.agent) || i.promptId || "";
  return `${icon(state, t)} ${name} ${t.fg("dim", `· ${stateClock(state, since, o.now ?? Date.now())}`)}`;
}

export function renderResultText(
  result: { content?: { type: string; text?: string }[]; details?: Record<string, unknown> },
  o: RenderOptions,
  t: Paint,
): string {
  const text = (result.content ?? []).map((c) => c.text ?? "").join("");
  if (o.isError) return t.fg("error", `✗ ${text}`);
  const d = result.details ?? {};
  const progress = d.progress as { done?: number; total?: number; items?: ProgressItem[] } | undefined;
  if (o.isPartial && progress) {
    const lines = [t.fg("muted", `${progress.done ?? 0}/${progress.total ?? 0} done`)];
    for (const i of progress.items ?? []) lines.push(progressLine(i, o, t));
    return lines.join("\n");
  }
  const items = (Array.isArray(d.results) ? d.results : []) as ResultItem[];
  if (items.length === 0) {
    // A diff's text holds the repository's bytes: an escape sequence there must not drive the terminal.
    const lines = visibleControls(text).split("\n");
    return o.expanded || lines.length <= 3 ? lines.join("\n") : `${lines.slice(0, 3).join("\n")}\n${t.fg("dim", `… ${lines.length - 3} more lines`)}`;
  }
  const ok = items.filter((i) => i.status === "completed").length;
  const head = t.fg(ok === items.length ? "success" : ok === 0 ? "error" : "warning", `${ok}/${items.length} completed`);
  // Results that failed alike (an abort cancels every task with the same words) share one block.
  const groups = sameReason(items, (i) => (i.status === "completed" ? undefined : `${i.status} ${i.error ?? ""}`));
  const blocks = groups.map((group) => {
    const i = group[0]!;
    const name = group.map((x) => sheepName(x.label, x.agent) || x.promptId || x.agentId || "").join(", ");
    const body = i.status === "completed" ? (i.text ?? "") : (i.error ?? i.status ?? "");
    const bodyLines = body.split("\n");
    const shown = o.expanded ? bodyLines : bodyLines.slice(0, 3);
    const more = !o.expanded && bodyLines.length > 3 ? `\n    ${t.fg("dim", `… ${bodyLines.length - 3} more lines`)}` : "";
    const color = i.status === "completed" ? "muted" : i.status === "failed" ? "error" : "warning";
    const head = `${icon(i.status, t)} ${t.bold(name)}${usageLine(i.usage, t)}${changesLine(i, t)}`;
    return `${head}\n${shown.map((l) => `    ${t.fg(color, l)}`).join("\n")}${more}${o.expanded ? changedFiles(i, t) : ""}`;
  });
  return [head, ...blocks].join("\n");
}

/** A pushed message in the transcript: who and what in one line, then the text (three lines unless expanded). */
export function renderPushText(content: string, push: Push | undefined, expanded: boolean, t: Paint): string {
  const head = (() => {
    if (!push) return t.fg("accent", "🐑 shepherd");
    switch (push.kind) {
      case "result":
        return `${icon(push.item.status, t)} ${t.fg("toolTitle", t.bold(`🐑 ${push.label}`))} ${t.fg("muted", `${push.item.promptId} ${push.item.status}`)}`;
      case "question":
        return `${t.fg("warning", "?")} ${t.fg("toolTitle", t.bold(`🐑 ${push.label} asks`))} ${t.fg("muted", push.message.messageId)}${push.message.awaitReply ? t.fg("dim", " (waits for a reply)") : ""}`;
      case "delegation": {
        const ok = push.items.filter((i) => i.status === "completed").length;
        const color = ok === push.items.length ? "success" : ok === 0 ? "error" : "warning";
        return `${t.fg("toolTitle", t.bold(`🐑 background ${push.mode}`))} ${t.fg(color, `${ok}/${push.items.length} completed`)} ${t.fg("muted", push.delegationId)}`;
      }
    }
  })();
  // The first line of the content is the header the model reads; the person sees the head instead.
  const body = content.split("\n").slice(1).join("\n").replace(/^\n+/, "");
  const lines = body.split("\n");
  const shown = expanded || lines.length <= 3 ? lines : [...lines.slice(0, 3), t.fg("dim", `… ${lines.length - 3} more lines (Ctrl+O expands)`)];
  return [head, ...shown.map((l) => `  ${l}`)].join("\n");
}
