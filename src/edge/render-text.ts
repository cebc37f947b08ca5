/**
 * What a person sees of a shepherd call in pi's transcript. Pure text with colours from an
 * injected theme, so it is tested without a terminal; extensions/render.ts wraps it.
 *
 * Every text a sheep, its model, an agent file or the shepherd's model wrote (answers, messages,
 * labels, errors quoting a sheep, task previews) is made printable here, piece by piece before
 * the theme colours it: the model's own copy (the result's content) keeps the exact text.
 */
import type { Push } from "../core/async/courier.ts";
import { printable } from "../domain/printable.ts";
import type { CallArgs, Paint } from "../actions/call-text.ts";
import { ACTION_TABLE } from "../actions/table.ts";
import type { Evidence, SheepView } from "../ports/types.ts";
import { fileLine, inFiles, patchPlace, visibleControls } from "../texts/evidence.ts";
import { sameReason } from "../texts/format.ts";
import { sheepName, stateClock } from "../texts/widget.ts";

export type { Paint } from "../actions/call-text.ts";

type Args = CallArgs;

export function renderCallText(args: Args, t: Paint, expanded = false): string {
  const action = typeof args.action === "string" ? printable(args.action) : "?";
  const head = t.fg("toolTitle", t.bold(`shepherd ${action}`));
  // Each action shows its own call (actions/<action>.ts renderCall).
  const parts = ACTION_TABLE.find((a) => a.name === action)?.renderCall?.(args, t, expanded) ?? [];
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
  const where = i.worktree?.branch ? t.fg("dim", ` ⎇ ${printable(i.worktree.branch)}`) : "";
  if (!e) return (i.evidenceError ? t.fg("warning", " no evidence") : "") + where;
  if (e.fileCount === 0) return t.fg("dim", " no changes") + where;
  return ` ${t.fg("success", `+${e.insertions}`)} ${t.fg("error", `−${e.deletions}`)}${t.fg("dim", ` ${inFiles(e.fileCount)}`)}${where}`;
}

/** Expanded: every changed file, and where the whole patch is. */
function changedFiles(i: ResultItem, t: Paint): string {
  const e = i.evidence;
  if (!e || e.fileCount === 0) return i.evidenceError ? `\n    ${t.fg("warning", printable(i.evidenceError))}` : "";
  const lines = e.files.map((f) => `    ${t.fg("dim", fileLine(f))}`);
  if (e.fileCount > e.files.length) lines.push(`    ${t.fg("dim", `… ${e.fileCount - e.files.length} more files`)}`);
  lines.push(`    ${t.fg("dim", `patch: ${patchPlace(e)}`)}`);
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
  /** The `lines` the call asked for: a read shows that many of its last lines collapsed. */
  lines?: number;
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
  const name = sheepName(view?.label ?? i.label, view?.agent ?? i.agent) || printable(i.promptId ?? "");
  return `${icon(state, t)} ${name} ${t.fg("dim", `· ${stateClock(state, since, o.now ?? Date.now())}`)}`;
}

/** Lines of an answer shown before Ctrl+O; a read's conversation shows its last lines instead. */
const ANSWER_LINES = 3;
const READ_TAIL_LINES = 6;

/** A result's answer (or what went wrong), printable, indented under its head; its first lines until expanded. */
function answerLines(i: ResultItem, expanded: boolean, t: Paint): string {
  const body = printable(i.status === "completed" ? (i.text ?? "") : (i.error ?? i.status ?? ""));
  const lines = body.split("\n");
  const shown = expanded ? lines : lines.slice(0, ANSWER_LINES);
  const more = !expanded && lines.length > ANSWER_LINES ? `\n    ${t.fg("dim", `… ${lines.length - ANSWER_LINES} more lines`)}` : "";
  const color = i.status === "completed" ? "muted" : i.status === "failed" ? "error" : "warning";
  return `${shown.map((l) => `    ${t.fg(color, l)}`).join("\n")}${more}${expanded ? changedFiles(i, t) : ""}`;
}

/**
 * One block per result (results that failed alike, as an abort cancels every task, share one):
 * its sheep, usage and changes, then its answer. A wait, a delegate and a pushed delegation alike.
 */
function resultBlocks(items: ResultItem[], expanded: boolean, t: Paint): string[] {
  const groups = sameReason(items, (i) => (i.status === "completed" ? undefined : `${i.status} ${i.error ?? ""}`));
  return groups.map((group) => {
    const i = group[0]!;
    const name = group.map((x) => sheepName(x.label, x.agent) || printable(x.promptId || x.agentId || "")).join(", ");
    return `${icon(i.status, t)} ${t.bold(name)}${usageLine(i.usage, t)}${changesLine(i, t)}\n${answerLines(i, expanded, t)}`;
  });
}

/** `3/4 completed`, coloured by how many. */
function completedHead(items: { status?: string }[], t: Paint): string {
  const ok = items.filter((i) => i.status === "completed").length;
  return t.fg(ok === items.length ? "success" : ok === 0 ? "error" : "warning", `${ok}/${items.length} completed`);
}

/**
 * A read: its heading, then the tail of the conversation or screen (where the answer is), as
 * many lines as the call's `lines` asked for, else a few; everything when expanded.
 */
function readText(content: string, body: string | undefined, o: RenderOptions, t: Paint): string {
  const [heading = "", ...rest] = printable(content).split("\n");
  const lines = body === undefined ? rest : printable(body).split("\n");
  while (lines.length > 0 && lines[0] === "") lines.shift();
  if (lines.length === 0) return heading;
  const tail = o.lines ?? READ_TAIL_LINES;
  if (o.expanded || lines.length <= tail) return [heading, ...lines].join("\n");
  return [heading, t.fg("dim", `… ${lines.length - tail} earlier lines (Ctrl+O shows all)`), ...lines.slice(-tail)].join("\n");
}

export function renderResultText(
  result: { content?: { type: string; text?: string }[]; details?: Record<string, unknown> },
  o: RenderOptions,
  t: Paint,
): string {
  const text = (result.content ?? []).map((c) => c.text ?? "").join("");
  // An error may quote a sheep (its label, its words).
  if (o.isError) return t.fg("error", `✗ ${printable(text)}`);
  const d = result.details ?? {};
  const progress = d.progress as { done?: number; total?: number; items?: ProgressItem[] } | undefined;
  if (o.isPartial && progress) {
    const lines = [t.fg("muted", `${progress.done ?? 0}/${progress.total ?? 0} done`)];
    for (const i of progress.items ?? []) lines.push(progressLine(i, o, t));
    return lines.join("\n");
  }
  const items = (Array.isArray(d.results) ? d.results : []) as ResultItem[];
  if (items.length === 0) {
    // The whole text is in details: the content may have been cut at its end, where the answer is.
    if (d.action === "read" && text !== "") return readText(text, typeof d.text === "string" ? d.text : undefined, o, t);
    // A diff's text holds the repository's bytes: its control characters are shown, not acted on.
    const lines = (d.action === "diff" ? visibleControls(text) : printable(text)).split("\n");
    return o.expanded || lines.length <= 3 ? lines.join("\n") : `${lines.slice(0, 3).join("\n")}\n${t.fg("dim", `… ${lines.length - 3} more lines`)}`;
  }
  return [completedHead(items, t), ...resultBlocks(items, o.expanded, t)].join("\n");
}

/**
 * A pushed message in the transcript: who and what in one line, then what the foreground shows:
 * a result's answer, a question's text, a background delegation's block per task.
 */
export function renderPushText(content: string, push: Push | undefined, expanded: boolean, t: Paint): string {
  switch (push?.kind) {
    case "result": {
      const i = push.item;
      const head = `${icon(i.status, t)} ${t.fg("toolTitle", t.bold(`🐑 ${printable(push.label)}`))} ${t.fg("muted", printable(`${i.promptId} ${i.status}`))}`;
      return `${head}${usageLine(i.usage, t)}${changesLine(i, t)}\n${answerLines(i, expanded, t)}`;
    }
    case "delegation": {
      const head = `${t.fg("toolTitle", t.bold(`🐑 background ${printable(push.mode)}`))} ${completedHead(push.items, t)} ${t.fg("muted", printable(push.delegationId))}`;
      // Numbered as the model reads them: a pushed task names no label, and two may share an agent.
      const numbered = push.items.map((i, n) => (i.label ? i : { ...i, agent: `${i.step ?? n + 1}. ${i.agent}` }));
      return [head, ...resultBlocks(numbered, expanded, t)].join("\n");
    }
    case "question": {
      const m = push.message;
      const head = `${t.fg("warning", "?")} ${t.fg("toolTitle", t.bold(`🐑 ${printable(push.label)} asks`))} ${t.fg("muted", printable(m.messageId))}${m.awaitReply ? t.fg("dim", " (waits for a reply)") : ""}`;
      return [head, ...pushedBody(content, expanded, t)].join("\n");
    }
    default:
      return [t.fg("accent", "🐑 shepherd"), ...pushedBody(content, expanded, t)].join("\n");
  }
}

/** A pushed text without its first line (the header the model reads; the person sees the head instead), printable. */
function pushedBody(content: string, expanded: boolean, t: Paint): string[] {
  const body = printable(content).split("\n").slice(1).join("\n").replace(/^\n+/, "");
  const lines = body.split("\n");
  const shown =
    expanded || lines.length <= ANSWER_LINES
      ? lines
      : [...lines.slice(0, ANSWER_LINES), t.fg("dim", `… ${lines.length - ANSWER_LINES} more lines (Ctrl+O expands)`)];
  return shown.map((l) => `  ${l}`);
}
