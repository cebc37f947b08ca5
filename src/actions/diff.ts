import { callString } from "./call-text.ts";
import { visibleControls } from "../texts/evidence.ts";
import { info, textOf } from "./notice.ts";
import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import { result } from "./result.ts";
import { defined, optionalBoolean, requireString } from "./checks.ts";
import { diffText } from "../texts/format.ts";

export type DiffCommand = { action: "diff"; target: string; stat?: boolean };

export const diff = defineAction({
  name: "diff",
  described: "diff (what a sheep's last prompt changed)",
  fields: fieldsOf("target", "stat"),
  commands: [
    {
      name: "diff",
      usage: "diff <id|label> [--stat]",
      summary: "what the sheep's last prompt changed (the patch, or with --stat the files)",
      switches: { stat: "stat" },
      words: { min: 1, max: 1, what: "a sheep's id or label" },
      params: ([target], flags) => ({ ...flags, action: "diff", target }),
      first: "sheep",
      // Patches hold the repository's bytes: escape sequences in them must not reach the terminal as such.
      answer: async (run) => info(visibleControls(textOf(await run()))),
    },
  ],
  renderCall: (args, t) => [t.fg("accent", callString(args, "target") ?? "?")],
  parse: (p): DiffCommand => defined<DiffCommand>({ action: "diff", target: requireString(p, "target", "diff"), stat: optionalBoolean(p, "stat") }),
  run: async (cmd, { shepherd }) => {
    // Closed sheep count here: a delegated sheep is closed by the time anyone asks for its diff.
    const evidence = await shepherd.diff(shepherd.registry.resolve(cmd.target, { closed: true }));
    return result("diff", diffText(evidence, cmd.stat === true), { ...evidence });
  },
});
