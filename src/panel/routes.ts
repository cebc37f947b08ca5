/**
 * The API's routes: reads from the records and the tool's read actions, every change built as the
 * tool's own parameters and run through its entry (parseToolCommand, execute, the audit), so
 * trust, `not_owned` and every other rule are the core's. Nothing here decides anything.
 */
import { ShepherdError } from "../domain/errors.ts";
import { type AgentId, isWellFormedId } from "../domain/ids.ts";
import type { Shepherd } from "../core/shepherd.ts";
import type { ListedMessage } from "../core/async/mail.ts";
import { readBounded } from "../protocol/bounded-read.ts";
import type { EgressReport, Evidence } from "../ports/types.ts";
import { ACTION_FIELDS } from "../edge/command.ts";
import { type EntryDeps, runToolCall } from "../edge/entry.ts";
import { onlyKeys } from "./body.ts";
import type { PanelFeed } from "./feed.ts";
import { panelPrompts, panelSheep, usageBySheep } from "./views.ts";

/** The most of a prompt's patch one answer carries; `truncated` says when there is more on disk. */
export const MAX_PATCH_BYTES = 2 * 1024 * 1024;
/** Lines of a sheep's screen the panel shows. */
export const SCREEN_LINES = 200;
/** Entries of a sandboxed sheep's egress log the panel shows (the counts are of the whole log). */
export const EGRESS_ENTRIES = 200;

export interface RouteContext {
  shepherd: Shepherd;
  entry: EntryDeps;
  feed: PanelFeed;
  query: URLSearchParams;
  body: Record<string, unknown>;
}

type Handler = (c: RouteContext, id: AgentId) => Promise<unknown>;

/** The tool's own entry with these raw parameters: its details, or its `[code]` error. */
export async function tool(c: RouteContext, raw: Record<string, unknown>): Promise<Record<string, unknown>> {
  return (await runToolCall(raw, c.entry)).details;
}

/** A sheep of this shepherd, closed ones included; the core's own refusal otherwise (not_owned, unknown_agent). */
async function recordOf(c: RouteContext, id: AgentId) {
  const rec = c.shepherd.registry.agents.get(id);
  if (rec) return rec;
  await c.shepherd.status(id);
  throw c.shepherd.registry.unknownAgent(id);
}

function numberParam(q: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const raw = q.get(name);
  if (raw === null) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) throw new ShepherdError("invalid_params", `"${name}" must be a whole number from ${min} to ${max}.`);
  return n;
}

export function onlyQuery(q: URLSearchParams, takes: readonly string[], what: string): void {
  for (const key of q.keys()) {
    if (!takes.includes(key)) throw new ShepherdError("invalid_params", `${what} takes no query parameter ${JSON.stringify(key)}.`);
  }
}

const sheepDetail: Handler = async (c, id) => {
  onlyQuery(c.query, [], "GET /api/v1/sheep/:id");
  const rec = await recordOf(c, id);
  const usage = usageBySheep([...c.shepherd.registry.prompts.values()].filter((p) => p.agentId === id)).get(id);
  return { ...panelSheep(c.shepherd, rec, c.feed.mail.get(id), usage), prompts: panelPrompts(c.shepherd, rec) };
};

const conversation: Handler = async (c, id) => {
  onlyQuery(c.query, ["turns"], "GET …/conversation");
  const turns = numberParam(c.query, "turns", 1, 100);
  const d = await tool(c, { action: "read", target: id, source: "session", ...(turns !== undefined ? { turns } : {}) });
  return { turns: d.turns ?? [], earlier: d.earlier === true };
};

const screen: Handler = async (c, id) => {
  onlyQuery(c.query, [], "GET …/screen");
  const d = await tool(c, { action: "read", target: id, source: "screen", lines: SCREEN_LINES });
  return { text: d.text ?? "" };
};

/** What a sandboxed sheep tried to reach: the tool's `read` of its egress log (its counts, its last entries). */
const egress: Handler = async (c, id) => {
  onlyQuery(c.query, [], "GET …/egress");
  const d = await tool(c, { action: "read", target: id, source: "egress", lines: EGRESS_ENTRIES });
  const r = d.egress as EgressReport | undefined;
  return {
    sandboxed: d.sandboxed === true,
    allowed: r?.allowed ?? 0,
    refused: r?.refused ?? 0,
    bytesUp: r?.bytesUp ?? 0,
    bytesDown: r?.bytesDown ?? 0,
    ...(r?.since ? { since: r.since } : {}),
    entries: r?.entries ?? [],
    skipped: r?.skipped ?? 0,
  };
};

const messages: Handler = async (c, id) => {
  onlyQuery(c.query, [], "GET …/messages");
  const d = await tool(c, { action: "messages", agentId: id });
  const list = (d.messages ?? []) as ListedMessage[];
  // What an answered question was told, for its card: read only for the questions answered.
  const replies = await Promise.all(list.map((m) => (m.answer === "replied" ? c.shepherd.replyText(id, m.messageId) : undefined)));
  return {
    messages: list.map((m, i) => ({
      messageId: m.messageId,
      kind: m.kind,
      text: m.text,
      at: m.at,
      ...(m.awaitReply ? { awaitReply: true } : {}),
      ...(m.answer === "replied" ? { replied: true } : {}),
      ...(replies[i] !== undefined ? { reply: replies[i] } : {}),
      ...(m.answer === "expired" ? { expired: true } : {}),
    })),
  };
};

const diff: Handler = async (c, id) => {
  onlyQuery(c.query, ["promptId"], "GET …/diff");
  const promptId = c.query.get("promptId");
  let evidence: Evidence | undefined;
  let of: string;
  if (promptId === null) {
    const d = await tool(c, { action: "diff", target: id });
    evidence = d.evidence as Evidence | undefined;
    of = String(d.promptId);
    if (!evidence) throw new ShepherdError("no_evidence", `prompt ${of} has no evidence: ${String(d.evidenceError ?? "none was made")}.`);
  } else {
    if (!isWellFormedId(promptId, "prompt")) throw new ShepherdError("invalid_params", `"promptId" must be a prompt id (p_ and 10 of [0-9a-z]).`);
    await recordOf(c, id);
    const p = c.shepherd.registry.prompts.get(promptId);
    if (!p || p.agentId !== id) throw new ShepherdError("unknown_prompt", `sheep ${id} has no prompt "${promptId}" kept.`);
    evidence = p.settled?.evidence;
    of = promptId;
    if (!evidence) {
      const why = p.settled ? (p.settled.evidenceError ?? "its cwd is not in a git working tree, or evidence is off") : "it is still running";
      throw new ShepherdError("no_evidence", `prompt ${promptId} has no evidence: ${why}.`);
    }
  }
  // The whole patch is on disk; it is the repository's bytes, read as any file a sheep could touch.
  // A remote sheep's is on its host: that path is never read here (the record's first lines are shown).
  const read = evidence.baseline.host === undefined ? await readBounded(evidence.patchPath, { max: MAX_PATCH_BYTES, over: "head" }) : undefined;
  const patch = read?.ok ? read.data.toString("utf8") : evidence.patch;
  const truncated = read?.ok ? read.truncated || evidence.files.length < evidence.fileCount : evidence.truncated;
  return {
    promptId: of,
    files: evidence.files.map((f) => ({
      path: f.path,
      status: f.status,
      insertions: f.insertions,
      deletions: f.deletions,
      ...(f.binary ? { binary: true } : {}),
      ...(f.link !== undefined ? { link: f.link } : {}),
    })),
    fileCount: evidence.fileCount,
    insertions: evidence.insertions,
    deletions: evidence.deletions,
    shared: evidence.shared,
    patch,
    truncated,
  };
};

const promptRoute: Handler = async (c, id) => {
  onlyKeys(c.body, ["message", "deliverAs", "requestId", "notify"], "POST …/prompt");
  const d = await tool(c, { ...c.body, action: "prompt", agentId: id });
  return d.prompt;
};

const replyRoute: Handler = async (c, id) => {
  onlyKeys(c.body, ["messageId", "text"], "POST …/reply");
  return (await tool(c, { ...c.body, action: "reply", agentId: id })).replied;
};

const closeRoute: Handler = async (c, id) => {
  onlyKeys(c.body, ["removeWorktree", "force"], "POST …/close");
  const d = await tool(c, { ...c.body, action: "close", agentId: id });
  return d.closed;
};

const interruptRoute: Handler = async (c, id) => {
  onlyKeys(c.body, [], "POST …/interrupt");
  return (await tool(c, { action: "interrupt", agentId: id })).interrupted;
};

/** What a start from the panel may say; the confirmation of a project agent is never skipped from here. */
const START_KEYS = ["agent", "label", "cwd", "model", "isolate", "placement", "direction", "budget"];

export async function startRoute(c: RouteContext): Promise<unknown> {
  const takesHost = ACTION_FIELDS.start.includes("host");
  onlyKeys(c.body, [...START_KEYS, "host"], "POST /api/v1/start");
  const { host, ...rest } = c.body;
  if (host !== undefined && !takesHost && host !== "local") {
    throw new ShepherdError("invalid_params", `"host" ${JSON.stringify(host)}: this shepherd starts sheep on this machine only ("local").`);
  }
  const raw = { ...rest, ...(host !== undefined && takesHost ? { host } : {}), action: "start" };
  return (await tool(c, raw)).agent;
}

/** The agent definitions a start may name (the tool's `sheep`): what the page's start form offers. */
export async function agentsRoute(c: RouteContext): Promise<unknown> {
  onlyQuery(c.query, [], "GET /api/v1/agents");
  const agents = ((await tool(c, { action: "sheep" })).agents ?? []) as { name: string; description: string; source: string }[];
  return { agents: agents.map((a) => ({ name: a.name, description: a.description, source: a.source })) };
}

/** Routes under /api/v1/sheep/:id, by method and the segment after the id ("" for the sheep itself). */
export const SHEEP_ROUTES: Record<string, Record<string, Handler>> = {
  GET: { "": sheepDetail, conversation, screen, egress, messages, diff },
  POST: { prompt: promptRoute, reply: replyRoute, close: closeRoute, interrupt: interruptRoute },
};
