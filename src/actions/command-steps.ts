/**
 * The next steps an action's answer gives a person at /shepherd, in the words they type: the
 * tool's answers say the same steps in the tool's fields (texts/format.ts takes either).
 */
import { BUSY_WAYS_TOOL } from "../core/prompts/prompt.ts";
import type { WaitSteps, WorktreeSteps } from "../texts/format.ts";

/** A word as the user would type it so that tokenize() gives it back unchanged. */
export function quoteWord(word: string): string {
  if (word !== "" && /^[^\s"'\\]+$/.test(word)) return word;
  return `"${word.replace(/["\\]/g, "\\$&")}"`;
}

/** The next steps for a kept worktree, as a person types them. */
export function commandWorktreeSteps(name: string): WorktreeSteps {
  return { land: `/shepherd land ${quoteWord(name)}`, remove: `/shepherd close ${quoteWord(name)} --remove-worktree` };
}

/** How a person answers a sheep's question. */
export function commandReplyHowTo(name: string, messageId: string): string {
  return `Answer it: /shepherd reply ${quoteWord(name)} ${messageId} <your answer>`;
}

/**
 * The busy refusal in a person's words: the tool's says deliverAs "steer"/"followUp", a person at
 * /shepherd has --steer and --follow-up. Anything else is left as it is.
 */
export function commandBusyText(text: string, target: string): string {
  if (!text.startsWith("[prompt_pending]") || !text.endsWith(BUSY_WAYS_TOOL)) return text;
  const name = quoteWord(target);
  return `${text.slice(0, -BUSY_WAYS_TOOL.length)}wait for its answer (/shepherd wait ${name}), or send again with --steer (into its running turn) or --follow-up (queued behind it): /shepherd prompt ${name} --follow-up <text…>`;
}

/** A wait's next steps as a person types them. */
export const COMMAND_WAIT_STEPS: WaitSteps = {
  reply: (i, messageId) => commandReplyHowTo(i.label ?? i.agentId, messageId),
  read: (i) => `Look at it: /shepherd read ${quoteWord(i.label ?? i.agentId)}`,
  again: (i) => `Wait again: /shepherd wait ${quoteWord(i.label ?? i.agentId)}`,
};
