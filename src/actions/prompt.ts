import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

export const prompt = defineAction({
  name: "prompt",
  described:
    "prompt (send a message; returns at once with a promptId; notify: true brings the answer to you by itself; deliverAs steers a working sheep or queues behind it; requestId makes it idempotent)",
  fields: fieldsOf("agentId", "message", "notify", "deliverAs", "requestId"),
  commands: [
    {
      name: "prompt",
      usage: "prompt <id|label> [--steer|--follow-up] <text…>",
      summary: "send a sheep a prompt (the rest of the line); --steer: into its running turn; --follow-up: queued behind it",
      switches: { steer: "steer", "follow-up": "followUp" },
      // The text is the rest of the line as typed: /shepherd reads it itself (command/parse.ts).
      words: { min: 2, max: Number.POSITIVE_INFINITY, what: "a sheep's id or label and the text to send" },
      params: ([agentId, ...text], flags) => ({
        action: "prompt",
        agentId,
        message: text.join(" "),
        ...(flags.steer ? { deliverAs: "steer" } : flags.followUp ? { deliverAs: "followUp" } : {}),
      }),
      first: "sheep",
    },
  ],
});
