import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import { result } from "./result.ts";
import { withHost } from "./shown-status.ts";
import { requireString } from "./checks.ts";
import { sheepLine } from "../tool/format.ts";

export type StatusCommand = { action: "status"; target: string };

export const status = defineAction({
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
    },
  ],
  parse: (p): StatusCommand => ({ action: "status", target: requireString(p, "agentId", "status") }),
  run: async (cmd, ctx) => {
    const status = withHost(ctx, await ctx.shepherd.status(ctx.shepherd.registry.resolve(cmd.target), ctx.signal));
    return result("status", sheepLine(status), { status });
  },
});
