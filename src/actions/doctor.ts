import { textOf } from "./notice.ts";
import { defineAction } from "./spec.ts";

export type DoctorCommand = { action: "doctor" };

/** Runs without a composed shepherd: the tool's entry answers it (edge/entry.ts), not the table's run. */
export const doctor = defineAction({
  name: "doctor",
  described: "doctor (check the setup; changes nothing)",
  fields: {},
  commands: [
    {
      name: "doctor",
      usage: "doctor",
      summary: "check versions, runtime, settings, agent files, stale records and orphan panes (changes nothing)",
      words: { min: 0, max: 0, what: "" },
      params: () => ({ action: "doctor" }),
      answer: async (run) => {
        const r = await run();
        const counts = r.details.counts as { warn: number; fail: number };
        return [{ level: counts.fail ? "error" : counts.warn ? "warning" : "info", text: textOf(r) }];
      },
    },
  ],
  parse: (): DoctorCommand => ({ action: "doctor" }),
});
