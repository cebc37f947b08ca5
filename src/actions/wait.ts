import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

export const wait = defineAction({
  name: "wait",
  described: "wait (block until one or several prompts are answered; results in the order asked)",
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
});
