/**
 * What a push says in the shepherd's conversation: one custom message per result, question or
 * background delegation. The model reads `content` (bounded like a tool result); `details` keeps
 * everything, the full texts included.
 */
import type { Push } from "../core/async/courier.ts";
import { delegateSummary, delegateText } from "../actions/delegate-text.ts";
import { boundedText } from "./dispatch.ts";
import { heldText, questionText, replyHowTo } from "../texts/format.ts";
import { PUSH_TYPE } from "./push-type.ts";

export { PUSH_TYPE };

export interface PushMessage {
  customType: typeof PUSH_TYPE;
  content: string;
  display: true;
  details: Push;
}

export function pushMessage(push: Push): PushMessage {
  return { customType: PUSH_TYPE, content: boundedText(pushText(push)), display: true, details: push };
}

export function pushText(push: Push): string {
  switch (push.kind) {
    case "result": {
      const { item } = push;
      const body = item.status === "completed" ? (item.text ?? "") : `${item.error ?? ""}${item.text ? `\nPartial text:\n${item.text}` : ""}`;
      return [
        `[pi-shepherd] Result of ${item.promptId} from sheep "${push.label}" (${item.agentId}): ${item.status}.`,
        "(It was sent with notify and nobody waited for it; a wait on it returns the same result.)",
        "",
        body,
      ].join("\n");
    }
    case "question":
      return questionsText(push);
    case "delegation": {
      const { summary } = delegateSummary(push.mode, push.items, push.items.length);
      return [
        `[pi-shepherd] Background ${push.mode} delegation ${push.delegationId} is done.`,
        "",
        delegateText(push.mode, push.items, summary || `${push.items[0]?.agent ?? "The task"}: ${push.items[0]?.status ?? ""}`),
      ].join("\n");
    }
  }
}

/** How much of each question a push of several shows; `messages` shows them whole. */
export const LISTED_QUESTION_CHARS = 500;

type QuestionPush = Extract<Push, { kind: "question" }>;

/** One question as before, whole; several (one look's) as one list, each cut, answered the same way. */
function questionsText(push: QuestionPush): string {
  const all = push.messages ?? [push.message];
  const who = `Sheep "${push.label}" (${push.agentId})`;
  const tail = push.more ? `\n${heldText(push.label, push.more)}` : "";
  if (all.length === 1) {
    const m = all[0]!;
    const how = m.awaitReply
      ? `It waits for your answer${m.timeoutSec ? ` (for up to ${m.timeoutSec} s)` : ""}. ${replyHowTo(push.agentId, m.messageId)}`
      : "It does not wait for an answer; send it a prompt if it needs one.";
    return `[pi-shepherd] ${questionText(m, who, how)}${tail}`;
  }
  const lines = all.map((m) => {
    const waits = m.awaitReply ? ` (waits for your answer${m.timeoutSec ? `, up to ${m.timeoutSec} s` : ""})` : "";
    return `- ${m.messageId}${waits}: ${cut(m.text.replace(/\s+/g, " ").trim(), LISTED_QUESTION_CHARS)}`;
  });
  const waiting = all.filter((m) => m.awaitReply);
  const how = waiting.length
    ? `Answer each that waits with {"action":"reply","agentId":"${push.agentId}","messageId":"<its id>","text":"..."}; its shepherd_message call returns your text.`
    : "None of them waits for an answer; send the sheep a prompt if it needs one.";
  return (
    [
      `[pi-shepherd] ${who} asks ${all.length} questions (each cut at ${LISTED_QUESTION_CHARS} characters; action "messages" shows them whole):`,
      ...lines,
      how,
    ].join("\n") + tail
  );
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… [${text.length - max} more characters]` : text;
}
