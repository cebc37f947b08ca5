import { callString, preview } from "./call-text.ts";
import { commandBusyText, quoteWord } from "./command-steps.ts";
import { info } from "./notice.ts";
import { fieldsOf } from "./fields.ts";
import { defineAction } from "./spec.ts";
import { MAX_REQUEST_ID_CHARS } from "../domain/bounds.ts";
import { isShepherdError, ShepherdError } from "../domain/errors.ts";
import type { DeliverAs, SubmittedPrompt } from "../ports/types.ts";
import { result } from "./result.ts";
import { defined, optionalBoolean, optionalEnum, optionalString, requireString } from "./checks.ts";
import { promptText } from "../texts/format.ts";

const DELIVER_AS = ["steer", "followUp"] as const;

/** `target` is a sheep's id or its live label; the run resolves it (Registry.resolve). */
export type PromptCommand = { action: "prompt"; target: string; message: string; notify?: boolean; deliverAs?: DeliverAs; requestId?: string };

export const prompt = defineAction<"prompt", PromptCommand>({
  name: "prompt",
  described: "prompt (returns a promptId at once, not the answer)",
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
      answer: async (run, cmd) => {
        const submitted = (
          await run().catch((e: unknown) => {
            // Refused because the sheep works: the way on, in the flags a person types.
            if (isShepherdError(e, "prompt_pending"))
              throw new ShepherdError("prompt_pending", commandBusyText(e.message, cmd.target).slice("[prompt_pending] ".length));
            throw e;
          })
        ).details.prompt as SubmittedPrompt;
        return info(promptText(submitted, `Its answer: /shepherd wait ${quoteWord(cmd.target)}`));
      },
    },
  ],
  renderCall: (args, t, expanded) => [
    t.fg("accent", callString(args, "agentId") ?? "?"),
    t.fg("dim", preview(callString(args, "message") ?? "", 60, expanded, "  ")),
  ],
  parse: (p): PromptCommand => {
    const target = requireString(p, "agentId", "prompt");
    const message = p.message;
    if (typeof message !== "string" || message.length === 0) {
      throw new ShepherdError("invalid_params", 'action "prompt" needs "message" (a non-empty string).');
    }
    const requestId = optionalString(p, "requestId");
    if (requestId !== undefined && (requestId.length === 0 || requestId.length > MAX_REQUEST_ID_CHARS)) {
      throw new ShepherdError("invalid_params", `"requestId" must be 1 to ${MAX_REQUEST_ID_CHARS} characters.`);
    }
    return defined<PromptCommand>({
      action: "prompt",
      target,
      message,
      notify: optionalBoolean(p, "notify"),
      deliverAs: optionalEnum(p, "deliverAs", DELIVER_AS),
      requestId,
    });
  },
  run: async (cmd, { shepherd }) => {
    const submitted = await shepherd.prompt(shepherd.registry.resolve(cmd.target), cmd.message, {
      ...(cmd.notify !== undefined ? { notify: cmd.notify } : {}),
      ...(cmd.deliverAs !== undefined ? { deliverAs: cmd.deliverAs } : {}),
      ...(cmd.requestId !== undefined ? { requestId: cmd.requestId } : {}),
    });
    return result("prompt", promptText(submitted), { prompt: submitted });
  },
});
