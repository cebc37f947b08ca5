import { findSubcommand, PANEL_MODES, SUBCOMMANDS, type SubcommandInfo } from "./parse.ts";
import { quoteWord, tokenize } from "./tokens.ts";
import { oneLine } from "../domain/labels.ts";
import { ageText } from "../texts/format.ts";

/** pi's autocomplete item: `value` replaces the whole argument text typed so far. */
export interface CompletionItem {
  value: string;
  label: string;
  description?: string;
}

export interface CompletionSources {
  agents(): Promise<{ name: string; source: string; description: string }[]>;
  sheep(): { agentId: string; label: string; agent: string; state: string; isolated?: boolean }[];
  /** Closed or exited sheep whose conversation can be resumed, newest last. */
  resumable(): Promise<ResumableSheep[]>;
  /** The clock for ages (tests fix it). */
  now?: () => number;
}

/** A sheep that can be resumed, with what tells it from others of the same label or agent. */
export interface ResumableSheep {
  agentId: string;
  label: string;
  agent: string;
  /** When it started (its resume card's). */
  createdAt?: string;
  /** The first line of the last task it was given, where the records still hold it. */
  lastTask?: string;
}

/** `a_… · scout · 2h 5m ago · "find the parser"`: the id, the agent, its age and its last task. */
export function resumableDescription(s: ResumableSheep, now: number, first = s.agentId): string {
  const age = s.createdAt && Number.isFinite(Date.parse(s.createdAt)) ? `started ${ageText(now - Date.parse(s.createdAt))} ago` : undefined;
  const task = s.lastTask ? `last: ${JSON.stringify(oneLine(s.lastTask).slice(0, 60))}` : "no task on record";
  return [first, s.agent, age, task].filter(Boolean).join(" · ");
}

const FLAG_VALUES: Record<string, string[]> = {
  placement: ["tab", "pane", "workspace"],
  direction: ["right", "down"],
  scope: ["user", "project", "both"],
  source: ["session", "screen", "egress"],
};
const SCOPES = ["user", "project", "both"];

interface Candidate {
  word: string;
  description?: string;
  /** Flags take their value next, so no quoting and a space after. */
  raw?: boolean;
}

/** Completions for the text after `/shepherd `: subcommands, agent names, live ids and labels, flags and their values. */
export async function completeShepherdArgs(
  prefix: string,
  src: CompletionSources,
  subcommands: readonly SubcommandInfo[] = SUBCOMMANDS,
): Promise<CompletionItem[] | null> {
  const tokens = tokenize(prefix, true);
  const last = tokens[tokens.length - 1];
  const typing = last !== undefined && last.end === prefix.length;
  const current = typing ? last.text : "";
  const before = typing ? prefix.slice(0, last.start) : prefix;
  const words = (typing ? tokens.slice(0, -1) : tokens).map((t) => t.text);

  let candidates: Candidate[] = [];
  if (words.length === 0) {
    candidates = subcommands.flatMap((s) => [s.name, ...(s.aliases ?? [])].map((word) => ({ word, description: s.summary })));
  } else {
    const info = findSubcommand(words[0]!, subcommands);
    if (!info) return null;
    const switches = new Set(Object.keys(info.switches ?? {}));
    const flags = [...Object.keys(info.flags ?? {}), ...switches];
    const takesValue = (w: string) => w.startsWith("--") && !w.includes("=") && !switches.has(w.slice(2));
    const prev = words[words.length - 1]!;
    const used = new Set(words.filter((w) => w.startsWith("--")).map((w) => w.slice(2).split("=")[0]!));
    // Words after the subcommand that are not flags or flag values.
    const positionals: string[] = [];
    for (let i = 1; i < words.length; i++) {
      if (words[i]!.startsWith("--")) {
        if (takesValue(words[i]!)) i++;
      } else positionals.push(words[i]!);
    }
    const positional = positionals.length;
    // A worktree is removed only from a sheep that has one, and --force only goes with that.
    const named = positional > 0 ? src.sheep().find((s) => s.label === positionals[0] || s.agentId === positionals[0]) : undefined;
    const offered = (f: string) => {
      if (used.has(f)) return false;
      if (info.name === "close" && f === "remove-worktree") return named?.isolated === true;
      if (info.name === "close" && f === "force") return used.has("remove-worktree");
      return true;
    };
    if (takesValue(prev) && words.length > 1) {
      const values = FLAG_VALUES[prev.slice(2)];
      if (!values) return null; // a free value such as a label or a path
      candidates = values.map((word) => ({ word }));
    } else if (current.startsWith("-")) {
      candidates = flags.filter(offered).map((f) => ({ word: `--${f}`, raw: true }));
    } else if (positional === 0 && info.first === "agent") {
      candidates = (await src.agents()).map((a) => ({ word: a.name, description: `${a.source}: ${a.description}` }));
    } else if (positional === 0 && info.first === "sheep") {
      const live = src.sheep();
      candidates = live.map((s) => ({ word: s.label, description: `${s.agentId} · ${s.agent} · ${s.state}` }));
      if (current.startsWith("a_")) candidates = live.map((s) => ({ word: s.agentId, description: `${s.label} · ${s.agent} · ${s.state}` }));
    } else if (positional === 0 && info.first === "resumable") {
      const all = await src.resumable();
      const now = src.now?.() ?? Date.now();
      // One entry per label (the newest: resume by label takes that one), ids when typing one;
      // each says its age and last task, which tell apart sheep of one agent or label.
      const byLabel = new Map(all.map((s) => [s.label, s]));
      candidates = current.startsWith("a_")
        ? all.map((s) => ({ word: s.agentId, description: resumableDescription(s, now, s.label) }))
        : [...byLabel.values()].map((s) => ({ word: s.label, description: resumableDescription(s, now) }));
    } else if (positional === 0 && info.first === "scope") {
      candidates = SCOPES.map((word) => ({ word }));
    } else if (positional === 0 && info.name === "panel") {
      candidates = PANEL_MODES.map((word) => ({ word }));
    } else if (current === "" && !(info.name === "prompt" && positional > 0)) {
      candidates = flags.filter(offered).map((f) => ({ word: `--${f}`, raw: true }));
    }
  }
  // A word already typed whole gets no menu: pi's Enter on an open argument menu only takes the
  // completion, so a complete command would need a second Enter.
  if (current !== "" && candidates.some((c) => c.word === current)) return null;
  const items = candidates
    .filter((c) => c.word.toLowerCase().startsWith(current.toLowerCase()))
    .map((c) => ({
      value: `${before}${c.raw ? c.word : quoteWord(c.word)} `,
      label: c.word,
      ...(c.description ? { description: c.description } : {}),
    }));
  return items.length ? items : null;
}
