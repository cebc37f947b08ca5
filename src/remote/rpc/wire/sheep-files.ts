/**
 * The sheep-files port's wire: served on the far end's LocalSheepFiles, asked by RemoteSheepFiles.
 * Subscriptions are the far end's own (one watcher per sheep, its changes pushed as events).
 */
import { countOf, MAX_COST } from "../../../domain/sheep-data.ts";
import type { Delivery, PrepareRequest, SheepFiles } from "../../../ports/sheep-files.ts";
import { arrayOf, fields, type Guard, isAgentId, isObject, isString, isStrings, oneOf, optional } from "../shape.ts";
import { agentId, ignored, methodsOn, num, obj, str } from "./method.ts";

/** What the sheep-files port's methods are served on: the host, and the far end's subscriptions. */
export interface FilesSide {
  files: SheepFiles;
  /** Idempotent: a reconnecting session and the proxies may both subscribe again. */
  subscribe(agentId: string): void;
  unsubscribe(agentId: string): void;
}

const prepared = fields({ sessionPath: isString, command: fields({ argv: isStrings, reporting: isStrings }), sandboxed: optional(oneOf(true)) });
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
  // Summed by the shepherd: counts in range, as the sheep's side on that host read them.
  spent: optional(
    fields({ tokens: (v) => countOf(v) !== undefined, outputTokens: (v) => countOf(v) !== undefined, costUsd: (v) => countOf(v, MAX_COST) !== undefined }),
  ),
});
const replyPairs = arrayOf((e) => Array.isArray(e) && e.length === 2 && isString(e[0]) && (e[1] === "replied" || e[1] === "expired"));

const method = methodsOn<FilesSide>();

export const FILES_WIRE = {
  prepare: method("files.prepare", [obj<PrepareRequest>()], prepared, (s, req) => s.files.prepare(req)),
  staleSpecs: method("files.staleSpecs", [num], arrayOf(fields({ agentId: isAgentId })), (s, olderThanMs) => s.files.staleSpecs?.(olderThanMs)),
  snapshot: method("files.snapshot", [agentId], snapshot, (s, id) => s.files.snapshot(id)),
  /** The answer must be the result of the prompt asked about. */
  result: method(
    "files.result",
    [agentId, str],
    (v, [, promptId]) => result(promptId)(v),
    (s, id, promptId) => s.files.result(id, promptId),
  ),
  submit: method("files.submit", [agentId, obj<Delivery>()], ignored, (s, id, delivery) => s.files.submit(id, delivery)),
  messages: method("files.messages", [agentId], arrayOf(message), (s, id) => s.files.messages(id)),
  /** A Map travels as its entries. */
  replies: method("files.replies", [agentId], replyPairs, async (s, id) => [...(await s.files.replies(id)).entries()]),
  replyText: method("files.replyText", [agentId, str], optional(isString), (s, id, messageId) => s.files.replyText?.(id, messageId)),
  reply: method("files.reply", [agentId, str, str], oneOf("delivered", "already_replied", "expired"), (s, id, messageId, text) =>
    s.files.reply(id, messageId, text),
  ),
  subscribe: method("files.subscribe", [agentId], ignored, (s, id) => s.subscribe(id)),
  unsubscribe: method("files.unsubscribe", [agentId], ignored, (s, id) => s.unsubscribe(id)),
  evidencePath: method("files.evidencePath", [agentId, str], isString, (s, id, promptId) => s.files.evidencePath(id, promptId)),
  cleanup: method("files.cleanup", [agentId], optional(isString), (s, id) => s.files.cleanup(id)),
  relabel: method("files.relabel", [agentId, str], ignored, (s, id, label) => s.files.relabel?.(id, label)),
  discard: method("files.discard", [agentId], ignored, (s, id) => s.files.discard(id)),
  renewed: method("files.renewed", [agentId, str], optional(isString), (s, id, sessionPath) => s.files.renewed?.(id, sessionPath)),
  residentKb: method(
    "files.residentKb",
    [agentId],
    optional((v) => Number.isSafeInteger(v) && (v as number) >= 0),
    (s, id) => s.files.residentKb?.(id),
  ),
  resumeCard: method("files.resumeCard", [agentId], optional(card), (s, id) => s.files.resumeCard(id)),
  resumeCards: method("files.resumeCards", [], arrayOf(card), (s) => s.files.resumeCards()),
  conversation: method("files.conversation", [agentId, num], conversation, (s, id, turns) => s.files.conversation(id, turns)),
  /** Its fields are checked again by the shepherd (egressReportOf): here only that it is a report, or none. */
  egress: method("files.egress", [agentId, num], optional(fields({ entries: Array.isArray })), (s, id, entries) => s.files.egress?.(id, entries)),
};
