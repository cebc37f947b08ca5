import type { WarmCount } from "../core/shepherd.ts";
import type { DaySpend } from "../core/herd/spend.ts";
import { dayText } from "../domain/budget.ts";
import type { AgentStatus } from "../ports/types.ts";
import { info } from "./notice.ts";
import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import { result } from "./result.ts";
import { defined, optionalBoolean } from "./checks.ts";
import { withHost } from "./shown-status.ts";
import { herdText, warmPoolLines } from "../texts/format.ts";

const HOW_TO_START = 'Start one with {"action":"start","agent":"<name>"}.';
const COMMAND_HOW_TO_START = "Start one with /shepherd start <agent> (/shepherd sheep lists agents).";

export type HerdCommand = { action: "herd"; all?: boolean };

export const herd = defineAction<"herd", HerdCommand>({
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
      answer: async (run, _cmd, now) => {
        const { details } = await run();
        const day = details.budgetDay as DaySpend | undefined;
        const pool = [
          ...warmPoolLines((details.warm ?? {}) as Record<string, WarmCount>, (details.warmProblems ?? {}) as Record<string, string>),
          ...(day ? [dayText(day.used, day.daily)] : []),
        ];
        return info([herdText(details.agents as AgentStatus[], COMMAND_HOW_TO_START, now()), ...pool].join("\n"));
      },
    },
  ],
  parse: (p): HerdCommand => defined<HerdCommand>({ action: "herd", all: optionalBoolean(p, "all") }),
  run: async (cmd, ctx) => {
    const { shepherd } = ctx;
    const agents = (await shepherd.herd(ctx.signal)).map((a) => withHost(ctx, a));
    const pool = shepherd.warm();
    // The day's budget (every shepherd of the user), where the setting has one.
    const day = await shepherd.spend.day();
    const poolLines = [...warmPoolLines(pool.counts, pool.problems), ...(day ? [dayText(day.used, day.daily)] : [])];
    const warm = {
      ...(day ? { budgetDay: day } : {}),
      ...(Object.keys(pool.counts).length ? { warm: pool.counts } : {}),
      ...(Object.keys(pool.problems).length ? { warmProblems: pool.problems } : {}),
    };
    if (cmd.all !== true) return result("herd", [herdText(agents, HOW_TO_START), ...poolLines].join("\n"), { agents, ...warm });
    const others = (await shepherd.others()).map((a) => ({
      agentId: a.agentId,
      agent: a.agent,
      label: a.label,
      runtime: a.runtime,
      state: a.state,
      owner: a.owner,
      createdAt: a.createdAt,
    }));
    const lines = others.map((o) => `${o.label} (${o.agentId}, agent ${o.agent}): ${o.state}; belongs to shepherd ${o.owner}.`);
    return result("herd", [herdText(agents, HOW_TO_START), ...poolLines, ...(lines.length ? ["", "Other shepherds' sheep:", ...lines] : [])].join("\n"), {
      agents,
      ...warm,
      others,
    });
  },
});
