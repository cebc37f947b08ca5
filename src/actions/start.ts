import { callString } from "./call-text.ts";
import type { StartedAgent } from "../ports/types.ts";
import { isolationText, startedLine, startText } from "../texts/format.ts";
import { commandWorktreeSteps } from "./command-steps.ts";
import { type ActionResult, info, type Notice } from "./notice.ts";
import { fieldsOf } from "./fields.ts";
import { result } from "./result.ts";
import { defineAction } from "./spec.ts";
import { parseStart, type StartCommand } from "./start-command.ts";
import { startSheep } from "./start-run.ts";

export type { NewStartCommand, ResumeCommand, StartCommand } from "./start-command.ts";

/** The new sheep, where to watch it, and for a worktree the next steps as a person types them. */
async function startedAnswer(run: () => Promise<ActionResult>): Promise<Notice[]> {
  const started = (await run()).details.agent as StartedAgent;
  const isolation = started.worktree ? [isolationText(started, commandWorktreeSteps(started.label).land)] : [];
  return info([startedLine(started), ...(started.attachHint ? [`Watch it: ${started.attachHint}`] : []), ...isolation].join("\n"));
}

export const start = defineAction<"start", StartCommand>({
  name: "start",
  described: "start (a sheep from an agent definition; sends no task)",
  fields: fieldsOf(
    "agent",
    "label",
    "placement",
    "direction",
    "cwd",
    "host",
    "model",
    "agentScope",
    "confirmProjectAgents",
    "isolate",
    "sandbox",
    "budget",
    "resume",
  ),
  commands: [
    {
      name: "start",
      usage:
        "start <agent> [--label L] [--placement tab|pane|workspace] [--direction right|down] [--host NAME] [--cwd DIR] [--scope user|project|both] [--model M] [--isolate] [--sandbox]",
      summary:
        "start a sheep from an agent definition (no task is sent); --host: on a machine of your hosts setting; --isolate: in a git worktree of its own; --sandbox: in bubblewrap",
      flags: { label: "label", placement: "placement", direction: "direction", host: "host", cwd: "cwd", scope: "agentScope", model: "model" },
      switches: { isolate: "isolate", sandbox: "sandbox" },
      words: { min: 1, max: 1, what: "an agent name" },
      params: ([agent], flags) => ({ ...flags, action: "start", agent }),
      first: "agent",
      answer: startedAnswer,
    },
    {
      name: "resume",
      usage: "resume <id|label> [--label L] [--placement tab|pane|workspace] [--direction right|down]",
      summary: "continue a closed or exited sheep's conversation in a new pane",
      flags: { label: "label", placement: "placement", direction: "direction" },
      words: { min: 1, max: 1, what: "the id or label of a closed or exited sheep" },
      params: ([resume], flags) => ({ ...flags, action: "start", resume }),
      first: "resumable",
      answer: startedAnswer,
    },
  ],
  renderCall: (args, t) => {
    const s = (k: string) => callString(args, k);
    const parts = [t.fg("accent", s("agent") ?? "?")];
    if (s("label")) parts.push(t.fg("muted", `as ${s("label")}`));
    if (s("placement")) parts.push(t.fg("dim", `[${s("placement")}]`));
    if (args.isolate === true) parts.push(t.fg("dim", "⎇ isolated"));
    return parts;
  },
  parse: parseStart,
  run: async (cmd, ctx) => {
    const started = await startSheep(cmd, ctx);
    return result("start", startText(started), { agent: started });
  },
});
