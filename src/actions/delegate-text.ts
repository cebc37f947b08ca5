/** What a delegation says: its verdict, and one block per task or per reason shared by tasks. */
import type { DelegateItem, DelegateMode } from "../core/delegation/delegate.ts";
import { ShepherdError } from "../domain/errors.ts";
import { evidenceBlock } from "../texts/evidence.ts";
import { isolationText, sameReason, whoText } from "../texts/format.ts";

/** `echo-2 (echo)`: the sheep's label first, so two sheep of one agent are told apart. */
export function itemName(i: DelegateItem): string {
  return whoText({ label: i.label ?? i.agent, agent: i.agent });
}

/** `failed [code] …`, or the error alone when its code already is the status (`[cancelled] …`, not `cancelled [cancelled] …`). */
const reason = (i: DelegateItem, sep = " ") => (i.error?.startsWith(`[${i.status}]`) ? i.error : `${i.status}${i.error ? `${sep}${i.error}` : ""}`);

/** Items numbered in input order (a chain's by step), those that failed alike said once. */
function grouped(items: readonly DelegateItem[]): { names: string; item: DelegateItem }[] {
  const numbered = items.map((item, n) => ({ item, n: item.step ?? n + 1 }));
  // A task with work of its own (evidence, a worktree) always stands alone: its block shows that work.
  const alone = (i: DelegateItem) => i.status === "completed" || i.evidence !== undefined || i.worktree !== undefined;
  return sameReason(numbered, ({ item }) => (alone(item) ? undefined : reason(item))).map((g) => ({
    names: g.map(({ item, n }) => `${n}. ${itemName(item)}`).join(", "),
    item: g[0]!.item,
  }));
}

/** The tool's verdict: every item failed throws; anything else returns. */
export function delegateOutcome(mode: DelegateMode, items: DelegateItem[], total: number): { ok: number; summary: string } {
  const verdict = delegateSummary(mode, items, total);
  if (verdict.ok === 0) {
    const reasons = grouped(items).map((g) => `${g.names}: ${reason(g.item)}`);
    const code = items.every((i) => i.status === "cancelled") ? "aborted" : "delegate_failed";
    throw new ShepherdError(code, `${mode} delegation: no task succeeded.\n${reasons.join("\n")}`);
  }
  return verdict;
}

/** How many succeeded and the line that says so; a chain says where it stopped. */
export function delegateSummary(mode: DelegateMode, items: readonly DelegateItem[], total: number): { ok: number; summary: string } {
  const ok = items.filter((i) => i.status === "completed").length;
  if (mode === "chain") {
    const stopped = items.find((i) => i.status !== "completed");
    return {
      ok,
      summary: stopped
        ? `Chain stopped at step ${stopped.step} (${itemName(stopped)}): ${stopped.error ?? stopped.status}. ${ok}/${total} steps succeeded.`
        : `Chain: ${ok}/${total} steps succeeded.`,
    };
  }
  return {
    ok,
    summary:
      mode === "single" ? (ok === 1 ? "" : `The task did not succeed: ${items[0]?.error ?? items[0]?.status ?? ""}`) : `Parallel: ${ok}/${total} succeeded.`,
  };
}

export function delegateText(mode: DelegateMode, items: readonly DelegateItem[], summary: string): string {
  const body = (i: DelegateItem) => {
    const answer = i.status === "completed" ? (i.text ?? "") : reason(i, ": ");
    const extra = [evidenceBlock(i, { patch: true }), i.worktree && i.agentId ? isolationText({ agentId: i.agentId, worktree: i.worktree }) : undefined];
    return [answer, ...extra.filter((x) => x !== undefined)].join("\n\n");
  };
  if (mode === "single") return body(items[0]!);
  const last = items[items.length - 1]!;
  if (mode === "chain" && last.status === "completed") return `${summary}\n\n${body(last)}`;
  const blocks = grouped(items).map((g) => `## ${mode === "chain" ? "step " : ""}${g.names} · ${g.item.status}\n${body(g.item)}`);
  return `${summary}\n\n${blocks.join("\n\n")}`;
}
