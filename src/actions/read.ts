import { callString } from "./call-text.ts";
import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import { MAX_SCREEN_LINES } from "../domain/bounds.ts";
import { ShepherdError } from "../domain/errors.ts";
import { result } from "./result.ts";
import { defined, optionalEnum, optionalNumber, requireString } from "./checks.ts";
import { conversationText, screenText, turnsText, whoText } from "../texts/format.ts";
import { lastLines, withoutPiFrame } from "../texts/pi-screen.ts";
import { egressText } from "../texts/egress.ts";
import { MAX_EGRESS_ENTRIES } from "../ports/egress-report.ts";

/** Entries of the egress log a read shows unless it asks for another number (`lines`). */
const EGRESS_ENTRIES = 50;

const SOURCES = ["session", "screen", "egress"] as const;
export type ReadSource = (typeof SOURCES)[number];

/**
 * More than pi's frame and footer take at the bottom of a sheep's pane: pi draws full screen, so
 * blank rows can stand between its last words and its editor.
 */
const PI_FRAME_LINES = 200;

/** session: the last `turns` turns from the session file (default); screen: the pane's last `lines`; egress: the last `lines` entries of its egress log. */
export type ReadCommand = { action: "read"; target: string; source: ReadSource; turns?: number; lines?: number };

export const read = defineAction({
  name: "read",
  described: "read (a sheep's conversation, screen or egress log)",
  fields: fieldsOf("target", "source", "turns", "lines"),
  commands: [
    {
      name: "read",
      usage: "read <id|label> [--turns N] [--source session|screen|egress] [--lines N]",
      summary: "a sheep's recent conversation (prompts, answers, tool calls), its screen, or what it tried to reach",
      flags: { turns: "turns", source: "source", lines: "lines" },
      words: { min: 1, max: 1, what: "a sheep's id or label" },
      params: ([target], flags) => ({ ...flags, action: "read", target }),
      first: "sheep",
    },
  ],
  renderCall: (args, t) => [t.fg("accent", callString(args, "target") ?? "?")],
  parse: (p): ReadCommand => {
    const source = optionalEnum(p, "source", SOURCES) ?? "session";
    const turns = optionalNumber(p, "turns", 1, 100);
    if (turns !== undefined && source !== "session")
      throw new ShepherdError(
        "invalid_params",
        `"turns" counts turns of the session file; the ${source === "screen" ? "screen" : "egress log"} is read by "lines".`,
      );
    return defined<ReadCommand>({
      action: "read",
      target: requireString(p, "target", "read"),
      source,
      turns,
      lines: optionalNumber(p, "lines", 1, source === "egress" ? MAX_EGRESS_ENTRIES : MAX_SCREEN_LINES),
    });
  },
  run: async (cmd, { shepherd }) => {
    const agentId = shepherd.registry.resolve(cmd.target);
    const rec = shepherd.registry.agents.get(agentId);
    const who = whoText({ agentId, ...(rec ? { label: rec.label, agent: rec.agent } : {}) });
    const { source } = cmd;
    if (source === "screen") {
      const lines = cmd.lines ?? 40;
      // pi's editor frame and footer fill the bottom of the pane: ask for more, keep `lines` of the rest.
      const text = lastLines(withoutPiFrame(await shepherd.read(agentId, Math.min(MAX_SCREEN_LINES, lines + PI_FRAME_LINES))), lines);
      return result("read", screenText(who, text), { agentId, source, text });
    }
    if (source === "egress") {
      const egress = await shepherd.egress(agentId, cmd.lines ?? EGRESS_ENTRIES);
      const text = egressText(who, egress, rec?.sandboxed === true);
      return result("read", text, { agentId, source, text, ...(egress ? { egress } : {}), ...(rec?.sandboxed ? { sandboxed: true } : {}) });
    }
    const conversation = await shepherd.conversation(agentId, cmd.turns ?? 3);
    const all = turnsText(conversation.turns ?? []);
    const text = cmd.lines === undefined ? all : lastLines(all, cmd.lines);
    return result("read", conversationText(who, conversation, text), {
      agentId,
      source,
      text,
      sessionPath: conversation.sessionPath,
      turns: conversation.turns ?? [],
      earlier: conversation.earlier,
    });
  },
});
