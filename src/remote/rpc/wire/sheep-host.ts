/**
 * The sheep host port's wire: served on the far end's FileSheepHost, asked by RemoteSheepHost.
 * Subscriptions are the far end's own (one watcher per sheep, its changes pushed as events).
 */
import type { Delivery, PrepareRequest, SheepHost } from "../../../ports/sheep-host.ts";
import { arrayOf, fields, type Guard, isAgentId, isObject, isString, isStrings, oneOf, optional } from "../shape.ts";
import { agentId, ignored, methodsOn, num, obj, str } from "./method.ts";

/** What the sheep host's methods are served on: the host, and the far end's subscriptions. */
export interface HostSide {
  host: SheepHost;
  /** Idempotent: a reconnecting session and the proxies may both subscribe again. */
  subscribe(agentId: string): void;
  unsubscribe(agentId: string): void;
}

const prepared = fields({ sessionPath: isString, command: fields({ argv: isStrings, reporting: isStrings }) });
const result = (promptId: string): Guard =>
  optional(fields({ promptId: (v) => v === promptId, status: oneOf("completed", "failed", "cancelled"), text: isString }));
const message = fields({ messageId: isString, kind: isString, text: isString, at: isString });
const card = fields({ agentId: isAgentId, agent: isString, label: isString, cwd: isString, sessionPath: isString, createdAt: isString, definition: isObject });
const line = fields({ kind: oneOf("prompt", "answer", "tool", "error"), text: isString, failed: optional(oneOf(true, false)) });
const conversation = fields({
  sessionPath: isString,
  earlier: oneOf(true, false),
  turns: optional(arrayOf(fields({ at: optional(isString), lines: arrayOf(line), cut: optional(oneOf(true)) }))),
});
const exitedAt = fields({ code: (v) => v === null || Number.isSafeInteger(v), signal: optional(isString), at: isString, inferred: optional(oneOf(true)) });
const snapshot = fields({
  ready: optional(fields({ pid: Number.isSafeInteger, readyAt: isString, sessionPath: optional(isString) })),
  exited: optional(exitedAt),
  piGone: optional(oneOf(true)),
  blocked: optional(isString),
  asking: optional(fields({ messageId: isString, text: isString })),
});
const replyPairs = arrayOf((e) => Array.isArray(e) && e.length === 2 && isString(e[0]) && (e[1] === "replied" || e[1] === "expired"));

const method = methodsOn<HostSide>();

export const HOST_WIRE = {
  prepare: method("host.prepare", [obj<PrepareRequest>()], prepared, (s, req) => s.host.prepare(req)),
  staleSpecs: method("host.staleSpecs", [num], arrayOf(fields({ agentId: isAgentId })), (s, olderThanMs) => s.host.staleSpecs?.(olderThanMs)),
  snapshot: method("host.snapshot", [agentId], snapshot, (s, id) => s.host.snapshot(id)),
  /** The answer must be the result of the prompt asked about. */
  result: method(
    "host.result",
    [agentId, str],
    (v, [, promptId]) => result(promptId)(v),
    (s, id, promptId) => s.host.result(id, promptId),
  ),
  submit: method("host.submit", [agentId, obj<Delivery>()], ignored, (s, id, delivery) => s.host.submit(id, delivery)),
  messages: method("host.messages", [agentId], arrayOf(message), (s, id) => s.host.messages(id)),
  /** A Map travels as its entries. */
  replies: method("host.replies", [agentId], replyPairs, async (s, id) => [...(await s.host.replies(id)).entries()]),
  replyText: method("host.replyText", [agentId, str], optional(isString), (s, id, messageId) => s.host.replyText?.(id, messageId)),
  reply: method("host.reply", [agentId, str, str], oneOf("delivered", "already_replied", "expired"), (s, id, messageId, text) =>
    s.host.reply(id, messageId, text),
  ),
  subscribe: method("host.subscribe", [agentId], ignored, (s, id) => s.subscribe(id)),
  unsubscribe: method("host.unsubscribe", [agentId], ignored, (s, id) => s.unsubscribe(id)),
  evidencePath: method("host.evidencePath", [agentId, str], isString, (s, id, promptId) => s.host.evidencePath(id, promptId)),
  cleanup: method("host.cleanup", [agentId], optional(isString), (s, id) => s.host.cleanup(id)),
  relabel: method("host.relabel", [agentId, str], ignored, (s, id, label) => s.host.relabel?.(id, label)),
  discard: method("host.discard", [agentId], ignored, (s, id) => s.host.discard(id)),
  renewed: method("host.renewed", [agentId, str], optional(isString), (s, id, sessionPath) => s.host.renewed?.(id, sessionPath)),
  residentKb: method(
    "host.residentKb",
    [agentId],
    optional((v) => Number.isSafeInteger(v) && (v as number) >= 0),
    (s, id) => s.host.residentKb?.(id),
  ),
  resumeCard: method("host.resumeCard", [agentId], optional(card), (s, id) => s.host.resumeCard(id)),
  resumeCards: method("host.resumeCards", [], arrayOf(card), (s) => s.host.resumeCards()),
  conversation: method("host.conversation", [agentId, num], conversation, (s, id, turns) => s.host.conversation(id, turns)),
};
