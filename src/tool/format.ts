import type { AgentStatus, CloseOutcome, StartedAgent, SubmittedPrompt, WaitItem } from "../core/types.js";
import type { AgentDefinition } from "../core/types.js";
import type { SkippedFile } from "../agents/discover.js";
import type { DoctorReport } from "../doctor/types.js";

/** Texts a model reads: what happened, and the next step. */

export function startText(a: StartedAgent): string {
  const how = a.resumedFrom
    ? `Resumed sheep "${a.label}" (agent ${a.agent}) from ${a.resumedFrom}, its earlier conversation kept,`
    : `Started sheep "${a.label}" (agent ${a.agent})`;
  const lines = [
    `${how} as ${a.agentId} on ${a.runtime} pane ${a.paneId}; it is idle and ready.`,
    `Next: prompt it with {"action":"prompt","agentId":"${a.agentId}","message":"..."}, then collect the answer with {"action":"wait","promptId":"..."}.`,
  ];
  if (a.attachHint) lines.push(`A person can watch it with: ${a.attachHint}`);
  return lines.join("\n");
}

export function promptText(p: SubmittedPrompt): string {
  return [
    `Prompt ${p.promptId} sent to ${p.agentId}; the sheep is working on it in the background.`,
    `Next: {"action":"wait","promptId":"${p.promptId}"} returns its answer (to wait for several sheep at once, pass "promptIds").`,
  ].join("\n");
}

export function waitText(items: WaitItem[], labels: Map<string, string>): string {
  const done = items.filter((i) => i.status === "completed").length;
  const head = items.length === 1 ? "" : `${done}/${items.length} completed.\n\n`;
  return (
    head +
    items
      .map((i) => {
        const who = labels.get(i.agentId) ? `${labels.get(i.agentId)} (${i.agentId})` : i.agentId || "unknown sheep";
        const title = `## ${i.promptId} · ${who} · ${i.status}`;
        if (i.status === "completed") return `${title}\n${i.text ?? ""}`;
        if (i.status === "timeout") return `${title}\nStill working; nothing was stopped. Wait again with the same promptId.`;
        if (i.status === "blocked") return `${title}\nThe sheep waits on: ${i.error ?? "a question"}. Look at it with action "read".`;
        return `${title}\n${i.error ?? ""}${i.text ? `\nPartial text:\n${i.text}` : ""}`;
      })
      .join("\n\n")
  );
}

export function statusText(s: AgentStatus): string {
  const active = s.activePromptId ? `, working on ${s.activePromptId}` : "";
  const rt = s.runtimeStatus ? `, ${s.runtime} says ${s.runtimeStatus}` : "";
  return `${s.label} (${s.agentId}, agent ${s.agent}): ${s.state}${active}; pane ${s.paneAlive ? "alive" : "gone"} on ${s.runtime}${rt}.`;
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

export function herdText(list: AgentStatus[], now = Date.now()): string {
  if (list.length === 0) return 'No live sheep. Start one with {"action":"start","agent":"<name>"}.';
  return list.map((s) => `${statusText(s)} Started ${ageText(now - Date.parse(s.createdAt))} ago.`).join("\n");
}

export function closeText(c: CloseOutcome): string {
  if (c.alreadyClosed) return `${c.agentId} was already closed.`;
  const cancelled = c.cancelledPromptIds.length ? ` Cancelled: ${c.cancelledPromptIds.join(", ")}.` : "";
  return `Closed ${c.agentId}; its pane is gone and its session file is kept.${cancelled}`;
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
