/**
 * The shepherd's session lifecycle (src/session/shepherd-session.ts) without pi: fakes of the
 * shapes it needs (src/session/ports.ts), a fake app and a clock the test moves. The app is composed
 * once, the session begun once (attach, pushes, warm pool) before any call runs on it, a full doctor
 * waits for it only up to its bound, and the end (quit or reload) lets go of all of it, after a
 * session still beginning finished. (test/e2e/reload, quit and resume-reload drive the same through
 * a real pi.)
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { personNoteText } from "../../../src/command/person-text.ts";
import type { ShepherdApp } from "../../../src/compose.ts";
import type { CourierSink, Push, QuitOutcome } from "../../../src/core/shepherd.ts";
import type { AuditInput, AuditSink } from "../../../src/ports/audit.ts";
import type { SessionContext, SessionParts, SessionPorts } from "../../../src/session/ports.ts";
import { DOCTOR_SESSION_WAIT_MS, ShepherdSession } from "../../../src/session/shepherd-session.ts";
import type { DispatchContext } from "../../../src/context/context.ts";
import { heldText, leftoverText, noticeText, reattachText } from "../../../src/texts/format.ts";
import { type PushMessage, pushMessage } from "../../../src/edge/push-text.ts";
import { quitText } from "../../../src/texts/quit.ts";
import { printable } from "../../../src/domain/printable.ts";

/** Lets every promise that can settle now settle. */
const settle = () => new Promise<void>((r) => setImmediate(r));

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => {
    open = r;
  });
  return { wait, open };
}

interface Ctx extends SessionContext {
  readonly notes: [string | undefined, string][];
}

function ctxOf(hasUI: boolean): Ctx {
  const notes: [string | undefined, string][] = [];
  return { cwd: "/project", hasUI, notes, ui: { notify: (message, type) => notes.push([type, message]) } };
}

/** The core's facade as the session uses it; each call is written to the shared log. */
class FakeShepherd {
  sink: CourierSink | undefined;
  warmed: unknown;
  attachGate: Promise<void> = Promise.resolve();
  report = { adopted: [] as string[], pruned: [] as string[], live: [] as string[], warnings: [] as string[] };
  quitOutcome: QuitOutcome = { closed: [], kept: [], failed: [] };
  constructor(
    readonly name: string,
    private readonly log: string[],
  ) {}
  async attach() {
    this.log.push(`${this.name}.attach`);
    await this.attachGate;
    return this.report;
  }
  async leftovers() {
    return { specs: [], panes: [{ host: "local" }], worktrees: [] };
  }
  deliverTo(sink: CourierSink) {
    this.log.push(`${this.name}.deliverTo`);
    this.sink = sink;
  }
  keepWarm(config: unknown) {
    this.log.push(`${this.name}.keepWarm`);
    this.warmed = config;
  }
  async quit() {
    this.log.push(`${this.name}.quit`);
    return this.quitOutcome;
  }
  async dispose() {
    this.log.push(`${this.name}.dispose`);
    this.sink = undefined; // the courier stops: nothing is pushed after
  }
  /** What the courier does with a result nobody waits for. */
  push(p: Push) {
    this.sink?.deliver(p);
  }
  view() {
    return undefined;
  }
}

const aPush: Push = {
  kind: "result",
  label: "scout",
  agent: "scout",
  item: { promptId: "p_1", agentId: "a_1", status: "completed", text: "done" } as Extract<Push, { kind: "result" }>["item"],
};

interface World {
  session: ShepherdSession<Ctx>;
  log: string[];
  sent: { message: PushMessage; options: unknown }[];
  stderr: string[];
  transcript: string[];
  audited: AuditInput[];
  doctors: { brief: boolean; shepherd: boolean }[];
  sleeps: { ms: number; wake: () => void }[];
  shepherds: FakeShepherd[];
  /** The next composes throw this many times first. */
  failCompose: number;
  settings: { closeOnExit: boolean; warm: Record<string, number>; warmMemory: number };
  now: number;
  ports: SessionPorts<Ctx>;
}

function world(o: { doctorWaitMs?: number; attachGate?: Promise<void> } = {}): World {
  const w = {
    log: [],
    sent: [],
    stderr: [],
    transcript: [],
    audited: [],
    doctors: [],
    sleeps: [],
    shepherds: [],
    failCompose: 0,
    settings: { closeOnExit: true, warm: {}, warmMemory: 0 },
    now: 1_000,
  } as unknown as World;
  const parts = {
    composeShepherd: async () => {
      w.log.push("compose");
      if (w.failCompose > 0) {
        w.failCompose--;
        throw new Error("[runtime_unavailable] no tmux");
      }
      const shepherd = new FakeShepherd(`s${w.shepherds.length + 1}`, w.log);
      if (o.attachGate) shepherd.attachGate = o.attachGate;
      w.shepherds.push(shepherd);
      return {
        shepherd,
        loaded: { settings: { ...w.settings, placement: "auto", direction: "right", models: {} } },
        agentDir: "/agent",
        bundledDir: "/bundled",
        hosts: { close: async () => void w.log.push(`${shepherd.name}.hosts.close`) },
        egress: { closeAll: async () => void w.log.push(`${shepherd.name}.egress.closeAll`) },
        notify: { sinks: {}, notifier: { start: () => undefined, stop: async () => void w.log.push(`${shepherd.name}.notify.stop`) } },
      } as unknown as ShepherdApp;
    },
    doctor: async (d: { brief: boolean; shepherd?: unknown }) => {
      w.doctors.push({ brief: d.brief, shepherd: d.shepherd !== undefined });
      return { checks: [], counts: {} };
    },
    auditTrail: () => ({ record: async (e: AuditInput) => void w.audited.push(e) }) as unknown as AuditSink,
    processOwner: () => "42:owner",
    reattachText,
    leftoverText,
    noticeText,
    heldText,
    personNoteText,
    pushMessage,
    poolDefinitions: async () => [],
    quitText,
  } as unknown as SessionParts;
  w.ports = {
    pi: { sendMessage: (message, options) => void w.sent.push({ message, options }) },
    parts: async () => parts,
    dispatchContext: (app) => ({ shepherd: app.shepherd }) as unknown as DispatchContext,
    projectTrusted: () => true,
    transcript: (_ctx, text) => void w.transcript.push(text),
    widget: { touch: () => void w.log.push("widget.touch"), stop: () => void w.log.push("widget.stop") },
    panel: {
      resume: async () => {
        w.log.push("panel.resume");
        return "http://127.0.0.1:1/";
      },
      shutdown: async (reason) => void w.log.push(`panel.shutdown ${reason}`),
    },
    env: {},
    stderr: (line) => void w.stderr.push(line),
    clock: {
      now: () => w.now,
      sleep: (ms) => new Promise<void>((wake) => w.sleeps.push({ ms, wake })),
    },
    ...(o.doctorWaitMs === undefined ? {} : { doctorWaitMs: o.doctorWaitMs }),
  };
  w.session = new ShepherdSession(w.ports);
  return w;
}

const count = (log: string[], entry: string) => log.filter((l) => l === entry).length;

describe("ShepherdSession: beginning", () => {
  it("a session start with a UI composes once and attaches once, however often it is asked to begin", async () => {
    const w = world();
    const ctx = ctxOf(true);
    await Promise.all([w.session.sessionStart(ctx), w.session.begin(ctx), w.session.entry(ctx).context()]);
    await w.session.sessionStart(ctx);
    assert.equal(count(w.log, "compose"), 1);
    assert.equal(count(w.log, "s1.attach"), 1);
    assert.equal(count(w.log, "s1.deliverTo"), 1);
    // The panel comes back after the session began (its routes enter through it), and says where.
    assert.ok(w.log.indexOf("panel.resume") > w.log.indexOf("s1.deliverTo"));
    assert.deepEqual(ctx.notes.at(-1), ["info", "pi-shepherd panel: http://127.0.0.1:1/"]);
  });

  it("a pi without a UI does not begin at its start, only when a call needs the shepherd", async () => {
    const w = world();
    const ctx = ctxOf(false);
    await w.session.sessionStart(ctx);
    await settle();
    assert.deepEqual(w.log, []);
    const dispatch = await w.session.entry(ctx, { edge: "command" }).context();
    assert.deepEqual(w.log, ["compose", "s1.attach", "s1.deliverTo"]);
    assert.equal(dispatch.edge, "command");
    assert.equal(dispatch.shepherd as unknown, w.shepherds[0]);
    // No pool in a one-shot pi, no notices, no panel.
    assert.equal(w.shepherds[0]!.warmed, undefined);
  });

  it("a compose that fails is tried again by the next call, and the session begins then", async () => {
    const w = world();
    w.failCompose = 3;
    const ctx = ctxOf(true);
    await w.session.begin(ctx); // a failed begin rejects nobody: the call that needs the app says why
    // The call's own begin fails again, then its own compose says why.
    await assert.rejects(w.session.entry(ctx).context(), /runtime_unavailable/);
    assert.equal(w.session.current() === undefined && w.session.ready === undefined, true, "nothing composed is kept");
    assert.deepEqual(w.log, ["compose", "compose", "compose"]);
    await w.session.entry(ctx).context();
    assert.equal(count(w.log, "compose"), 4);
    assert.equal(count(w.log, "s1.attach"), 1);
    assert.equal(w.session.ready?.shepherd as unknown, w.shepherds[0]);
  });

  it("says what attach found where there is a UI, and keeps the pool when the settings ask for one", async () => {
    const w = world();
    w.settings.warm = { scout: 1 };
    const ctx = ctxOf(true);
    // The fake shepherd exists once composed: what its attach reports is set before the session begins.
    await w.session.appFor(ctx);
    const s = w.shepherds[0]!;
    s.report = { adopted: ["a_1", "a_2"], pruned: ["a_2"], live: ["a_1"], warnings: ["bad\u001b[31m record"] };
    await w.session.begin(ctx);
    await settle();
    assert.deepEqual(ctx.notes, [
      ["warning", "bad record"],
      ["info", "pi-shepherd: re-attached 1 sheep; 1 whose panes were gone was pruned."],
      ["warning", leftoverText({ specs: [], panes: [{ host: "local" }], worktrees: [] })!],
    ]);
    assert.deepEqual(Object.keys(s.warmed as object).sort(), ["cwd", "definitions", "direction", "memoryMb", "placement", "sizes"]);
    assert.deepEqual((s.warmed as { sizes: unknown }).sizes, { scout: 1 });
    // Redrawn for the live sheep taken back and for the pool.
    assert.equal(count(w.log, "widget.touch"), 2);
  });

  it("keeps no pool when no warm setting asks for one, nor in a pi without a UI", async () => {
    const w = world();
    await w.session.begin(ctxOf(true));
    assert.equal(w.shepherds[0]!.warmed, undefined);
    const w2 = world();
    w2.settings.warm = { scout: 2 };
    await w2.session.begin(ctxOf(false));
    assert.equal(w2.shepherds[0]!.warmed, undefined);
  });
});

describe("ShepherdSession: pushes", () => {
  it("what nobody waits for goes into the conversation as a follow-up that starts a turn, once the session began", async () => {
    const w = world();
    const ctx = ctxOf(true);
    await w.session.begin(ctx);
    w.shepherds[0]!.push(aPush);
    assert.equal(w.sent.length, 1);
    assert.deepEqual(w.sent[0]!.message, pushMessage(aPush));
    assert.deepEqual(w.sent[0]!.options, { triggerTurn: true, deliverAs: "followUp" });
    // A sheep's notice is told printable and redraws the widget; a person's note stands in the transcript.
    const sink = w.shepherds[0]!.sink!;
    sink.notice?.({ label: "scout", agentId: "a_1", message: { kind: "progress", text: "half\u0007way", messageId: "m_1" } } as never);
    assert.deepEqual(ctx.notes.at(-1), [
      "info",
      printable(noticeText({ label: "scout", agentId: "a_1", message: { kind: "progress", text: "half\u0007way", messageId: "m_1" } })),
    ]);
    assert.doesNotMatch(ctx.notes.at(-1)![1], /\u0007/);
    assert.equal(w.log.at(-1), "widget.touch");
    sink.held?.({ label: "scout", count: 3 } as never);
    assert.deepEqual(ctx.notes.at(-1), ["info", heldText("scout", 3)]);
    assert.ok(sink.person, "with a UI a person's notes go to the transcript");
  });

  it("without a UI pushes still go to the conversation, and notices go nowhere", async () => {
    const w = world();
    const ctx = ctxOf(false);
    await w.session.begin(ctx);
    const sink = w.shepherds[0]!.sink!;
    assert.equal(sink.person, undefined);
    sink.notice?.({ label: "scout", agentId: "a_1", message: { kind: "progress", text: "x", messageId: "m_1" } } as never);
    assert.deepEqual(ctx.notes, []);
    w.shepherds[0]!.push(aPush);
    assert.equal(w.sent.length, 1);
  });

  it("nothing is pushed after the session ended", async () => {
    const w = world();
    const ctx = ctxOf(true);
    await w.session.begin(ctx);
    await w.session.shutdown("reload");
    w.shepherds[0]!.push(aPush);
    assert.deepEqual(w.sent, []);
  });
});

describe("ShepherdSession: the doctor", () => {
  it("a full doctor waits for a session still beginning, at most its bound, then answers", { timeout: 10_000 }, async () => {
    const attach = gate();
    const w = world({ attachGate: attach.wait, doctorWaitMs: 1234 });
    const ctx = ctxOf(true);
    void w.session.sessionStart(ctx);
    const answer = w.session.entry(ctx).doctor(false);
    await settle();
    assert.deepEqual(w.doctors, [], "the doctor waits while the session begins");
    assert.deepEqual(
      w.sleeps.map((s) => s.ms),
      [1234],
    );
    for (const s of w.sleeps) s.wake();
    await answer;
    // Composed but not yet attached: the doctor still looks with the shepherd it has.
    assert.deepEqual(w.doctors, [{ brief: false, shepherd: true }]);
    attach.open();
  });

  it("waits DOCTOR_SESSION_WAIT_MS unless told otherwise, and not at all once the session began", async () => {
    const w = world();
    const ctx = ctxOf(true);
    await w.session.begin(ctx);
    await w.session.entry(ctx).doctor(false); // no sleep woken: the begun session ends the wait
    assert.deepEqual(
      w.sleeps.map((s) => s.ms),
      [DOCTOR_SESSION_WAIT_MS],
    );
    assert.equal(DOCTOR_SESSION_WAIT_MS, 20_000);
  });

  it("a brief doctor (a start's verdict) never waits and needs no shepherd", async () => {
    const w = world();
    const ctx = ctxOf(false);
    await w.session.entry(ctx).doctor(true);
    assert.deepEqual(w.sleeps, []);
    assert.deepEqual(w.log, []);
    assert.deepEqual(w.doctors, [{ brief: true, shepherd: false }]);
  });
});

describe("ShepherdSession: audit and warnings", () => {
  it("an audit event is stamped when called and written with the process's owner", async () => {
    const w = world();
    const ctx = ctxOf(false);
    w.session.entry(ctx, { edge: "panel" }).audit?.({ action: "close", outcome: "refused" } as unknown as AuditInput);
    w.now = 9_999;
    await settle();
    assert.equal(w.audited.length, 1);
    assert.deepEqual(w.audited, [{ time: new Date(1_000).toISOString(), owner: "42:owner", action: "close", outcome: "refused" }]);
  });

  it("a warning goes to the last context's UI, else to stderr, printable either way", async () => {
    const w = world();
    w.session.warn("one\u001b]0;x\u0007 two");
    assert.deepEqual(w.stderr, ["one two"]);
    const ctx = ctxOf(true);
    await w.session.appFor(ctx);
    w.session.warn("three\u001b[2J four");
    assert.deepEqual(ctx.notes, [["warning", "three four"]]);
  });
});

describe("ShepherdSession: the end", () => {
  it("a reload stops the widget, closes the panel, disposes the app and closes the hosts; nothing is quit", async () => {
    const w = world();
    const ctx = ctxOf(true);
    await w.session.begin(ctx);
    w.log.length = 0;
    await w.session.shutdown("reload");
    assert.deepEqual(w.log, ["widget.stop", "panel.shutdown reload", "s1.dispose", "s1.notify.stop", "s1.hosts.close", "s1.egress.closeAll"]);
  });

  it("the next session (after a reload) composes its own app and attaches again; the first is disposed of first", async () => {
    const w = world();
    const first = w.session;
    await first.begin(ctxOf(true));
    await first.shutdown("reload");
    const second = new ShepherdSession(w.ports);
    await second.begin(ctxOf(true));
    assert.deepEqual(
      w.log.filter((l) => l !== "widget.touch"),
      [
        "compose",
        "s1.attach",
        "s1.deliverTo",
        "widget.stop",
        "panel.shutdown reload",
        "s1.dispose",
        "s1.notify.stop",
        "s1.hosts.close",
        "s1.egress.closeAll",
        "compose",
        "s2.attach",
        "s2.deliverTo",
      ],
    );
  });

  it("a quit with closeOnExit closes idle sheep and says what it kept on stderr, then disposes", async () => {
    const w = world();
    await w.session.begin(ctxOf(true));
    w.shepherds[0]!.quitOutcome = {
      closed: ["a_2"],
      kept: [{ agentId: "a_1", label: "scout", working: ["p_1"], unreceived: [] }],
      failed: [],
    } as unknown as QuitOutcome;
    w.log.length = 0;
    await w.session.shutdown("quit");
    assert.deepEqual(w.log, ["widget.stop", "panel.shutdown quit", "s1.quit", "s1.dispose", "s1.notify.stop", "s1.hosts.close", "s1.egress.closeAll"]);
    assert.deepEqual(w.stderr, [quitText(w.shepherds[0]!.quitOutcome)]);
  });

  it("a quit without closeOnExit closes nothing", async () => {
    const w = world();
    w.settings.closeOnExit = false;
    await w.session.begin(ctxOf(true));
    await w.session.shutdown("quit");
    assert.equal(count(w.log, "s1.quit"), 0);
    assert.equal(count(w.log, "s1.dispose"), 1);
  });

  it("a session still beginning finishes first, so what it starts is disposed of too", async () => {
    const attach = gate();
    const w = world({ attachGate: attach.wait });
    void w.session.sessionStart(ctxOf(true));
    await settle();
    const ended = w.session.shutdown("reload");
    await settle();
    assert.equal(count(w.log, "s1.dispose"), 0, "no dispose while the session begins");
    attach.open();
    await ended;
    assert.ok(w.log.indexOf("s1.deliverTo") < w.log.indexOf("s1.dispose"), w.log.join(", "));
    w.shepherds[0]!.push(aPush);
    assert.deepEqual(w.sent, []);
  });

  it("an end before anything was composed, or after a compose that failed, disposes nothing", async () => {
    const w = world();
    await w.session.shutdown("quit");
    assert.deepEqual(w.log, ["widget.stop", "panel.shutdown quit"]);
    const w2 = world();
    w2.failCompose = 5;
    await w2.session.begin(ctxOf(true));
    await w2.session.shutdown("quit");
    assert.deepEqual(w2.log, ["compose", "widget.stop", "panel.shutdown quit"]);
  });
});
