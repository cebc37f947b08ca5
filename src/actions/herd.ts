import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";

export const herd = defineAction({
  name: "herd",
  described: "herd (list live sheep)",
  fields: fieldsOf("all"),
  commands: [
    {
      name: "herd",
      usage: "herd",
      summary: "this shepherd's live sheep: state, runtime, label, age, active prompt",
      words: { min: 0, max: 0, what: "" },
      params: () => ({ action: "herd" }),
    },
  ],
});
