import { sheepCall } from "./call-text.ts";
import type { AgentStatus } from "../ports/types.ts";
import { info } from "./notice.ts";
import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import { result } from "./result.ts";
import { withEgress, withHost } from "./shown-status.ts";
import { requireString } from "./checks.ts";
import { sheepLine } from "../texts/format.ts";

export type StatusCommand = { action: "status"; target: string };

export const status = defineAction<"status", StatusCommand>({
  name: "status",
  described: "status",
  fields: fieldsOf("agentId"),
  commands: [
    {
      name: "status",
      usage: "status <id|label>",
      summary: "one sheep's state",
      words: { min: 1, max: 1, what: "a sheep's id or label" },
      params: ([agentId]) => ({ action: "status", agentId }),
      first: "sheep",
      answer: async (run, _cmd, now) => info(sheepLine((await run()).details.status as AgentStatus, now())),
    },
  ],
  renderCall: (args, t) => sheepCall(args, t),
  parse: (p): StatusCommand => ({ action: "status", target: requireString(p, "agentId", "status") }),
  run: async (cmd, ctx) => {
    const status = await withEgress(ctx, withHost(ctx, await ctx.shepherd.status(ctx.shepherd.registry.resolve(cmd.target), ctx.signal)));
    return result("status", sheepLine(status), { status });
  },
});
