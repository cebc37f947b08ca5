import { ShepherdError } from "../domain/errors.ts";
import type { WaitProgress } from "../core/shepherd.ts";
import { type AgentStatus, personEdge } from "../ports/types.ts";
import { delegateAction } from "./delegate-action.ts";
import {
  closeText,
  conversationText,
  diffText,
  herdText,
  interruptText,
  landText,
  messagesText,
  promptText,
  pruneText,
  replyHowTo,
  replyText,
  screenText,
  sheepLine,
  type ShownStatus,
  sheepText,
  startText,
  syncText,
  turnsText,
  waitText,
  warmPoolLines,
  whoText,
} from "./format.ts";
import { lastLines, withoutPiFrame } from "./pi-screen.ts";
import { parseToolCommand, type ToolCommand } from "./command.ts";
import { discoverFor } from "./definitions.ts";
import { startAction } from "./start-action.ts";
import type { DispatchContext } from "./context.ts";

export interface ToolResult {
  content: { type: "text"; text: string }[];
  details: Record<string, unknown> & { action: string };
}

const MAX_TEXT = 50_000;
/**
 * More than pi's frame and footer take at the bottom of a sheep's pane: pi draws full screen, so
 * blank rows can stand between its last words and its editor.
 */
const PI_FRAME_LINES = 200;
const HOW_TO_START = 'Start one with {"action":"start","agent":"<name>"}.';

/** What the model reads inline is capped; the full text always stays in details. */
export function boundedText(text: string): string {
  return text.length > MAX_TEXT
    ? `${text.slice(0, MAX_TEXT)}\n[... ${text.length - MAX_TEXT} more characters; the full text is in the details and the sheep's session file]`
    : text;
}

export function result(action: string, text: string, details: Record<string, unknown>): ToolResult {
  return { content: [{ type: "text", text: boundedText(text) }], details: { action, ...details } };
}

/** Raw parameters parsed once, then routed; for callers that hold a composed shepherd (tests). */
export async function dispatch(raw: unknown, ctx: DispatchContext): Promise<ToolResult> {
  const cmd = parseToolCommand(raw);
  if (cmd.action === "doctor") throw new ShepherdError("invalid_params", 'action "doctor" runs through the tool\'s entry (src/tool/entry.ts).');
  return execute(cmd, ctx);
}

/** A command that needs the composed shepherd: every one but doctor, which must work without one. */
export type ShepherdCommand = Exclude<ToolCommand, { action: "doctor" }>;

/**
 * Runs one checked command; the /shepherd command and the panel build the same commands. What the
 * core does for it says which edge it came from (the model's tool unless the context says).
 */
export function execute(cmd: ShepherdCommand, ctx: DispatchContext): Promise<ToolResult> {
  return ctx.shepherd.actingFrom(ctx.edge ?? "tool", () => run(cmd, ctx));
}

async function run(cmd: ShepherdCommand, ctx: DispatchContext): Promise<ToolResult> {
  const { shepherd, settings } = ctx;
  const { action } = cmd;
  switch (cmd.action) {
    case "start": {
      const started = await startAction(cmd, ctx);
      return result(action, startText(started), { agent: started });
    }
    case "prompt": {
      const submitted = await shepherd.prompt(shepherd.registry.resolve(cmd.target), cmd.message, {
        ...(cmd.notify !== undefined ? { notify: cmd.notify } : {}),
        ...(cmd.deliverAs !== undefined ? { deliverAs: cmd.deliverAs } : {}),
        ...(cmd.requestId !== undefined ? { requestId: cmd.requestId } : {}),
      });
      return result(action, promptText(submitted), { prompt: submitted });
    }
    case "messages": {
      const messages = await shepherd.messages(cmd.agentId === undefined ? undefined : shepherd.registry.resolve(cmd.agentId), cmd.unreadOnly === true);
      return result(
        action,
        messagesText(messages, cmd.unreadOnly === true, (m) => replyHowTo(m.agentId, m.messageId)),
        { messages },
      );
    }
    case "reply": {
      const replied = await shepherd.reply(shepherd.registry.resolve(cmd.agentId), cmd.messageId, cmd.text);
      const label = shepherd.registry.agents.get(replied.agentId)?.label;
      return result(action, replyText(replied, label), { replied, ...(label !== undefined ? { label } : {}) });
    }
    case "wait": {
      const settled = await shepherd.wait(cmd.promptIds, {
        timeoutSec: cmd.timeout ?? settings.waitTimeout,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
        ...(ctx.byPerson || personEdge(ctx.edge) ? { byPerson: true } : {}),
        ...(ctx.onProgress ? { onProgress: (pr: WaitProgress) => ctx.onProgress!(`${pr.done}/${pr.total} done`, { action, progress: pr }) } : {}),
      });
      // Each result names its sheep, so a person (and the model) sees who answered, not a prompt id.
      const results = settled.map((r) => {
        const a = shepherd.registry.agents.get(r.agentId);
        return a ? { ...r, label: a.label, agent: a.agent } : r;
      });
      return result(action, waitText(results), { results });
    }
    case "interrupt": {
      const interrupted = await shepherd.interrupt(shepherd.registry.resolve(cmd.target));
      return result(action, interruptText(interrupted, shepherd.registry.agents.get(interrupted.agentId)?.label), { interrupted });
    }
    case "status": {
      const status = withHost(ctx, await shepherd.status(shepherd.registry.resolve(cmd.target), ctx.signal));
      return result(action, sheepLine(status), { status });
    }
    case "close": {
      // A closed sheep's last label still leads to it: to remove its kept worktree, and so that
      // closing it again says it was closed, by label as by id.
      const agentId = shepherd.registry.resolve(cmd.target, { closed: true });
      const label = shepherd.registry.agents.get(agentId)?.label;
      const closed = await shepherd.close(agentId, {
        ...(cmd.removeWorktree !== undefined ? { removeWorktree: cmd.removeWorktree } : {}),
        ...(cmd.force !== undefined ? { force: cmd.force } : {}),
      });
      return result(action, closeText(closed, label), { closed, ...(label !== undefined ? { label } : {}) });
    }
    case "diff": {
      // Closed sheep count here: a delegated sheep is closed by the time anyone asks for its diff.
      const evidence = await shepherd.diff(shepherd.registry.resolve(cmd.target, { closed: true }));
      return result(action, diffText(evidence, cmd.stat === true), { ...evidence });
    }
    case "land": {
      // A closed isolated sheep keeps its worktree: it can still be landed, by id or its last label.
      const landed = await shepherd.land(shepherd.registry.resolve(cmd.target, { closed: true }), {
        squash: cmd.squash === true,
        ...(cmd.message !== undefined ? { message: cmd.message } : {}),
      });
      return result(action, landText(landed), { landed });
    }
    case "sync": {
      // As for land: a closed isolated sheep keeps its worktree, found by its last label too.
      const synced = await shepherd.sync(shepherd.registry.resolve(cmd.target, { closed: true }));
      return result(action, syncText(synced), { synced });
    }
    case "sheep": {
      // Lists agent definitions, not running sheep (that is "herd"); the name is the contract's.
      const scope = cmd.agentScope ?? settings.agentScope;
      const found = await discoverFor(ctx, scope);
      const agents = found.agents.map((a) => ({
        name: a.name,
        description: a.description,
        source: a.source,
        path: a.path,
        ...(a.model ? { model: a.model } : {}),
        ...(a.tools ? { tools: a.tools } : {}),
      }));
      return result(action, sheepText(found.agents, found.skipped), { agents, skipped: found.skipped, scope });
    }
    case "herd": {
      const agents = (await shepherd.herd(ctx.signal)).map((a) => withHost(ctx, a));
      const pool = shepherd.warm();
      const poolLines = warmPoolLines(pool.counts, pool.problems);
      const warm = {
        ...(Object.keys(pool.counts).length ? { warm: pool.counts } : {}),
        ...(Object.keys(pool.problems).length ? { warmProblems: pool.problems } : {}),
      };
      if (cmd.all !== true) return result(action, [herdText(agents, HOW_TO_START), ...poolLines].join("\n"), { agents, ...warm });
      const others = (await shepherd.others()).map((a) => ({
        agentId: a.agentId,
        agent: a.agent,
        label: a.label,
        runtime: a.runtime,
        state: a.state,
        owner: a.owner,
        createdAt: a.createdAt,
      }));
      const lines = others.map((o) => `${o.label} (${o.agentId}, agent ${o.agent}): ${o.state}; belongs to shepherd ${o.owner}.`);
      return result(action, [herdText(agents, HOW_TO_START), ...poolLines, ...(lines.length ? ["", "Other shepherds' sheep:", ...lines] : [])].join("\n"), {
        agents,
        ...warm,
        others,
      });
    }
    case "read": {
      const agentId = shepherd.registry.resolve(cmd.target);
      const rec = shepherd.registry.agents.get(agentId);
      const who = whoText({ agentId, ...(rec ? { label: rec.label, agent: rec.agent } : {}) });
      const { source } = cmd;
      if (source === "screen") {
        const lines = cmd.lines ?? 40;
        // pi's editor frame and footer fill the bottom of the pane: ask for more, keep `lines` of the rest.
        const text = lastLines(withoutPiFrame(await shepherd.read(agentId, Math.min(10_000, lines + PI_FRAME_LINES))), lines);
        return result(action, screenText(who, text), { agentId, source, text });
      }
      const conversation = await shepherd.conversation(agentId, cmd.turns ?? 3);
      const all = turnsText(conversation.turns ?? []);
      const text = cmd.lines === undefined ? all : lastLines(all, cmd.lines);
      return result(action, conversationText(who, conversation, text), {
        agentId,
        source,
        text,
        sessionPath: conversation.sessionPath,
        turns: conversation.turns ?? [],
        earlier: conversation.earlier,
      });
    }
    case "delegate": {
      const { text, details } = await delegateAction(cmd, ctx);
      return result(action, text, details);
    }
    case "prune": {
      const pruned = await shepherd.prune({ force: cmd.force === true });
      return result(action, pruneText(pruned), {
        removed: pruned.removed,
        exited: pruned.exited,
        unclosed: pruned.unclosed,
        kept: pruned.kept,
        forgotten: pruned.forgotten,
        worktrees: pruned.worktrees,
      });
    }
  }
}

/** A sheep's status with its host's state, when that host does not answer now. */
function withHost(ctx: DispatchContext, s: AgentStatus): ShownStatus {
  const down = s.host !== undefined ? ctx.hosts?.down(s.host) : undefined;
  return down ? { ...s, hostDown: down } : s;
}
