import { printable } from "../domain/printable.ts";
import { callString } from "./call-text.ts";
import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import type { WaitProgress } from "../core/shepherd.ts";
import { personEdge } from "../ports/types.ts";
import { result } from "./result.ts";
import { defined, optionalNumber, promptIdsOf } from "./checks.ts";
import type { PromptId } from "../domain/ids.ts";
import { waitText } from "../texts/format.ts";

export type WaitCommand = { action: "wait"; promptIds: PromptId[]; timeout?: number };

export const wait = defineAction({
  name: "wait",
  described: "wait (the answers of one or several prompts, in the order asked)",
  fields: fieldsOf("promptId", "promptIds", "timeout"),
  commands: [
    {
      name: "wait",
      usage: "wait [<id|label>]",
      summary: "wait for a sheep's pending prompts (no sheep: every one's) and show the answers; Escape stops waiting",
      words: { min: 0, max: 1, what: "" },
      // Which prompts are pending is known only when it runs: /shepherd builds the wait then (command/run.ts).
      params: () => ({ action: "wait" }),
      first: "sheep",
    },
  ],
  renderCall: (args, t) => {
    const one = callString(args, "promptId");
    const ids = Array.isArray(args.promptIds) ? (args.promptIds as unknown[]).map((x) => printable(String(x))) : one ? [one] : [];
    const parts = [t.fg("accent", ids.length > 3 ? `${ids.slice(0, 3).join(", ")} +${ids.length - 3}` : ids.join(", "))];
    if (args.timeout !== undefined) parts.push(t.fg("dim", `(timeout ${printable(String(args.timeout))}s)`));
    return parts;
  },
  parse: (p): WaitCommand => defined<WaitCommand>({ action: "wait", promptIds: promptIdsOf(p), timeout: optionalNumber(p, "timeout", 0, 7 * 24 * 3600) }),
  run: async (cmd, ctx) => {
    const { shepherd } = ctx;
    const settled = await shepherd.wait(cmd.promptIds, {
      timeoutSec: cmd.timeout ?? ctx.settings.waitTimeout,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(ctx.byPerson || personEdge(ctx.edge) ? { byPerson: true } : {}),
      ...(ctx.onProgress ? { onProgress: (pr: WaitProgress) => ctx.onProgress!(`${pr.done}/${pr.total} done`, { action: "wait", progress: pr }) } : {}),
    });
    // Each result names its sheep, so a person (and the model) sees who answered, not a prompt id.
    const results = settled.map((r) => {
      const a = shepherd.registry.agents.get(r.agentId);
      return a ? { ...r, label: a.label, agent: a.agent } : r;
    });
    return result("wait", waitText(results), { results });
  },
});
