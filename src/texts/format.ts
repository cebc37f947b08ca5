import { NO_SPEND, spendText } from "../domain/budget.ts";
import type { ListedMessage } from "../core/async/mail.ts";
import type { SkippedFile } from "../definitions/discover.ts";
import type { DoctorReport } from "../doctor/types.ts";
import type { AttachReport, LandOutcome, LatestEvidence, PruneOutcome, SyncOutcome, WarmCount } from "../core/shepherd.ts";
import type {
  AgentDefinition,
  AgentStatus,
  CloseOutcome,
  Conversation,
  ConversationTurn,
  EgressReport,
  StartedAgent,
  SubmittedPrompt,
  WaitItem,
} from "../ports/types.ts";
import { changeSummary, evidenceBlock, evidenceText, fileLines, plainPath, worktreeText } from "./evidence.ts";
import { egressCountsText } from "./egress.ts";

/**
 * The one family of texts about sheep. The facts are worded once, the same for the model and for
 * a person; only the next step differs by who reads it (a tool call for the model, a /shepherd
 * subcommand for a person), so callers pass that part in.
 */

/** `Started "label" (agent) as id in tmux pane %1, cwd /x; it is idle.` (or `Resumed … from id, its conversation kept, as …`) */
export function startedLine(a: StartedAgent): string {
  const how = a.resumedFrom ? `Resumed "${a.label}" (${a.agent}) from ${a.resumedFrom}, its conversation kept,` : `Started "${a.label}" (${a.agent})`;
  const on = a.host !== undefined ? ` on host ${a.host}` : "";
  return `${how} as ${a.agentId} in ${a.runtime} pane ${a.paneId}${on}, cwd ${a.cwd}; it is idle.`;
}

export function startText(a: StartedAgent): string {
  const lines = [
    startedLine(a),
    `Next: prompt it with {"action":"prompt","agentId":"${a.agentId}","message":"..."}, then collect the answer with {"action":"wait","promptId":"..."}.`,
  ];
  if (a.attachHint) lines.push(`A person can watch it with: ${a.attachHint}`);
  if (a.worktree) lines.push(isolationText(a));
  return lines.join("\n");
}

/** Where an isolated sheep works, and what of the user's it does not have. */
export function isolationText(a: { agentId: string; worktree?: StartedAgent["worktree"] }, land = toolWorktreeSteps(a.agentId).land): string {
  const wt = a.worktree!;
  const lines = [`It works in its own ${worktreeText(wt)}, never in your checkout ${wt.repoRoot}; bring its work in with ${land}.`];
  if (wt.leftBehind > 0) {
    lines.push(`Your uncommitted changes (${wt.leftBehind} file${wt.leftBehind === 1 ? "" : "s"}) are not in it: it starts from your last commit.`);
  }
  return lines.join("\n");
}

/** `next` replaces the model's next step (a /shepherd answer says what a person types). */
export function promptText(p: SubmittedPrompt, next?: string): string {
  const wait = `{"action":"wait","promptId":"${p.promptId}"}`;
  const head = p.duplicate
    ? `requestId "${p.requestId}" was used with ${p.agentId} before: this is its ${p.steerId ? `steer ${p.steerId} into prompt` : "prompt"} ${p.promptId}, and nothing was sent again.`
    : p.deliverAs === "steer"
      ? `Steered ${p.agentId}: ${p.steerId} goes into the running turn of ${p.promptId}, whose answer comes as usual (its result counts the steers that got in).`
      : p.deliverAs === "followUp"
        ? `Prompt ${p.promptId} queued for ${p.agentId} behind ${p.queuedBehind?.join(", ") ?? "its active prompt"}; the sheep answers them in that order.`
        : `Prompt ${p.promptId} sent to ${p.agentId}; the sheep is working on it in the background.`;
  const then =
    next ??
    (p.notify
      ? `Its answer comes to you by itself once it is final (notify), so you can go on with other work; ${wait} also returns it.`
      : `Next: ${wait} returns its answer (to wait for several sheep at once, pass "promptIds").`);
  return `${head}\n${then}`;
}

/** Steering that reached a turn, and steering that came after it had ended. */
function steeredNote(i: WaitItem): string {
  if (i.steered === undefined) return "";
  const missed = i.steersMissed ? `; ${i.steersMissed} came after the turn had ended and were dropped (prompt again)` : "";
  return `\n(steered: ${i.steered} steering message${i.steered === 1 ? "" : "s"} reached this turn${missed})`;
}

/** The one way a sheep's question is put to whoever must answer it; `how` says how to reply. */
export function questionText(q: { messageId: string; text: string }, who: string, how: string): string {
  return `${who} asks (${q.messageId}):\n${q.text}\n${how}`;
}

export function replyHowTo(agentId: string, messageId: string): string {
  return `Answer with {"action":"reply","agentId":"${agentId}","messageId":"${messageId}","text":"..."}; its shepherd_message call returns your text.`;
}

/**
 * Items grouped by a shared reason, in order of first appearance, so the same words are said
 * once (an abort cancels every task alike). An item whose key is undefined stands alone.
 */
export function sameReason<T>(items: T[], key: (item: T) => string | undefined): T[][] {
  const groups: T[][] = [];
  const byKey = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = k === undefined ? undefined : byKey.get(k);
    if (group) group.push(item);
    else {
      const fresh = [item];
      groups.push(fresh);
      if (k !== undefined) byKey.set(k, fresh);
    }
  }
  return groups;
}

/** `label (id, agent)`: a sheep named for a reader, most telling part first. */
export function whoText(s: { agentId?: string; label?: string; agent?: string }): string {
  const inner = [s.agentId, s.agent && s.agent !== s.label ? s.agent : undefined].filter(Boolean).join(", ");
  if (!s.label) return s.agentId || "unknown sheep";
  return inner ? `${s.label} (${inner})` : s.label;
}

/** The next steps a wait result names: the tool's actions, or what a person types (/shepherd). */
export interface WaitSteps {
  reply(i: WaitItem & { label?: string }, messageId: string): string;
  read(i: WaitItem & { label?: string }): string;
  again(i: WaitItem & { label?: string }): string;
}

export const TOOL_WAIT_STEPS: WaitSteps = {
  reply: (i, messageId) => replyHowTo(i.agentId, messageId),
  read: () => 'Look at it with action "read".',
  again: () => "Wait again with the same promptId.",
};

export function waitText(items: (WaitItem & { label?: string; agent?: string })[], steps: WaitSteps = TOOL_WAIT_STEPS): string {
  const done = items.filter((i) => i.status === "completed").length;
  const head = items.length === 1 ? "" : `${done}/${items.length} completed.\n\n`;
  return (
    head +
    items
      .map((i) => {
        const title = `## ${whoText(i)} · ${i.status} · ${i.promptId}`;
        if (i.status === "timeout") return `${title}\nStill working; nothing was stopped. ${steps.again(i)}`;
        if (i.status === "blocked" && i.question) {
          return `${title}\n${questionText(i.question, "The sheep", steps.reply(i, i.question.messageId))} The prompt stays pending: wait for it again after replying.`;
        }
        if (i.status === "blocked") return `${title}\nThe sheep waits on: ${i.error ?? "a question"}. ${steps.read(i)}`;
        const body =
          i.status === "completed" ? `${title}\n${i.text ?? ""}${steeredNote(i)}` : `${title}\n${i.error ?? ""}${i.text ? `\nPartial text:\n${i.text}` : ""}`;
        const evidence = evidenceBlock(i, { patch: true });
        return evidence ? `${body}\n\n${evidence}` : body;
      })
      .join("\n\n")
  );
}

/**
 * A status as the edges show it: with, for a sheep on a host that does not answer now, since when
 * and why; for a sandboxed sheep (status of one), the counts of its egress log.
 */
export type ShownStatus = AgentStatus & {
  hostDown?: { since: string; reason: string };
  egress?: Pick<EgressReport, "allowed" | "refused" | "bytesUp" | "bytesDown" | "since">;
};

/** `label (id, agent): state, working on p · tmux on gpu · 3m old` (and what the multiplexer says, if asked). */
export function sheepLine(s: ShownStatus, now = Date.now()): string {
  if (s.state === "closed") return `${s.label} (${s.agentId}, ${s.agent}): closed.`;
  const active = s.activePromptId ? `, working on ${s.activePromptId}${s.queued?.length ? ` (then ${s.queued.join(", ")})` : ""}` : "";
  // Without a live pane, a runtime status is how pi ended, in a pane kept with its last words.
  const pane = s.paneAlive || s.runtimeStatus ? "" : ", pane gone";
  const rt = s.runtimeStatus ? ` (${s.runtime} says ${s.runtimeStatus})` : "";
  const egress = s.egress ? ` (egress: ${egressCountsText(s.egress)})` : "";
  const wt = `${s.worktree ? ` · ⎇ ${s.worktree.branch}` : ""}${s.sandboxed ? ` · sandboxed${egress}` : ""}`;
  const on = s.host !== undefined ? ` on ${s.host}` : "";
  const down = s.hostDown ? ` · host unreachable since ${s.hostDown.since} (${s.hostDown.reason})` : "";
  // Only a sheep held to a budget: it is spend against that budget the line is for.
  const spend = s.budget ? ` · spent ${spendText(s.spent ?? NO_SPEND, s.budget)}` : "";
  return `${s.label} (${s.agentId}, ${s.agent}): ${s.state}${active}${pane} · ${s.runtime}${on}${wt} · ${ageText(now - Date.parse(s.createdAt))} old${spend}${rt}${down}`;
}

/** A compact age such as "45s", "12m", "3h 5m" or "2d 4h". */
export function ageText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** The herd, one sheep a line; `empty` says how to start one to whoever reads it. */
export function herdText(list: ShownStatus[], empty: string, now = Date.now()): string {
  if (list.length === 0) return `No live sheep. ${empty}`;
  return [`Herd (${list.length}):`, ...list.map((s) => `  ${sheepLine(s, now)}`)].join("\n");
}

/** How the reader lands or removes a kept worktree: tool calls for the model, /shepherd lines for a person. */
export interface WorktreeSteps {
  land: string;
  remove: string;
}

export function toolWorktreeSteps(agentId: string): WorktreeSteps {
  return { land: `{"action":"land","agentId":"${agentId}"}`, remove: `{"action":"close","agentId":"${agentId}","removeWorktree":true}` };
}

/** What became of an isolated sheep's worktree when it closed; "" for a sheep without one. */
function closedWorktreeText(c: CloseOutcome, next: WorktreeSteps): string {
  const wt = c.worktree;
  if (!wt) return "";
  if (wt.removed) return ` Its worktree ${wt.path} and branch ${wt.branch} were removed.`;
  return ` Its worktree ${wt.path} and branch ${wt.branch} are kept: land its work with ${next.land}, or remove them with ${next.remove}.`;
}

/** `Closed label (id); its session file is kept at /path.` and what became of its worktree. */
export function closeText(c: CloseOutcome, label: string | undefined, next: WorktreeSteps = toolWorktreeSteps(c.agentId)): string {
  const who = label ? `${label} (${c.agentId})` : c.agentId;
  const worktree = closedWorktreeText(c, next);
  if (c.alreadyClosed) return `${who} was already closed.${worktree}`;
  const cancelled = c.cancelledPromptIds.length ? ` Cancelled its pending prompt ${c.cancelledPromptIds.join(", ")}.` : "";
  const on = c.host !== undefined ? ` on host ${c.host}` : "";
  const kept = c.sessionPath ? `its session file is kept at ${c.sessionPath}${on}` : "it wrote no session file";
  return `Closed ${who}; ${kept}.${cancelled}${worktree}`;
}

export function pruneText(p: PruneOutcome): string {
  const exited = new Set(p.exited.map((e) => e.agentId));
  const gone = p.removed.filter((id) => !exited.has(id));
  const lines = gone.length ? [`Pruned ${gone.length}: ${gone.join(", ")}.`] : [];
  for (const e of p.exited) lines.push(`Closed the dead pane of ${e.label} (${e.agentId}) and pruned it: its pi had exited (${e.exit}).`);
  for (const u of p.unclosed) lines.push(`Could not close the dead pane of ${u.label} (${u.agentId}): ${u.reason} It stays recorded; prune or close it again.`);
  if (p.forgotten.length) lines.push(`Forgot ${p.forgotten.length} closed: ${p.forgotten.map((f) => `${f.label} (${f.agentId})`).join(", ")}.`);
  for (const w of p.worktrees)
    lines.push(
      w.label === "no record"
        ? `Removed the worktree at ${w.path} and its branch ${w.branch}, which no record knew (a start cut short).`
        : `Removed the worktree of ${w.label} (${w.agentId}) at ${w.path} and its branch ${w.branch}.`,
    );
  for (const sp of p.specs ?? [])
    lines.push(
      `Removed the launch spec of ${sp.agentId}${sp.host === undefined ? "" : ` on host ${sp.host}`}, which no record knew (a start cut short before its pane ran).`,
    );
  for (const hp of p.hostPanes ?? [])
    lines.push(`Closed the pane of ${hp.agentId} on host ${hp.host}, which no record knew (a shepherd stopped during its start).`);
  if (lines.length === 0) lines.push("Nothing to prune: every recorded pane is alive.");
  for (const k of p.kept)
    lines.push(
      k.leftover
        ? `Kept the worktree at ${k.path}, branch ${k.branch}, that no record knows (a start cut short): it has ${k.reason}. Land it by hand or remove it with prune and force (/shepherd prune --force).`
        : `Kept the worktree of ${k.label} (${k.agentId}) at ${k.path}, branch ${k.branch}: it has ${k.reason}.`,
    );
  return lines.join("\n");
}

export function diffText(d: LatestEvidence, stat: boolean): string {
  const head = `Evidence of ${d.label} (${d.agentId}), prompt ${d.promptId}${d.pending ? `; prompt ${d.pending} is still running` : ""}:`;
  return `${head}\n${d.evidence ? evidenceText(d.evidence, { patch: !stat }) : `none, ${d.evidenceError ?? "no evidence"}`}`;
}

export function landText(l: LandOutcome): string {
  if (!l.landed) return `Nothing to land: ${l.into} already holds everything ${l.label} (${l.agentId}) did on ${l.branch}.`;
  const how = l.squash ? "as one squashed commit" : l.fastForward ? "by a fast-forward (no new commit)" : "by a merge commit";
  return [
    `Landed ${l.branch} of ${l.label} (${l.agentId}) into ${l.into} ${how} (${l.commit?.slice(0, 10)}): ${changeSummary(l)}.`,
    ...fileLines(l.files, l.fileCount),
  ].join("\n");
}

/** What a sync brought into the sheep's worktree, or which files it left in conflict there. */
export function syncText(s: SyncOutcome): string {
  const who = `${s.label} (${s.agentId})`;
  if (!s.synced) return `Nothing to sync: the worktree of ${who} already holds everything of ${s.from} (${s.fromCommit.slice(0, 10)}).`;
  const head = `Synced ${s.from} (${s.fromCommit.slice(0, 10)}) into the worktree of ${who} at ${s.path}, branch ${s.branch}`;
  const work = s.committedWork ? ` Its uncommitted files were committed on ${s.branch} first.` : "";
  if (s.conflicts.length === 0) {
    return [`${head}: ${changeSummary(s)} came in.${work} Your checkout was not touched.`, ...fileLines(s.files, s.fileCount)].join("\n");
  }
  return [
    `${head}, with conflicts in: ${s.conflicts.slice(0, 50).map(plainPath).join(", ")}${s.conflicts.length > 50 ? ` and ${s.conflicts.length - 50} more` : ""}.${work}`,
    "The merge is left in progress there, conflict markers in those files; the sheep's next prompt names them. Once it has resolved them (edit, git add, git commit), land again. Your checkout was not touched.",
    `What ${s.from} brought since the two branches met: ${changeSummary(s)}.`,
    ...fileLines(s.files, s.fileCount),
  ].join("\n");
}

export function sheepText(agents: AgentDefinition[], skipped: SkippedFile[]): string {
  const lines = agents.map(
    (a) => `- ${a.name} (${a.source}): ${a.description}${a.tools ? ` [tools: ${a.tools.join(", ")}]` : ""}${a.model ? ` [model: ${a.model}]` : ""}`,
  );
  if (skipped.length) {
    lines.push("", "Skipped files:");
    for (const s of skipped) lines.push(`- ${s.path}: ${s.reason}`);
  }
  return lines.join("\n") || "No agent definitions found.";
}

/** A conversation for reading: `> ` before the prompt's lines, `· ` before each tool call, the answer plain. */
export function turnsText(turns: ConversationTurn[]): string {
  return turns
    .map((t) =>
      [
        ...(t.cut ? ["… (this turn began earlier in the session file than was read)"] : []),
        ...t.lines.map((l) => {
          if (l.kind === "prompt") return l.text.replace(/^/gm, "> ");
          if (l.kind === "tool") return `· ${l.text}${l.failed ? " (failed)" : ""}`;
          if (l.kind === "error") return `! ${l.text}`;
          return l.text;
        }),
      ].join("\n"),
    )
    .join("\n\n");
}

/** What `read` says of a sheep's session: a heading naming it and the file, then `body` (turnsText, perhaps cut). */
export function conversationText(who: string, c: Conversation, body: string): string {
  if (!c.turns) return `${who} has no conversation yet: its session file ${c.sessionPath} does not exist.`;
  if (c.turns.length === 0) return `${who} has had no prompt yet (session file ${c.sessionPath}).`;
  const n = c.turns.length;
  const earlier = c.earlier ? "; earlier ones are not shown" : "";
  return `The last ${n === 1 ? "turn" : `${n} turns`} of ${who}, from ${c.sessionPath}${earlier}:\n\n${body}`;
}

export function screenText(who: string, text: string): string {
  return `Screen of ${who}:\n${text || "(the pane shows no text)"}`;
}

/** A sheep's messages, grouped by sheep; `how` says how to answer a question that waits. */
export function messagesText(list: ListedMessage[], unreadOnly: boolean, how: (m: ListedMessage) => string): string {
  if (list.length === 0) return unreadOnly ? "No unread messages from the sheep." : "No messages from the sheep.";
  const out: string[] = [];
  let last = "";
  for (const m of list) {
    if (m.agentId !== last) {
      last = m.agentId;
      out.push(`${out.length ? "\n" : ""}${m.label} (${m.agentId}):`);
    }
    const state = [m.read ? "read" : "unread", ...(m.promptId ? [`during ${m.promptId}`] : [])];
    if (m.kind === "question" && m.awaitReply) {
      state.push(m.answer === "replied" ? "answered" : m.answer === "expired" ? "no longer waits (timed out)" : "waits for a reply");
    }
    out.push(`  ${m.messageId} · ${m.kind} · ${m.at} · ${state.join(", ")}`);
    out.push(...m.text.split("\n").map((l) => `    ${l}`));
    if (m.kind === "question" && m.awaitReply && m.answer === undefined) out.push(`    ${how(m)}`);
  }
  return out.join("\n");
}

/** A progress or done message, told to the person. */
export function noticeText(n: { label: string; agentId: string; message: { kind: string; text: string; messageId: string }; more?: number }): string {
  const what = n.message.kind === "done" ? "is done" : "reports";
  const more = n.more ? ` (+${n.more} more: see messages)` : "";
  return `🐑 ${n.label} ${what}: ${n.message.text}${more}`;
}

/** Messages of a sheep not passed on yet (held back by the rate limit, or past one push's list), in one line. */
export function heldText(label: string, count: number): string {
  return `… ${count} more message${count === 1 ? "" : "s"} from ${label}: see messages`;
}

export function doctorText(r: DoctorReport): string {
  const { pass, warn, fail } = r.counts;
  const lines = r.checks.map((c) => `[${c.verdict}] ${c.name}: ${c.detail}${c.fix ? `\n       fix: ${c.fix}` : ""}`);
  return [`Doctor: ${pass} pass, ${warn} warn, ${fail} fail. Nothing was changed.`, ...lines].join("\n");
}

/** The doctor in one line: what failed and its fix, else what warns, else that all passed. */
export function verdictLine(r: DoctorReport): string {
  const bad = r.checks.filter((c) => c.verdict === "fail");
  const shown = bad.length ? bad : r.checks.filter((c) => c.verdict === "warn");
  if (shown.length === 0) return `all ${r.checks.length} checks pass.`;
  const kind = bad.length ? "fail" : "warn";
  return `${shown.length} ${kind}: ${shown.map((c) => `${c.name}: ${c.detail} (fix: ${c.fix})`).join("; ")}`;
}

/** `echo 2, scout 1 (+1 starting)`: the warm pool as every view counts it; undefined when it is empty. */
export function warmText(counts: Record<string, WarmCount>): string | undefined {
  const parts = Object.entries(counts)
    .filter(([, c]) => c.ready + c.starting > 0)
    .map(([name, c]) => `${name} ${c.ready}${c.starting ? ` (+${c.starting} starting)` : ""}`);
  return parts.length ? parts.join(", ") : undefined;
}

/**
 * The warm pool under the herd, in `herd` and `/shepherd herd` alike: what is ready, and why a name
 * the settings ask for is not warm; nothing without a pool.
 */
export function warmPoolLines(counts: Record<string, WarmCount>, problems: Record<string, string> = {}): string[] {
  const ready = warmText(counts);
  const why = Object.entries(problems).map(([name, text]) => `  ${name}: ${text}`);
  if (!ready && why.length === 0) return [];
  return [`Warm pool (not in the herd; a matching start takes one): ${ready ?? "empty"}.`, ...why];
}

/**
 * What a start cut short left with our mark and no record, said once the shepherd has taken its
 * sheep back: doctor names each, prune removes them. Nothing when nothing was left.
 */
export function leftoverText(l: { specs: readonly unknown[]; panes: readonly { host: string }[]; worktrees: readonly unknown[] }): string | undefined {
  const parts = [
    l.panes.length ? `${l.panes.length} pane${l.panes.length === 1 ? "" : "s"} on ${[...new Set(l.panes.map((p) => p.host))].join(", ")}` : "",
    l.worktrees.length ? `${l.worktrees.length} worktree${l.worktrees.length === 1 ? "" : "s"}` : "",
    l.specs.length ? `${l.specs.length} launch spec${l.specs.length === 1 ? "" : "s"}` : "",
  ].filter(Boolean);
  if (parts.length === 0) return undefined;
  return `pi-shepherd: a shepherd stopped during a start left ${parts.join(", ")} that no sheep record knows: /shepherd doctor names them, /shepherd prune removes them.`;
}

/** What the shepherd says when it took its sheep back at start: only the live ones count; nothing when none was. */
export function reattachText(r: Pick<AttachReport, "live" | "pruned">): string | undefined {
  const pruned = r.pruned.length ? `${r.pruned.length} whose panes were gone ${r.pruned.length === 1 ? "was" : "were"} pruned` : "";
  if (r.live.length === 0) return pruned ? `pi-shepherd: ${pruned}.` : undefined;
  return `pi-shepherd: re-attached ${r.live.length} sheep${pruned ? `; ${pruned}` : ""}.`;
}
