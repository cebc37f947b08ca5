/**
 * The offline scripted model: an OpenAI-compatible chat-completions server on a loopback port.
 * What it answers is chosen by the last user message, so a test (or the demo) scripts a sheep by
 * what it prompts it with. Every request is logged with timestamps for assertions.
 *
 * Directives (the last user message):
 *   #script {"reply":"text","delayMs":500,"chunks":3,"chunkDelayMs":50}
 *   #script {"fail":500,"message":"boom"}
 *   #script {"tool":{"name":"shepherd","arguments":{...}},"afterTool":"text"}
 *   #script {"tools":[{"name":"shepherd","arguments":{...}},…],"afterTool":"text"}   (one turn, several calls)
 *   … "argsTokensPerSec": 60   (the calls' arguments stream at that rate, as a real model writes them)
 *   #script {"rounds":[[{"name":"write","arguments":{...}}],[{"name":"bash",…}]],"afterTool":"text"}
 *       (tool calls in rounds, each after the results of the one before: a sheep that writes, then edits)
 *   anything else: the reply is "ECHO: <message>" (or what the fallback option says)
 * After a tool result, the reply is the directive's afterTool, or "TOOL_RESULT: <result text>".
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Directive {
  reply?: string;
  delayMs?: number;
  chunks?: number;
  chunkDelayMs?: number;
  fail?: number;
  message?: string;
  tool?: { name: string; arguments: unknown };
  /** Several tool calls in one assistant message; pi runs them in parallel. Ids are `call_<seq>_<index>`. */
  tools?: { name: string; arguments: unknown }[];
  /** Rounds of tool calls: round k answers the request that follows k rounds of tool results. */
  rounds?: { name: string; arguments: unknown }[][];
  afterTool?: string;
  /**
   * Tool calls' arguments stream at this many tokens a second (a token taken as 4 characters, sent
   * every 50 ms) as a real model writes them, instead of all at once: what a speculative start sees.
   */
  argsTokensPerSec?: number;
  /** Copied into the log entry, so a test can find the requests of one sheep or step. */
  tag?: string;
  /** The usage every answer to this directive reports (default: 10 prompt tokens, about a token per 4 characters out). */
  usage?: { prompt: number; completion: number };
  /** Text said in the same message as its tool calls (default none). */
  say?: string;
}

export interface LoggedRequest {
  seq: number;
  receivedAt: number;
  firstByteAt?: number;
  lastByteAt?: number;
  status: number;
  model: string;
  lastRole: string;
  lastUserText: string;
  /** Every user message of the request, oldest first: what of a conversation reached the model. */
  userTexts: string[];
  /** Every tool result of the request, oldest first: what a tool returned to the model, exactly. */
  toolTexts: string[];
  system: string;
  toolNames: string[];
  messageCount: number;
  /** What the server decided to do. */
  kind: "reply" | "fail" | "tool" | "tool-followup";
  tag?: string;
  replyText?: string;
}

export interface ScriptedModel {
  baseUrl: string;
  port: number;
  log: LoggedRequest[];
  close(): Promise<void>;
}

type ChatMessage = { role: string; content?: unknown; tool_calls?: unknown };

export function directive(d: Directive): string {
  return `#script ${JSON.stringify(d)}`;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((p) => (p && typeof p === "object" && "text" in p ? String((p as { text: unknown }).text) : "")).join("");
  }
  return "";
}

// pi's example subagent extension sends each task as "Task: <task>": the bench scripts it too.
function parseDirective(text: string): Directive | undefined {
  const m = /^\s*(?:Task: )?#script\s+([\s\S]*)$/.exec(text);
  if (!m) return undefined;
  try {
    return JSON.parse(m[1]!) as Directive;
  } catch {
    return undefined;
  }
}

// Unref'd: a scripted delay whose client is long gone must not keep a test process alive.
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

export interface ScriptedModelOptions {
  /** The reply to a message that is no directive (default `ECHO: <message>`), e.g. to a pushed result in a demo. */
  fallback?: (lastUserText: string) => string;
  /** A directive for a message that is none, e.g. for a screenshot whose prompts read as a person writes them. */
  script?: (lastUserText: string) => Directive | undefined;
}

export async function startScriptedModel(o: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const log: LoggedRequest[] = [];
  let seq = 0;
  const sockets = new Set<import("node:net").Socket>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === "GET" && req.url?.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "scripted-model", object: "model" }] }));
      return;
    }
    if (req.method === "GET" && req.url === "/log") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(log));
      return;
    }
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      model?: string;
      messages?: ChatMessage[];
      tools?: { function?: { name?: string } }[];
      stream?: boolean;
    };
    const messages = body.messages ?? [];
    const last = messages[messages.length - 1];
    const lastUser = [...messages].reverse().find((m) => m.role === "user");
    const lastUserText = textOf(lastUser?.content);
    const entry: LoggedRequest = {
      seq: ++seq,
      receivedAt: Date.now(),
      status: 200,
      model: body.model ?? "",
      lastRole: last?.role ?? "",
      lastUserText,
      userTexts: messages.filter((m) => m.role === "user").map((m) => textOf(m.content)),
      toolTexts: messages.filter((m) => m.role === "tool").map((m) => textOf(m.content)),
      system: messages
        .filter((m) => m.role === "system" || m.role === "developer")
        .map((m) => textOf(m.content))
        .join("\n"),
      toolNames: (body.tools ?? []).map((t) => t.function?.name ?? "").filter(Boolean),
      messageCount: messages.length,
      kind: "reply",
    };
    log.push(entry);
    const d = parseDirective(lastUserText) ?? o.script?.(lastUserText) ?? {};
    if (d.tag !== undefined) entry.tag = d.tag;

    // Rounds done so far: assistant tool calls since the prompt (the last user message).
    const round = messages.slice(messages.lastIndexOf(lastUser!) + 1).filter((m) => m.role === "assistant" && m.tool_calls).length;
    if (d.rounds && round < d.rounds.length) {
      entry.kind = "tool";
      if (d.delayMs) await sleep(d.delayMs);
      await streamToolCall(res, entry, d.rounds[round]!, true, { usage: d.usage, say: d.say });
      return;
    }
    if (last?.role === "tool") {
      entry.kind = "tool-followup";
      const reply = d.afterTool ?? `TOOL_RESULT: ${textOf(last.content).slice(0, 4000)}`;
      entry.replyText = reply;
      await streamText(res, entry, reply, 1, 0, d.usage);
      return;
    }
    if (d.delayMs) await sleep(d.delayMs);
    if (d.fail) {
      entry.kind = "fail";
      entry.status = d.fail;
      entry.firstByteAt = entry.lastByteAt = Date.now();
      res.writeHead(d.fail, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: d.message ?? `scripted failure ${d.fail}`, type: "server_error" } }));
      return;
    }
    if (d.tool || d.tools) {
      entry.kind = "tool";
      await streamToolCall(res, entry, d.tools ?? [d.tool!], d.tools !== undefined, { tokensPerSec: d.argsTokensPerSec, usage: d.usage, say: d.say });
      return;
    }
    const reply = d.reply ?? (parseDirective(lastUserText) || o.script?.(lastUserText) ? "" : (o.fallback?.(lastUserText) ?? `ECHO: ${lastUserText}`));
    entry.replyText = reply;
    await streamText(res, entry, reply, d.chunks ?? 1, d.chunkDelayMs ?? 0, d.usage);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(e) } }));
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function chunk(id: string, delta: object, finish: string | null) {
  return `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: "scripted-model", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

function usageChunk(id: string, completion: number, set?: Directive["usage"]) {
  const prompt = set?.prompt ?? 10;
  const out = set?.completion ?? completion;
  return `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: "scripted-model", choices: [], usage: { prompt_tokens: prompt, completion_tokens: out, total_tokens: prompt + out } })}\n\n`;
}

async function streamText(res: ServerResponse, entry: LoggedRequest, text: string, parts: number, gapMs: number, usage?: Directive["usage"]) {
  const id = `chatcmpl-${entry.seq}`;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  entry.firstByteAt = Date.now();
  res.write(chunk(id, { role: "assistant", content: "" }, null));
  const n = Math.max(1, Math.min(parts, text.length || 1));
  const size = Math.ceil(text.length / n) || 1;
  for (let i = 0; i < text.length; i += size) {
    res.write(chunk(id, { content: text.slice(i, i + size) }, null));
    if (gapMs) await sleep(gapMs);
  }
  res.write(chunk(id, {}, "stop"));
  res.write(usageChunk(id, Math.ceil(text.length / 4), usage));
  res.write("data: [DONE]\n\n");
  entry.lastByteAt = Date.now();
  res.end();
}

async function streamToolCall(
  res: ServerResponse,
  entry: LoggedRequest,
  calls: { name: string; arguments: unknown }[],
  indexedIds: boolean,
  o: { tokensPerSec?: number | undefined; usage?: Directive["usage"] | undefined; say?: string | undefined } = {},
) {
  const id = `chatcmpl-${entry.seq}`;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  entry.firstByteAt = Date.now();
  const toolCalls = calls.map((c, index) => ({
    index,
    id: indexedIds ? `call_${entry.seq}_${index}` : `call_${entry.seq}`,
    type: "function",
    function: { name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments) },
  }));
  const { tokensPerSec, usage, say } = o;
  if (say) res.write(chunk(id, { role: "assistant", content: say }, null));
  const role = say ? {} : { role: "assistant" };
  if (tokensPerSec && tokensPerSec > 0) {
    const TICK_MS = 50;
    const piece = Math.max(1, Math.round((tokensPerSec * 4 * TICK_MS) / 1000));
    res.write(chunk(id, { ...role, content: null, tool_calls: toolCalls.map((t) => ({ ...t, function: { name: t.function.name, arguments: "" } })) }, null));
    for (const t of toolCalls) {
      for (let i = 0; i < t.function.arguments.length; i += piece) {
        await sleep(TICK_MS);
        res.write(chunk(id, { tool_calls: [{ index: t.index, function: { arguments: t.function.arguments.slice(i, i + piece) } }] }, null));
      }
    }
  } else res.write(chunk(id, { ...role, content: null, tool_calls: toolCalls }, null));
  res.write(chunk(id, {}, "tool_calls"));
  res.write(usageChunk(id, 5, usage));
  res.write("data: [DONE]\n\n");
  entry.lastByteAt = Date.now();
  res.end();
}
