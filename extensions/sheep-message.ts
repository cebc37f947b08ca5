/**
 * The sheep's side of talking to its shepherd: the `shepherd_message` tool. Messages are appended
 * to the sheep's message log; a question with awaitReply waits for the shepherd's `reply` (a file
 * in replies/) and returns it as this call's result.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "@sinclair/typebox";
import { appendFileSync, mkdirSync, statSync, watch, type FSWatcher } from "node:fs";
import { newId } from "../src/domain/ids.ts";
import type { MessageKind, SheepMessage } from "../src/ports/types.ts";
import { readJsonSync, writeJsonExclusiveSync } from "../src/protocol/files.ts";
import type { SheepLayout } from "../src/protocol/layout.ts";
import { DEFAULT_REPLY_TIMEOUT_SEC, MAX_LOG_BYTES, MAX_MESSAGE_CHARS, MAX_REPLY_TIMEOUT_SEC, MESSAGE_KINDS, messageLine } from "../src/protocol/message-log.ts";
import type { ReplyFile } from "../src/protocol/messages.ts";
import { MESSAGE_TOOL } from "../src/protocol/launch-spec.ts";

export interface MessageToolHooks {
  /** The prompt the sheep works on, recorded with each message. */
  activePromptId(): string | undefined;
  /** Told when a question starts and stops waiting for its reply (undefined), to report it. */
  asking(question: { messageId: string; text: string } | undefined): void;
}

const parameters = Type.Object({
  text: Type.String({ description: "What to tell or ask the shepherd." }),
  kind: Type.Unsafe<MessageKind>({
    type: "string",
    enum: [...MESSAGE_KINDS],
    description: '"progress" (a short status update), "question" (ask something) or "done" (the task is finished).',
  }),
  awaitReply: Type.Optional(Type.Boolean({ description: "question only: wait for the shepherd's answer and get it as this call's result." })),
  timeout: Type.Optional(Type.Number({ description: `awaitReply: seconds to wait for the answer (default ${DEFAULT_REPLY_TIMEOUT_SEC}).` })),
});

function fail(message: string): never {
  throw new Error(`[invalid_params] ${message}`);
}

export function registerMessageTool(pi: ExtensionAPI, layout: SheepLayout, hooks: MessageToolHooks): void {
  pi.registerTool({
    name: MESSAGE_TOOL,
    label: "Message the shepherd",
    description: [
      "Send a message to your shepherd: the agent that started you and gives you your tasks.",
      'kind "progress": a short status update, shown to the person watching. kind "done": the task is finished (your final answer is still what the shepherd receives).',
      `kind "question": ask the shepherd something; with awaitReply true this call waits for the answer (up to timeout seconds, default ${DEFAULT_REPLY_TIMEOUT_SEC}) and returns it.`,
    ].join(" "),
    promptSnippet: "Tell your shepherd (the agent that gave you this task) about progress, ask it a question and wait for the answer, or say you are done",
    promptGuidelines: [
      `${MESSAGE_TOOL}: when you cannot go on without a decision from whoever gave you the task, send kind "question" with awaitReply true and continue with the answer it returns.`,
      `${MESSAGE_TOOL}: send kind "progress" sparingly, at real milestones of a long task; your final answer is what the shepherd receives as your result.`,
    ],
    parameters,
    async execute(_toolCallId, params, signal) {
      const p = params as { text?: unknown; kind?: unknown; awaitReply?: unknown; timeout?: unknown };
      if (typeof p.text !== "string" || p.text.trim() === "") fail('"text" must be a non-empty string.');
      if (p.text.length > MAX_MESSAGE_CHARS)
        fail(`"text" has ${p.text.length} characters; at most ${MAX_MESSAGE_CHARS}. Put long material in a file and name it.`);
      if (typeof p.kind !== "string" || !(MESSAGE_KINDS as readonly string[]).includes(p.kind)) fail(`"kind" must be one of ${MESSAGE_KINDS.join(", ")}.`);
      const awaitReply = p.awaitReply === true || p.awaitReply === "true";
      if (awaitReply && p.kind !== "question") fail('"awaitReply" is for kind "question" only.');
      const timeout = p.timeout === undefined ? DEFAULT_REPLY_TIMEOUT_SEC : Number(p.timeout);
      if (!Number.isFinite(timeout) || timeout < 1 || timeout > MAX_REPLY_TIMEOUT_SEC) fail(`"timeout" must be 1 to ${MAX_REPLY_TIMEOUT_SEC} seconds.`);
      const promptId = hooks.activePromptId();
      const message: SheepMessage = {
        messageId: newId("message"),
        kind: p.kind as MessageKind,
        text: p.text,
        at: new Date().toISOString(),
        ...(awaitReply ? { awaitReply: true, timeoutSec: timeout } : {}),
        ...(promptId ? { promptId } : {}),
      };
      const line = messageLine(message);
      let size = 0;
      try {
        size = statSync(layout.messages).size;
      } catch {
        // no log yet
      }
      if (size + Buffer.byteLength(line) > MAX_LOG_BYTES) {
        throw new Error(`[log_full] the message log to the shepherd is full (${MAX_LOG_BYTES} bytes); put what is left in your final answer.`);
      }
      appendFileSync(layout.messages, line, { mode: 0o600 });
      const details = { messageId: message.messageId, kind: message.kind };
      if (!awaitReply) {
        return { content: [{ type: "text" as const, text: `Sent to your shepherd as ${message.kind} (${message.messageId}).` }], details };
      }
      hooks.asking({ messageId: message.messageId, text: message.text });
      let reply: string | undefined;
      try {
        reply = await replyTo(layout, message.messageId, timeout * 1000, signal);
      } finally {
        hooks.asking(undefined);
      }
      if (reply === undefined) {
        return {
          content: [
            { type: "text" as const, text: `No reply from the shepherd within ${timeout}s; go on without it and say what you assumed in your final answer.` },
          ],
          details: { ...details, replied: false },
        };
      }
      return { content: [{ type: "text" as const, text: `The shepherd replied:\n${reply}` }], details: { ...details, replied: true, reply } };
    },
  });
}

/**
 * The shepherd's reply, or undefined once the time is up. Giving up is itself written to the
 * reply's file name, exclusively: a reply that lands at the same moment either got there first
 * (and is returned) or is told it came too late. Never both.
 */
async function replyTo(layout: SheepLayout, messageId: string, ms: number, signal: AbortSignal | undefined): Promise<string | undefined> {
  const path = layout.replyFile(messageId);
  const read = () => {
    const r = readJsonSync<ReplyFile>(path);
    return r && !("expired" in r) && typeof r.text === "string" ? r.text : undefined;
  };
  const giveUp = () => {
    if (writeJsonExclusiveSync(path, { messageId, expired: true, at: new Date().toISOString() } satisfies ReplyFile)) return undefined;
    return read();
  };
  mkdirSync(layout.replies, { recursive: true, mode: 0o700 });
  let watcher: FSWatcher | undefined;
  let poll: NodeJS.Timeout | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<string | undefined>((resolve, reject) => {
      const look = () => {
        const r = read();
        if (r !== undefined) resolve(r);
      };
      try {
        watcher = watch(layout.replies, { persistent: false }, look);
        watcher.on("error", () => undefined);
      } catch {
        // the poll below still sees it
      }
      poll = setInterval(look, 500);
      timer = setTimeout(() => resolve(giveUp()), ms);
      const onAbort = () => {
        const r = giveUp();
        if (r !== undefined) resolve(r);
        else reject(new Error("[aborted] the question was cancelled before the shepherd replied."));
      };
      if (signal?.aborted) onAbort();
      else signal?.addEventListener("abort", onAbort, { once: true });
      look();
    });
  } finally {
    watcher?.close();
    clearInterval(poll);
    clearTimeout(timer);
  }
}
