/**
 * Loaded with -e into every sheep (never into a shepherd). It reports readiness, takes prompts
 * from the inbox and submits them as real user messages, steers a running turn when told to,
 * and writes each turn's result to the outbox. Prompt text never passes through the terminal.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { chmodSync, existsSync, mkdirSync, watch, type FSWatcher } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { createMarkerSync, readJson, writeJsonAtomicSync } from "../src/protocol/files.ts";
import { INBOX_FILE, sheepLayout } from "../src/protocol/layout.ts";
import type { InboxItem, ResultFile, StatusReport } from "../src/protocol/messages.ts";
import { finalAssistant, resultStatus, usageOf } from "../src/protocol/assistant.ts";
import { registerMessageTool } from "./sheep-message.ts";
import { herdrStateSink } from "./herdr-state.ts";

/*
 * Results and reports are written synchronously (writeJsonAtomicSync): right after a turn pi's
 * event loop is at its busiest, and each async step of a write would queue behind that work (tens
 * of milliseconds when many sheep finish at once on few cores). For status.json it also keeps the
 * order: two async writes in flight can land in either order, and a dialog that opened and closed
 * must not leave "blocked" behind.
 */

interface Active {
  promptId: string;
  startedAt: string;
  /** The last assistant message of the run this prompt started. */
  last?: unknown;
  /** pi's run for it has started: only then can a steer join it instead of starting its own. */
  running: boolean;
  /** Steering messages that went into this turn. */
  steered: string[];
}

/** The sheep's own command for a fresh conversation (see renew). */
const RENEW_COMMAND = "pi-shepherd-renew";

export default function sheep(pi: ExtensionAPI) {
  const dir = process.env.PI_SHEPHERD_SHEEP_DIR;
  if (!dir) return; // loaded somewhere that is not a sheep: stay inert
  const layout = sheepLayout(dir);
  let ctx: ExtensionContext | undefined;
  let active: Active | undefined;
  let finalizeTimer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  let poll: NodeJS.Timeout | undefined;
  let scanning = false;
  let rescan = false;
  // Two sources say the sheep waits for a person: pi's own dialogs (ui_prompt_start/end, pi >= 1.6,
  // nested ones already merged into one span by pi) and other extensions on the herdr:blocked bus.
  // Each keeps its own state, so one dialog reported by both never counts twice.
  let dialog: string | undefined;
  let busBlocked = 0;
  let busLabel: string | undefined;
  /** A shepherd_message question waiting for its reply: the sheep waits on its shepherd. */
  let asking: { messageId: string; text: string } | undefined;
  const readyAt = new Date().toISOString();

  const askingLabel = () => (asking ? `question ${asking.messageId} to the shepherd: ${oneLine(asking.text)}` : undefined);
  const blockedLabel = () => dialog ?? (busBlocked > 0 ? (busLabel ?? "blocked") : askingLabel());
  // In a herdr pane, herdr is told the same state for its sidebar (display only). Its own
  // herdr:blocked events, sent to herdr's pi integration, are not another extension's dialog.
  let ownEvent = false;
  const herdr = herdrStateSink(process.env, pi.events, (own) => {
    ownEvent = own;
  });

  const report = () => {
    const blocked = blockedLabel();
    const status: StatusReport = {
      pid: process.pid,
      readyAt,
      // The launcher hands pi its argv: [node, pi's CLI, ...].
      ...(process.argv[1] ? { piCli: process.argv[1] } : {}),
      ...(ctx?.sessionManager.getSessionFile() ? { sessionPath: ctx.sessionManager.getSessionFile()! } : {}),
      state: active ? "working" : "idle",
      ...(active ? { activePromptId: active.promptId } : {}),
      ...(blocked !== undefined ? { blocked } : {}),
      ...(asking ? { asking } : {}),
      updatedAt: new Date().toISOString(),
    };
    writeJsonAtomicSync(layout.status, status);
    const own = dialog ?? askingLabel();
    herdr?.update({ working: active !== undefined, ...(blocked !== undefined ? { blocked } : {}), ...(own !== undefined ? { ownBlocked: own } : {}) });
  };

  const finish = async (result: Omit<ResultFile, "promptId" | "startedAt" | "finishedAt" | "sessionPath">) => {
    if (!active) return;
    const done = active;
    active = undefined;
    // pi creates its session file under the default umask; like every sheep file it stays private.
    const session = ctx?.sessionManager.getSessionFile();
    if (session) {
      try {
        chmodSync(session, 0o600);
      } catch {
        // gone or not ours to change: the result matters more
      }
    }
    const file: ResultFile = {
      promptId: done.promptId,
      ...result,
      ...(ctx?.sessionManager.getSessionFile() ? { sessionPath: ctx.sessionManager.getSessionFile()! } : {}),
      startedAt: done.startedAt,
      finishedAt: new Date().toISOString(),
      ...(done.steered.length ? { steered: done.steered } : {}),
    };
    writeJsonAtomicSync(layout.outboxFile(done.promptId), file);
    report();
    void scan();
  };

  // A closed pane sends pi SIGHUP (a stop, SIGTERM), and pi aborts the running turn on its way
  // out. That abort is nobody's answer: without a result file the shepherd reports what really
  // happened, [pane_gone] or [pi_exited], instead of "cancelled".
  let goingAway = false;
  const onSignal = (sig: NodeJS.Signals) => {
    goingAway = true;
    if (process.listenerCount(sig) === 1) {
      // nothing else handles it here: keep the default, which ends the process
      process.off(sig, onSignal);
      process.kill(process.pid, sig);
    }
  };
  const watchSignals = (on: boolean) => {
    for (const sig of ["SIGHUP", "SIGTERM"] as const) {
      process.off(sig, onSignal);
      if (on) process.on(sig, onSignal);
    }
  };

  const finalizeFromLast = () => {
    if (!active) return;
    const msg = finalAssistant(active.last);
    if (goingAway && resultStatus(msg?.stopReason) === "cancelled") return;
    void finish({
      status: resultStatus(msg?.stopReason),
      text: msg?.text ?? "",
      ...(msg?.stopReason ? { stopReason: msg.stopReason } : {}),
      ...(msg?.errorMessage ? { errorMessage: msg.errorMessage } : {}),
      ...(msg?.usage ? { usage: usageOf(msg.usage) } : {}),
      ...(msg?.model ? { model: msg.model } : {}),
    });
  };

  /** Taken once, never again: a file written twice, or read again after pi restarted, is dropped. */
  const taken = (id: string) => existsSync(layout.takenFile(id));
  const take = (id: string) => createMarkerSync(layout.takenFile(id));
  const drop = (path: string) => rm(path, { force: true }).catch(() => undefined);

  /** Submits a prompt as its own turn; its result is written when that turn settles. */
  const submitPrompt = async (path: string, id: string, c: ExtensionContext) => {
    if (!take(id)) return drop(path);
    let item: InboxItem | undefined;
    try {
      item = await readJson<InboxItem>(path);
    } finally {
      // Read once is taken for good, and a prompt may be megabytes that nobody needs to keep.
      await drop(path);
    }
    // A person may be typing into this sheep; then the prompt queues behind their turn, which runs.
    const idle = c.isIdle();
    active = { promptId: id, startedAt: new Date().toISOString(), running: !idle, steered: [] };
    report();
    if (!item || item.kind === "steer" || item.kind === "interrupt" || item.kind === "renew" || item.promptId !== id || typeof item.text !== "string") {
      await finish({ status: "failed", text: "", errorMessage: "the prompt file could not be read" });
      return;
    }
    if (idle) pi.sendUserMessage(item.text);
    else pi.sendUserMessage(item.text, { deliverAs: "followUp" });
  };

  /**
   * A steer joins the running turn of its target. It waits while the target has not started, and
   * is dropped once the target's turn is over (the shepherd counts it as missed).
   */
  const steer = async (path: string, id: string, waiting: readonly string[]) => {
    const item = await readJson<InboxItem>(path);
    if (item?.kind !== "steer" || item.steerId !== id || typeof item.text !== "string" || typeof item.target !== "string") {
      take(id);
      return drop(path);
    }
    if (active?.promptId === item.target) {
      if (!active.running) return; // its turn has not begun: a steer now would race pi starting it
      if (!take(id)) return drop(path);
      await drop(path);
      active.steered.push(id);
      pi.sendUserMessage(item.text, { deliverAs: "steer" });
      return;
    }
    if (waiting.includes(item.target) && !taken(item.target)) return;
    take(id);
    await drop(path);
  };

  /**
   * An interrupt aborts its target's running turn (pi's own abort, as Escape does): the turn ends
   * with stopReason "aborted" and its result is written as cancelled. It waits while the target
   * has not started, and is dropped once the target's turn is over.
   */
  const interrupt = async (path: string, id: string, waiting: readonly string[], c: ExtensionContext) => {
    const item = await readJson<InboxItem>(path);
    if (item?.kind !== "interrupt" || item.interruptId !== id || typeof item.target !== "string") {
      take(id);
      return drop(path);
    }
    if (active?.promptId === item.target) {
      if (!active.running) return;
      if (!take(id)) return drop(path);
      await drop(path);
      c.abort();
      return;
    }
    if (waiting.includes(item.target) && !taken(item.target)) return;
    take(id);
    await drop(path);
  };

  /**
   * Goes through the inbox in order: prompts one at a time, each once nothing of ours runs;
   * steers and interrupts whenever their target's turn runs.
   */
  const scan = async () => {
    if (scanning) {
      rescan = true;
      return;
    }
    scanning = true;
    try {
      do {
        rescan = false;
        const c = ctx;
        if (!c) return;
        const names = (await readdir(layout.inbox).catch(() => [] as string[])).filter((n) => INBOX_FILE.test(n)).sort();
        const ids = names.map((n) => INBOX_FILE.exec(n)![2]!);
        for (const [i, name] of names.entries()) {
          const id = ids[i]!;
          const path = `${layout.inbox}/${name}`;
          if (taken(id)) await drop(path);
          else if (id.startsWith("s_")) await steer(path, id, ids);
          else if (id.startsWith("i_")) await interrupt(path, id, ids, c);
          else if (active || renewing) continue;
          else if (id.startsWith("r_")) await renew(path, id);
          else await submitPrompt(path, id, c);
        }
      } while (rescan);
    } finally {
      scanning = false;
    }
  };

  /**
   * A fresh conversation in this same pi, through pi's own new-session path: only a command's
   * context may start one, so the sheep runs its own command through pi's command dispatch (never
   * keys). The answer is outbox/<renewId>.json: completed with the new session file, or failed,
   * and the shepherd then closes the sheep as it would have.
   */
  let renewing: string | undefined;
  const renewed = (id: string, r: { ok: true; sessionPath?: string } | { ok: false; why: string }) => {
    const now = new Date().toISOString();
    const file: ResultFile = r.ok
      ? { promptId: id, status: "completed", text: "", ...(r.sessionPath ? { sessionPath: r.sessionPath } : {}), startedAt: now, finishedAt: now }
      : { promptId: id, status: "failed", text: "", errorMessage: r.why, startedAt: now, finishedAt: now };
    writeJsonAtomicSync(layout.outboxFile(id), file);
  };
  const renew = async (path: string, id: string) => {
    if (!take(id)) return drop(path);
    const item = await readJson<InboxItem>(path);
    await drop(path);
    if (item?.kind !== "renew" || item.renewId !== id) return renewed(id, { ok: false, why: "the renew file could not be read" });
    renewing = id;
    pi.sendUserMessage(`/${RENEW_COMMAND} ${id}`, { expandPromptTemplates: true });
  };
  pi.registerCommand(RENEW_COMMAND, {
    description: "pi-shepherd: a fresh conversation for the next task (sent by the shepherd only)",
    handler: async (args, c) => {
      const id = args.trim();
      // Only the renewal the shepherd asked for: typed by a person, it does nothing.
      if (!renewing || id !== renewing) return;
      try {
        await c.waitForIdle();
        let sessionPath: string | undefined;
        const r = await c.newSession({
          withSession: async (fresh) => {
            sessionPath = fresh.sessionManager.getSessionFile();
          },
        });
        renewing = undefined;
        renewed(id, r.cancelled ? { ok: false, why: "an extension cancelled the new session" } : { ok: true, ...(sessionPath ? { sessionPath } : {}) });
      } catch (e) {
        renewing = undefined;
        renewed(id, { ok: false, why: `pi could not start a new session: ${e instanceof Error ? e.message : String(e)}` });
      }
    },
  });
  // A pi that does not run an extension's own command line would send it to the model as words.
  pi.on("input", (event) => {
    if (!renewing || event.text !== `/${RENEW_COMMAND} ${renewing}`) return { action: "continue" as const };
    const id = renewing;
    renewing = undefined;
    renewed(id, { ok: false, why: "this pi does not run commands an extension sends" });
    void scan();
    return { action: "handled" as const };
  });

  registerMessageTool(pi, layout, {
    activePromptId: () => active?.promptId,
    asking: (q) => {
      asking = q;
      report();
    },
  });

  pi.on("session_start", async (_event, c) => {
    ctx = c;
    watchSignals(true);
    mkdirSync(layout.taken, { recursive: true, mode: 0o700 });
    report();
    watcher?.close();
    try {
      // Only a finished inbox file is worth a scan, not the temp file written before it.
      watcher = watch(layout.inbox, { persistent: false }, (_event, name) => {
        if (name === null || INBOX_FILE.test(name)) void scan();
      });
      watcher.on("error", () => undefined);
    } catch {
      watcher = undefined;
    }
    clearInterval(poll);
    poll = setInterval(() => void scan(), 1000);
    poll.unref();
    void scan();
  });

  pi.on("message_end", (event) => {
    if (active && (event.message as { role?: string }).role === "assistant") active.last = event.message;
  });

  pi.on("agent_start", () => {
    clearTimeout(finalizeTimer);
    if (active && !active.running) {
      active.running = true;
      void scan(); // a steer may be waiting for this turn to begin
    }
  });

  // agent_end can be followed by a retry or a queued follow-up; agent_settled (pi >= 1.x) says
  // the run is truly over. Older pi has no agent_settled, so agent_end falls back after a pause.
  pi.on("agent_end", () => {
    clearTimeout(finalizeTimer);
    finalizeTimer = setTimeout(finalizeFromLast, 1500);
  });
  pi.on("agent_settled" as "agent_end", () => {
    clearTimeout(finalizeTimer);
    finalizeFromLast();
  });

  pi.events.on("herdr:blocked", (data: unknown) => {
    if (ownEvent) return;
    const d = (data ?? {}) as { active?: boolean; label?: string };
    if (d.active === false) busBlocked = Math.max(0, busBlocked - 1);
    else {
      busBlocked++;
      if (typeof d.label === "string") busLabel = d.label;
    }
    if (busBlocked === 0) busLabel = undefined;
    report();
  });

  // pi before 1.6 never emits these names; registering a handler for them there is harmless.
  pi.on("ui_prompt_start", (event) => {
    const title = typeof event.title === "string" ? event.title.trim() : "";
    dialog = title || (event.kind ? `a ${event.kind} dialog` : "a dialog");
    report();
  });
  pi.on("ui_prompt_end", () => {
    dialog = undefined;
    report();
  });

  pi.on("session_shutdown", () => {
    // A new session (a renew) leaves this instance behind: the next one reads the inbox.
    ctx = undefined;
    watchSignals(false);
    watcher?.close();
    clearInterval(poll);
    clearTimeout(finalizeTimer);
  });
}

/** A question's text in a one-line status label. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
}
