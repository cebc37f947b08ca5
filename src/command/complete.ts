import { findSubcommand, SUBCOMMANDS } from "./parse.ts";
import { quoteWord, tokenize } from "./tokens.ts";

/** pi's autocomplete item: `value` replaces the whole argument text typed so far. */
export interface CompletionItem {
  value: string;
  label: string;
  description?: string;
}

export interface CompletionSources {
  agents(): Promise<{ name: string; source: string; description: string }[]>;
  sheep(): { agentId: string; label: string; agent: string; state: string }[];
  /** Closed or exited sheep whose conversation can be resumed, newest last. */
  resumable(): Promise<{ agentId: string; label: string; agent: string }[]>;
}

const FLAG_VALUES: Record<string, string[]> = {
  placement: ["tab", "pane", "workspace"],
  direction: ["right", "down"],
  scope: ["user", "project", "both"],
  source: ["session", "screen"],
};
const SCOPES = ["user", "project", "both"];

interface Candidate {
  word: string;
  description?: string;
  /** Flags take their value next, so no quoting and a space after. */
  raw?: boolean;
}

/** Completions for the text after `/shepherd `: subcommands, agent names, live ids and labels, flags and their values. */
export async function completeShepherdArgs(prefix: string, src: CompletionSources): Promise<CompletionItem[] | null> {
  const tokens = tokenize(prefix, true);
  const last = tokens[tokens.length - 1];
  const typing = last !== undefined && last.end === prefix.length;
  const current = typing ? last.text : "";
  const before = typing ? prefix.slice(0, last.start) : prefix;
  const words = (typing ? tokens.slice(0, -1) : tokens).map((t) => t.text);

  let candidates: Candidate[] = [];
  if (words.length === 0) {
    candidates = SUBCOMMANDS.flatMap((s) => [s.name, ...(s.aliases ?? [])].map((word) => ({ word, description: s.summary })));
  } else {
    const info = findSubcommand(words[0]!);
    if (!info) return null;
    const switches = new Set(Object.keys(info.switches ?? {}));
    const flags = [...Object.keys(info.flags ?? {}), ...switches];
    const takesValue = (w: string) => w.startsWith("--") && !w.includes("=") && !switches.has(w.slice(2));
    const prev = words[words.length - 1]!;
    const used = new Set(words.filter((w) => w.startsWith("--")).map((w) => w.slice(2).split("=")[0]!));
    // Words after the subcommand that are not flags or flag values.
    let positional = 0;
    for (let i = 1; i < words.length; i++) {
      if (words[i]!.startsWith("--")) {
        if (takesValue(words[i]!)) i++;
      } else positional++;
    }
    if (takesValue(prev) && words.length > 1) {
      const values = FLAG_VALUES[prev.slice(2)];
      if (!values) return null; // a free value such as a label or a path
      candidates = values.map((word) => ({ word }));
    } else if (current.startsWith("-")) {
      candidates = flags.filter((f) => !used.has(f)).map((f) => ({ word: `--${f}`, raw: true }));
    } else if (positional === 0 && info.name === "start") {
      candidates = (await src.agents()).map((a) => ({ word: a.name, description: `${a.source}: ${a.description}` }));
    } else if (positional === 0 && ["status", "read", "close", "diff", "land", "messages", "reply"].includes(info.name)) {
      const live = src.sheep();
      candidates = live.map((s) => ({ word: s.label, description: `${s.agentId} · ${s.agent} · ${s.state}` }));
      if (current.startsWith("a_")) candidates = live.map((s) => ({ word: s.agentId, description: `${s.label} · ${s.agent} · ${s.state}` }));
    } else if (positional === 0 && info.name === "resume") {
      const all = await src.resumable();
      // One entry per label (the newest: resume by label takes that one), ids when typing one.
      const byLabel = new Map(all.map((s) => [s.label, s]));
      candidates = current.startsWith("a_")
        ? all.map((s) => ({ word: s.agentId, description: `${s.label} · ${s.agent}` }))
        : [...byLabel.values()].map((s) => ({ word: s.label, description: `${s.agentId} · ${s.agent}` }));
    } else if (positional === 0 && info.name === "sheep") {
      candidates = SCOPES.map((word) => ({ word }));
    } else if (current === "") {
      candidates = flags.filter((f) => !used.has(f)).map((f) => ({ word: `--${f}`, raw: true }));
    }
  }
  const items = candidates
    .filter((c) => c.word.toLowerCase().startsWith(current.toLowerCase()))
    .map((c) => ({
      value: `${before}${c.raw ? c.word : quoteWord(c.word)} `,
      label: c.word,
      ...(c.description ? { description: c.description } : {}),
    }));
  return items.length ? items : null;
}
