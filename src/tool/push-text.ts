/**
 * What a push says in the shepherd's conversation: one custom message per result, question or
 * background delegation. The model reads `content` (bounded like a tool result); `details` keeps
 * everything, the full texts included.
 */
import type { Push } from "../core/courier.ts";
import { delegateSummary, delegateText } from "./delegate-text.ts";
import { boundedText } from "./dispatch.ts";
import { questionText, replyHowTo } from "./format.ts";
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
    case "question": {
      const m = push.message;
      const how = m.awaitReply
        ? `It waits for your answer${m.timeoutSec ? ` (for up to ${m.timeoutSec} s)` : ""}. ${replyHowTo(push.agentId, m.messageId)}`
        : "It does not wait for an answer; send it a prompt if it needs one.";
      return `[pi-shepherd] ${questionText(m, `Sheep "${push.label}" (${push.agentId})`, how)}`;
    }
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
