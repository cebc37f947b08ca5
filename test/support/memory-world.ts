import { ShepherdError } from "../../src/domain/errors.ts";
import type { ResumeCard, SheepMessage } from "../../src/ports/types.ts";
import type { CreatedPane, CreatePaneRequest, ExitStatus, PaneLiveness, PaneRef, Runtime } from "../../src/ports/runtime.ts";
import {
  resumeCardOf,
  type Delivery,
  type PreparedSheep,
  type PrepareRequest,
  type SheepFiles,
  type SheepResult,
  type SheepSnapshot,
} from "../../src/ports/sheep-files.ts";

interface MemSheep {
  card?: ResumeCard;
  paneId?: string;
  snapshot: SheepSnapshot;
  /** Text by prompt or steer id, as the sheep would find it in its inbox. */
  inbox: Map<string, string>;
  /** Every delivery, in the order made (a sheep takes them in this order). */
  deliveries: Delivery[];
  outbox: Map<string, SheepResult>;
  messages: SheepMessage[];
  replies: Map<string, { text: string } | { expired: true }>;
  listeners: Set<() => void>;
  cleaned: boolean;
}

/**
 * An in-memory multiplexer and sheep-files port for unit tests of the core. Sheep become ready when
 * their pane "runs" its command unless told otherwise; answers come from the test. Like tmux, the
 * multiplexer keeps a pane whose program ended and says how it ended.
 */
export class MemoryWorld {
  readonly sheep = new Map<string, MemSheep>();
  readonly panes = new Map<string, { agentId: string; alive: boolean; exit?: ExitStatus; text: string; owner: "shepherd" | "user" }>();
  readonly calls: string[] = [];
  readonly prepared: PrepareRequest[] = [];
  onLaunch: "ready" | "never" | "exit" = "ready";
  /** How a sheep answers a renewal (a fresh conversation in the same pi): done, refused, or never. */
  onRenew: "completed" | "failed" | "never" = "completed";
  /** The multiplexer refuses to close anything (it stopped answering), and every pane stays. */
  closeFails = false;
  /** The multiplexer's liveness question never answers (a CLI stuck until its own deadline). */
  livenessHangs = false;
  /** Sheep whose pi still runs for this many more looks after its pane went (see files.running). */
  readonly lingering = new Map<string, number>();
  private nextPane = 1;

  readonly runtime: Runtime = {
    name: "tmux",
    createPane: async (req: CreatePaneRequest): Promise<CreatedPane> => {
      // Like tmux outside tmux: the last pane gone ends the server, and the next server numbers
      // its panes from the start again.
      if (![...this.panes.values()].some((p) => p.alive)) this.nextPane = 1;
      const paneId = `%${this.nextPane++}`;
      this.calls.push(`create ${paneId} ${req.placement}`);
      this.panes.set(paneId, { agentId: req.agentId, alive: true, text: `pane of ${req.label}\n`, owner: "shepherd" });
      this.mem(req.agentId).paneId = paneId;
      this.calls.push(`run ${paneId}`);
      const pane = this.panes.get(paneId)!;
      const s = this.mem(req.agentId);
      if (this.onLaunch === "ready") s.snapshot.ready = { pid: 4242, readyAt: new Date().toISOString() };
      if (this.onLaunch === "exit") {
        pane.text += "Error: no model\n";
        pane.exit = { code: 1, signal: null };
      }
      this.ring(req.agentId);
      return { paneId };
    },
    liveness: async (refs: readonly PaneRef[]) => {
      this.calls.push(`liveness ${refs.length}`);
      if (this.livenessHangs) await new Promise(() => undefined);
      const m = new Map<string, PaneLiveness>();
      for (const { paneId, agentId } of refs) {
        const pane = this.panes.get(paneId);
        if (!pane?.alive || pane.agentId !== agentId) m.set(agentId, { state: "gone" });
        else m.set(agentId, pane.exit ? { state: "exited", exit: pane.exit } : { state: "alive" });
      }
      return m;
    },
    markedPanes: async () => [...this.panes].filter(([, p]) => p.alive && p.owner === "shepherd").map(([paneId, p]) => ({ paneId, agentId: p.agentId })),
    read: async (paneId: string) => this.panes.get(paneId)?.text ?? "",
    relabel: async ({ paneId }, label, placement) => {
      this.calls.push(`relabel ${paneId} ${label} ${placement}`);
    },
    close: async (paneId: string, agentId: string): Promise<undefined> => {
      this.calls.push(`close ${paneId}`);
      if (this.closeFails) throw new ShepherdError("runtime_error", "tmux: no server running");
      const pane = this.panes.get(paneId);
      // As the real runtimes do: a pane that carries another mark is refused, never closed.
      if (pane?.alive && pane.agentId !== agentId) throw new ShepherdError("not_owned", `pane ${paneId} is not the pane of ${agentId}`);
      if (pane) pane.alive = false;
    },
  };

  readonly files: SheepFiles = {
    prepare: async (req: PrepareRequest): Promise<PreparedSheep> => {
      const s = this.mem(req.agentId);
      const sessionPath = req.resume?.sessionPath ?? `/sessions/${req.agentId}.jsonl`;
      s.card = resumeCardOf(req, sessionPath);
      this.prepared.push(req);
      const argv = ["/node", "/launcher.mjs", `/spec/${req.agentId}.json`];
      return { sessionPath, command: { argv, reporting: ["/bin/sh", "/report-exit.sh", `/exit/${req.agentId}.json`, ...argv] } };
    },
    snapshot: async (agentId) => ({ ...this.mem(agentId).snapshot }),
    result: async (agentId, promptId) => this.mem(agentId).outbox.get(promptId),
    submit: async (agentId, delivery) => {
      const s = this.mem(agentId);
      s.deliveries.push(delivery);
      if (delivery.kind === "renew") {
        this.calls.push(`renew ${agentId}`);
        if (this.onRenew === "never") return;
        const at = new Date().toISOString();
        const renewed = this.onRenew === "completed";
        s.outbox.set(delivery.renewId, {
          promptId: delivery.renewId,
          status: renewed ? "completed" : "failed",
          text: "",
          ...(renewed ? { sessionPath: `/sessions/${agentId}-${s.deliveries.length}.jsonl` } : { errorMessage: "pi could not start a new session" }),
          startedAt: at,
          finishedAt: at,
        });
        if (renewed && s.snapshot.ready) s.snapshot.ready = { ...s.snapshot.ready, readyAt: at };
        setImmediate(() => this.ring(agentId));
        return;
      }
      if (delivery.kind !== "interrupt") s.inbox.set(delivery.kind === "prompt" ? delivery.promptId : delivery.steerId, delivery.text);
    },
    messages: async (agentId) => [...this.mem(agentId).messages],
    replies: async (agentId) => {
      const out = new Map<string, "replied" | "expired">();
      for (const [id, r] of this.mem(agentId).replies) out.set(id, "expired" in r ? "expired" : "replied");
      return out;
    },
    replyText: async (agentId, messageId) => {
      const r = this.mem(agentId).replies.get(messageId);
      return r && "text" in r ? r.text : undefined;
    },
    reply: async (agentId, messageId, text) => {
      const s = this.mem(agentId);
      const there = s.replies.get(messageId);
      if (there) return "expired" in there ? "expired" : "already_replied";
      s.replies.set(messageId, { text });
      return "delivered";
    },
    subscribe: (agentId, fn) => {
      const s = this.mem(agentId);
      s.listeners.add(fn);
      return () => s.listeners.delete(fn);
    },
    evidencePath: async (agentId, promptId) => `/evidence/${agentId}/${promptId}.patch`,
    // A pi that outlives its pane for a few looks, as a real one does while it handles its hangup.
    running: (agentId) => {
      const left = this.lingering.get(agentId);
      if (left === undefined) return undefined;
      if (left > 0) this.lingering.set(agentId, left - 1);
      return left > 0;
    },
    cleanup: async (agentId) => {
      const s = this.mem(agentId);
      s.cleaned = true;
      return s.inbox.size > 0 ? `/sessions/${agentId}.jsonl` : undefined;
    },
    // The prompts it got and the answers it gave, as a session file would hold them.
    conversation: async (agentId, turns) => {
      const s = this.mem(agentId);
      const all = [...s.inbox].map(([promptId, text]) => {
        const answer = s.outbox.get(promptId);
        return { lines: [{ kind: "prompt" as const, text }, ...(answer?.text ? [{ kind: "answer" as const, text: answer.text }] : [])] };
      });
      return { sessionPath: `/sessions/${agentId}.jsonl`, ...(all.length ? { turns: all.slice(-turns) } : {}), earlier: all.length > turns };
    },
    relabel: async (agentId, label) => {
      const s = this.mem(agentId);
      if (s.card) s.card = { ...s.card, label };
    },
    discard: async (agentId) => {
      this.calls.push(`discard ${agentId}`);
      this.sheep.delete(agentId);
    },
    // Every card is kept here: as if each sheep had answered, so its session file exists.
    resumeCard: async (agentId) => this.sheep.get(agentId)?.card,
    resumeCards: async () => [...this.sheep.values()].flatMap((s) => (s.card ? [s.card] : [])),
  };

  mem(agentId: string): MemSheep {
    let s = this.sheep.get(agentId);
    if (!s) {
      s = { snapshot: {}, inbox: new Map(), deliveries: [], outbox: new Map(), messages: [], replies: new Map(), listeners: new Set(), cleaned: false };
      this.sheep.set(agentId, s);
    }
    return s;
  }

  ring(agentId: string) {
    for (const fn of this.mem(agentId).listeners) fn();
  }

  answer(agentId: string, promptId: string, text: string, status: SheepResult["status"] = "completed", errorMessage?: string, steered?: string[]) {
    this.mem(agentId).outbox.set(promptId, {
      promptId,
      status,
      text,
      stopReason: status === "completed" ? "stop" : status === "failed" ? "error" : "aborted",
      ...(errorMessage ? { errorMessage } : {}),
      ...(steered ? { steered } : {}),
    });
    this.ring(agentId);
  }

  /** The sheep calls shepherd_message; with awaitReply it also reports itself blocked on the question. */
  say(agentId: string, message: Omit<SheepMessage, "at"> & { at?: string }) {
    const s = this.mem(agentId);
    const m: SheepMessage = { at: new Date().toISOString(), ...message };
    s.messages.push(m);
    if (m.awaitReply) {
      s.snapshot.asking = { messageId: m.messageId, text: m.text };
      s.snapshot.blocked = `question ${m.messageId} to the shepherd: ${m.text}`;
    }
    this.ring(agentId);
    return m;
  }

  /** The question stopped waiting (answered or timed out). */
  stopAsking(agentId: string) {
    const s = this.mem(agentId);
    delete s.snapshot.asking;
    delete s.snapshot.blocked;
    this.ring(agentId);
  }

  killPane(agentId: string) {
    const s = this.mem(agentId);
    this.panes.get(s.paneId!)!.alive = false;
  }

  /** The sheep's pi ends; its pane stays, as tmux keeps it. */
  exitPi(agentId: string, exit: ExitStatus) {
    this.panes.get(this.mem(agentId).paneId!)!.exit = exit;
    this.ring(agentId);
  }
}
