import { type AgentId, parseAgentId } from "../../src/domain/ids.ts";
import type { Clock } from "../../src/core/herd/clock.ts";
import { ShepherdError } from "../../src/domain/errors.ts";
import type { CreatedPane, CreatePaneRequest, ExitStatus, PaneLiveness, PaneRef, Runtime } from "../../src/ports/runtime.ts";
import type { ResumeCard } from "../../src/ports/types.ts";
import {
  type Delivery,
  type PreparedSheep,
  type PrepareRequest,
  resumeCardOf,
  type SheepFiles,
  type SheepResult,
  type SheepSnapshot,
} from "../../src/ports/sheep-files.ts";
import type { StateStore, StoredState } from "../../src/ports/store.ts";
import { checkRecords } from "../../src/stores/state-records.ts";
import { MemoryWorkspace } from "./memory-workspace.ts";
import { prng, type Rng } from "./prng.ts";

/**
 * An in-memory tmux server and sheep-files port that misbehaves the way real ones do, for the
 * model-based test of the core: the server ends with its last pane and numbers the next one
 * %0 again, CLI calls fail now and then, people close panes and open their own, pi crashes,
 * and a shepherd process can die in the middle of anything. Nothing here waits in real time:
 * delays run on the clock the test drives.
 *
 * A pane runs the sheep's command itself. Like tmux 3.3+ (reportsExit), the server keeps a pane
 * whose program ended and says how it ended, now and then only at its next look (tmux can miss
 * a SIGCHLD); otherwise like herdr, a shell stays in the pane after pi and report-exit.sh writes
 * exit.json for the host to read.
 */

/** "mark": a split is marked by a second call, after its program started; the adapter closes the pane when that fails. */
export type FlakyOp = "liveness" | "createPane" | "mark" | "close";
export const FLAKY_OPS: readonly FlakyOp[] = ["liveness", "createPane", "mark", "close"];

/** How long the file host waits, once the pid the sheep reported is gone, before it takes pi for exited. */
export const PID_GRACE_MS = 3000;

/** How pi in a new pane comes up. "vanish": the user closes the pane while pi starts. */
export type BootPlan =
  | { kind: "ready"; afterMs: number }
  | { kind: "crash"; afterMs: number; code: number | null; signal: string | null }
  | { kind: "never" }
  | { kind: "vanish"; afterMs: number };

/** How a sheep answers a prompt: after some test steps, or after some time on the clock. */
export interface AnswerPlan {
  outcome: "completed" | "failed" | "cancelled" | "never";
  afterSteps: number;
  afterMs: number;
}

export interface ChaosPane {
  paneId: string;
  kind: "sheep" | "user" | "foreign";
  /** The ownership mark (@pi_shepherd_agent); user panes have none. */
  mark?: string;
  text: string;
  /** Its program ended and the server kept the pane; `collected` once the server knows how. */
  ended?: { exit: ExitStatus; collected: boolean };
}

export interface ChaosSheep {
  agentId: string;
  paneId?: string;
  boot: BootPlan;
  /** pi's process is gone: crashed, or killed with its pane. */
  dead: boolean;
  /** How pi ended, when it ended by itself. */
  exit?: ExitStatus;
  /** When pi's process went, on the clock. */
  diedAt?: number;
  /** The host can see the pid it reported is gone (not when the pid came back as another process). */
  pidWitness: boolean;
  /** Where report-exit.sh writes how pi ended, when the pane runs the command under it. */
  reporter?: string;
  /** exit.json as report-exit.sh wrote it. */
  exitReport?: ExitStatus & { at: string };
  ready?: { pid: number; readyAt: string };
  inbox: Map<string, string>;
  /** Every result pi wrote, kept after cleanup so the test knows what was on disk. */
  outbox: Map<string, SheepResult>;
  /** Prompts answered after a number of test steps: steps left. */
  dueInSteps: Map<string, { steps: number; plan: AnswerPlan }>;
  /** Prompts in the inbox before pi was ready (a cold start's first): pi takes them once it is. */
  early: { promptId: string; plan: AnswerPlan }[];
  listeners: Set<() => void>;
  cleaned: boolean;
}

export const NEIGHBOUR = "neighbour";

export class ChaosWorld {
  /** The panes of the one server; empty means no server. */
  readonly panes = new Map<string, ChaosPane>();
  readonly sheep = new Map<string, ChaosSheep>();
  /** Shepherd processes that died: their calls never return and their writes never land. */
  readonly deadOwners = new Set<string>();
  readonly store: ChaosStore;
  /** Git for isolated sheep: worktrees of a repository at /repo. */
  readonly workspace = new MemoryWorkspace();
  /** The card of each prepared sheep, as a host keeps it beside the session: it resumes the sheep once pi came up. */
  readonly cards = new Map<string, ResumeCard>();
  /** Calls of each kind that failed on purpose, so a test can tell which outcomes were excused. */
  readonly injected: Record<FlakyOp, number> = { liveness: 0, createPane: 0, mark: 0, close: 0 };
  /** The next n calls of an op fail. */
  readonly failNext: Record<FlakyOp, number> = { liveness: 0, createPane: 0, mark: 0, close: 0 };
  /** Like tmux 3.3+: a pane whose program ended stays, and liveness says how it ended. Else like herdr. */
  reportsExit = true;
  /** Liveness answers "alive" for a pane whose program ended while the server had not yet collected it. */
  staleAnswers = 0;
  /** Besides failNext, each call fails with this probability. */
  failRate = 0;
  /**
   * Each call waits up to this many microtask turns before it acts, a seeded number: calls
   * running together interleave differently from seed to seed, as processes and files do.
   */
  maxJitter = 0;
  /** Answers liveness by pane id alone, as adapters did before the mark was checked. */
  judgeByPaneIdOnly = false;
  /** Panes runtime.close killed. */
  readonly kills: { paneId: string; agentId: string }[] = [];
  /** Agent ids in the order prepare saw them. */
  readonly prepared: string[] = [];
  /** Boot plans handed to the next prepares, in order; a ready sheep when empty. */
  readonly bootPlans: { boot: BootPlan; answer?: AnswerPlan }[] = [];
  /**
   * Boot plans for isolated starts and for resumes (by the sheep resumed), apart from the plain
   * ones: these prepare only after an await (the worktree, the card), so a plain start alongside
   * would take their plans from one queue.
   */
  readonly isolatedPlans: BootPlan[] = [];
  readonly resumePlans = new Map<string, BootPlan[]>();
  /** Answer plans by prompt text. */
  readonly promptPlans = new Map<string, AnswerPlan>();
  private nextPane = 0;
  /** Sheep of a neighbouring shepherd, by agent id: their panes. */
  private readonly neighbours = new Map<AgentId, string>();
  private readonly rng: Rng;

  constructor(
    private readonly clock: Clock,
    seed: number,
  ) {
    this.rng = prng(seed);
    this.store = new ChaosStore(this.deadOwners);
  }

  /** The ports as one shepherd process sees them. */
  view(owner: string): { runtime: Runtime; host: SheepFiles } {
    const dead = () => this.deadOwners.has(owner);
    // A dead process does not get answers: its pending work stays pending forever.
    const hang = new Promise<never>(() => undefined);
    const guard =
      <A extends unknown[], R>(fn: (...a: A) => Promise<R>) =>
      async (...a: A): Promise<R> => {
        if (dead()) return hang;
        await this.jitter();
        return dead() ? hang : fn(...a);
      };
    return {
      runtime: {
        name: "tmux",
        createPane: guard((req: CreatePaneRequest) => this.createPane(req)),
        liveness: guard((refs: readonly PaneRef[]) => this.liveness(refs)),
        markedPanes: guard(async () => [...this.panes.values()].flatMap((p) => (p.mark ? [{ paneId: p.paneId, agentId: p.mark }] : []))),
        read: guard(async (paneId: string) => this.read(paneId)),
        close: guard((paneId: string, agentId: string) => this.close(paneId, agentId)),
      },
      host: {
        // Not jittered: boot plans go to starts in the order they were called.
        prepare: (req: PrepareRequest) => (dead() ? hang : this.prepare(req)),
        snapshot: guard(async (agentId: string) => this.snapshot(agentId)),
        result: guard(async (agentId: string, promptId: string) => {
          const s = this.sheep.get(agentId);
          const r = s && !s.cleaned ? s.outbox.get(promptId) : undefined;
          return r ? structuredClone(r) : undefined;
        }),
        // Its sheep take prompts; steers (and messages to the shepherd) belong to the async herd's own tests.
        submit: guard(async (agentId: string, d: Delivery) => {
          if (d.kind === "prompt") this.submit(agentId, d.promptId, d.text);
        }),
        messages: guard(async () => []),
        replies: guard(async () => new Map()),
        reply: guard(async () => "expired" as const),
        evidencePath: async (agentId: string, promptId: string) => `/evidence/${agentId}/${promptId}.patch`,
        subscribe: (agentId: string, onChange: () => void) => {
          const s = this.mem(agentId);
          s.listeners.add(onChange);
          return () => s.listeners.delete(onChange);
        },
        cleanup: guard(async (agentId: string) => {
          this.mem(agentId).cleaned = true;
          return undefined;
        }),
        discard: guard(async (agentId: string) => {
          this.mem(agentId).cleaned = true;
        }),
        // A sheep whose pi came up has a session (as if it had answered); one that never did has none.
        resumeCard: guard(async (agentId: string) => (this.sheep.get(agentId)?.ready ? this.cards.get(agentId) : undefined)),
        resumeCards: guard(async () => [...this.cards.values()].filter((c) => this.sheep.get(c.agentId)?.ready)),
        conversation: guard(async (agentId: string) => ({ sessionPath: `/chaos/${agentId}/session.jsonl`, earlier: false })),
      },
    };
  }

  // --- the multiplexer ------------------------------------------------------------------

  private async createPane(req: CreatePaneRequest): Promise<CreatedPane> {
    this.maybeFail("createPane", "could not create a pane");
    const pane = this.openPane("sheep", req.agentId, `pane of ${req.label}\n`);
    this.mem(req.agentId).paneId = pane.paneId;
    this.run(pane, this.reportsExit ? req.command.argv : req.command.reporting);
    try {
      this.maybeFail("mark", "could not mark the new pane");
    } catch (e) {
      this.removePane(pane.paneId, true);
      throw e;
    }
    return { paneId: pane.paneId, attachHint: "tmux -S /chaos/socket attach -t pi-shepherd" };
  }

  /** The pane's program: the launcher (under report-exit.sh where asked), which reads the spec it names. */
  private run(pane: ChaosPane, argv: readonly string[]): void {
    const reporter = argv[0] === "/bin/sh" && argv[1] === "/pkg/report-exit.sh" ? argv[2] : undefined;
    const launcher = reporter !== undefined ? argv.slice(3) : argv;
    // The launcher reads the spec named on its command; the spec says whose sheep this is.
    const agentId = launcher.length === 3 && launcher[1] === "/pkg/launcher.mjs" ? /^\/spec\/(.+)\.json$/.exec(launcher[2] ?? "")?.[1] : undefined;
    const s = agentId ? this.sheep.get(agentId) : undefined;
    if (!s || s.paneId !== pane.paneId) {
      pane.text += "launcher: no such spec\n";
      return;
    }
    if (reporter === `/state/${s.agentId}/exit.json`) s.reporter = reporter;
    const boot = s.boot;
    if (boot.kind === "never") return;
    this.after(boot.afterMs, () => {
      if (!this.piAlive(s)) return;
      if (boot.kind === "ready") {
        s.ready = { pid: 4000 + this.prepared.indexOf(s.agentId), readyAt: new Date(this.clock.now()).toISOString() };
        for (const e of s.early.splice(0)) this.plan(s, e.promptId, e.plan);
      }
      if (boot.kind === "crash") {
        pane.text += "Error: no API key for the model\n";
        this.crash(s.agentId, { code: boot.code, signal: boot.signal }, false);
      }
      if (boot.kind === "vanish") this.removePane(pane.paneId, false);
      this.ring(s.agentId);
    });
  }

  private async liveness(refs: readonly PaneRef[]): Promise<Map<string, PaneLiveness>> {
    this.maybeFail("liveness", "could not list panes");
    const out = new Map<string, PaneLiveness>();
    for (const { paneId, agentId } of refs) {
      const pane = this.panes.get(paneId);
      if (!pane || !(this.judgeByPaneIdOnly || pane.mark === agentId)) out.set(agentId, { state: "gone" });
      else if (pane.ended?.collected) out.set(agentId, { state: "exited", exit: { ...pane.ended.exit } });
      else {
        if (pane.ended) {
          // A missed SIGCHLD: ended, but not known yet; the next look will say.
          this.staleAnswers++;
          pane.ended.collected = true;
        }
        out.set(agentId, { state: "alive" });
      }
    }
    return out;
  }

  private read(paneId: string): string {
    const pane = this.panes.get(paneId);
    if (!pane) throw new ShepherdError("runtime_error", `could not read the pane: can't find pane: ${paneId}`);
    return pane.text;
  }

  private async close(paneId: string, agentId: string): Promise<undefined> {
    this.maybeFail("close", "could not close the pane");
    const pane = this.panes.get(paneId);
    if (!pane) return;
    if (pane.mark !== agentId) {
      throw new ShepherdError("not_owned", `pane ${paneId} is not the pane this shepherd created for ${agentId}; it was left alone.`);
    }
    this.kills.push({ paneId, agentId });
    this.removePane(paneId, false);
  }

  // --- the sheep-files port -------------------------------------------------------------------

  private async prepare(req: PrepareRequest): Promise<PreparedSheep> {
    const own = req.resume ? this.resumePlans.get(req.resume.from)?.shift() : req.cwd.startsWith("/wt/") ? this.isolatedPlans.shift() : undefined;
    const plan = (own ? { boot: own } : undefined) ?? this.bootPlans.shift() ?? { boot: { kind: "ready", afterMs: 0 } };
    const s = this.mem(req.agentId);
    s.boot = plan.boot;
    if (plan.answer) this.promptPlans.set(`*${req.agentId}`, plan.answer);
    this.prepared.push(req.agentId);
    const argv = ["/node", "/pkg/launcher.mjs", `/spec/${req.agentId}.json`];
    const sessionPath = req.resume?.sessionPath ?? `/sessions/${req.agentId}.jsonl`;
    this.cards.set(req.agentId, resumeCardOf(req, sessionPath));
    return {
      sessionPath,
      command: { argv, reporting: ["/bin/sh", "/pkg/report-exit.sh", `/state/${req.agentId}/exit.json`, ...argv] },
    };
  }

  /** As the file host reads the sheep's files: status.json, exit.json, and the pid status.json names. */
  private snapshot(agentId: string): SheepSnapshot {
    const s = this.sheep.get(agentId);
    // status.json and exit.json go with cleanup, like the sheep's other files.
    if (!s || s.cleaned) return {};
    const snap: SheepSnapshot = {};
    if (s.ready) snap.ready = { ...s.ready };
    if (s.exitReport) snap.exited = { ...s.exitReport };
    if (s.dead && s.ready && s.pidWitness) {
      snap.piGone = true;
      if (!snap.exited && this.clock.now() - s.diedAt! >= PID_GRACE_MS) {
        snap.exited = { code: null, signal: null, at: new Date(this.clock.now()).toISOString(), inferred: true };
      }
    }
    return snap;
  }

  private submit(agentId: string, promptId: string, text: string): void {
    const s = this.mem(agentId);
    if (s.cleaned) throw Object.assign(new Error(`ENOENT: no such file or directory, open '/state/${agentId}/inbox/${promptId}.json'`), { code: "ENOENT" });
    s.inbox.set(promptId, text);
    const plan = this.promptPlans.get(text) ?? this.promptPlans.get(`*${agentId}`);
    if (!plan || plan.outcome === "never") return;
    if (!s.ready) s.early.push({ promptId, plan });
    else this.plan(s, promptId, plan);
  }

  private plan(s: ChaosSheep, promptId: string, plan: AnswerPlan): void {
    if (plan.afterSteps > 0) s.dueInSteps.set(promptId, { steps: plan.afterSteps, plan });
    else this.after(plan.afterMs, () => this.answer(s.agentId, promptId, plan));
  }

  // --- what happens in the world --------------------------------------------------------

  /** One step of the test: sheep counting steps towards an answer get closer to it. */
  step(): void {
    for (const s of this.sheep.values()) {
      for (const [promptId, due] of [...s.dueInSteps]) {
        if (--due.steps > 0) continue;
        s.dueInSteps.delete(promptId);
        this.answer(s.agentId, promptId, due.plan);
      }
    }
  }

  /** pi writes its result, if it still runs. */
  answer(agentId: string, promptId: string, plan: AnswerPlan): void {
    const s = this.sheep.get(agentId);
    if (!s || !this.piAlive(s) || s.outbox.has(promptId) || plan.outcome === "never") return;
    const text = s.inbox.get(promptId) ?? "";
    const at = new Date(this.clock.now()).toISOString();
    s.outbox.set(promptId, {
      promptId,
      status: plan.outcome,
      text: plan.outcome === "completed" ? `answer to ${text}` : "",
      stopReason: plan.outcome === "completed" ? "stop" : plan.outcome === "failed" ? "error" : "aborted",
      ...(plan.outcome === "failed" ? { errorMessage: "429 rate limited" } : {}),
      ...(plan.outcome === "cancelled" ? { errorMessage: "aborted by the user" } : {}),
      usage: { input: 10, output: 5, totalTokens: 15 },
      model: "scripted/one",
      sessionPath: `/sessions/${agentId}.jsonl`,
      startedAt: at,
      finishedAt: at,
    });
    this.ring(agentId);
  }

  /**
   * pi ends inside its pane: tmux keeps the pane and learns how it ended (at its next look after
   * a `missed` SIGCHLD), or, under report-exit.sh, the shell stays and exit.json is written. The
   * pane may go right after.
   */
  crash(agentId: string, exit: ExitStatus, paneGoes: boolean, missed = false): void {
    const s = this.sheep.get(agentId);
    if (!s || s.dead) return;
    s.dead = true;
    s.exit = { ...exit };
    s.diedAt = this.clock.now();
    s.pidWitness = true;
    if (s.reporter) s.exitReport = { ...exit, at: new Date(this.clock.now()).toISOString() };
    const pane = this.paneOf(agentId);
    if (pane && this.reportsExit) pane.ended = { exit: { ...exit }, collected: !missed };
    if (paneGoes && pane) this.removePane(pane.paneId, true);
    this.ring(agentId);
  }

  /**
   * A pane goes from outside. pi goes with it, hung up (report-exit.sh writes nothing then);
   * `witness` says whether the host notices the pid it reported is gone (the file host takes
   * that for an exit after a grace), or nothing says so but the pane.
   */
  removePane(paneId: string, witness: boolean): void {
    const pane = this.panes.get(paneId);
    if (!pane) return;
    this.panes.delete(paneId);
    const s = pane.mark ? this.sheep.get(pane.mark) : undefined;
    if (s && s.paneId === paneId && !s.dead) {
      s.dead = true;
      s.diedAt = this.clock.now();
      s.pidWitness = witness;
      this.ring(s.agentId);
    }
    // tmux exits with its last pane; the next server numbers panes from %0 again.
    if (this.panes.size === 0) this.nextPane = 0;
  }

  /** The whole server goes (tmux kill-server, a reboot): every pane with it. */
  serverDies(): void {
    for (const id of [...this.panes.keys()]) this.removePane(id, false);
  }

  openUserPane(): ChaosPane {
    return this.openPane("user", undefined, "user@host:~$ vim notes.md\n");
  }

  /** A sheep of another shepherd that still runs: its pane and its record in the shared store. */
  async addNeighbour(): Promise<string | undefined> {
    if (this.neighbours.size >= 10) return undefined;
    const agentId = parseAgentId(`a_neighbour${this.neighbours.size}`);
    this.neighbours.set(agentId, this.openPane("foreign", agentId, "another shepherd's sheep\n").paneId);
    const agents = [...this.neighbours].map(([id, paneId]) => ({
      agentId: id,
      agent: "worker",
      label: `neighbour-${id.slice(-1)}`,
      runtime: "tmux" as const,
      paneId,
      cwd: "/elsewhere",
      sessionPath: `/sessions/${id}.jsonl`,
      createdAt: new Date(this.clock.now()).toISOString(),
      owner: NEIGHBOUR,
      state: "idle" as const,
    }));
    await this.store.save(NEIGHBOUR, { agents, prompts: [] });
    return agentId;
  }

  get neighbourIds(): AgentId[] {
    return [...this.neighbours.keys()];
  }

  // --- truths the test checks against -------------------------------------------------

  /** The pane that still carries this agent's mark, if any. */
  paneOf(agentId: string): ChaosPane | undefined {
    const s = this.sheep.get(agentId);
    const pane = s?.paneId ? this.panes.get(s.paneId) : undefined;
    return pane?.mark === agentId ? pane : undefined;
  }

  piAlive(s: ChaosSheep): boolean {
    return !s.dead && this.paneOf(s.agentId) !== undefined;
  }

  /** A multiplexer that answers right says this sheep's pane runs its program. */
  paneRunning(agentId: string): boolean {
    return this.paneOf(agentId) !== undefined && !this.paneOf(agentId)!.ended;
  }

  /** Something the shepherd can read says pi is gone: its pane, the multiplexer, exit.json or the pid. */
  deathKnown(s: ChaosSheep): boolean {
    if (!s.dead) return false;
    return !this.paneOf(s.agentId) || this.paneOf(s.agentId)!.ended !== undefined || s.exitReport !== undefined || (s.ready !== undefined && s.pidWitness);
  }

  mem(agentId: string): ChaosSheep {
    let s = this.sheep.get(agentId);
    if (!s) {
      s = {
        agentId,
        boot: { kind: "ready", afterMs: 0 },
        dead: false,
        pidWitness: false,
        inbox: new Map(),
        outbox: new Map(),
        dueInSteps: new Map(),
        early: [],
        listeners: new Set(),
        cleaned: false,
      };
      this.sheep.set(agentId, s);
    }
    return s;
  }

  // ---------------------------------------------------------------------------------------

  private openPane(kind: ChaosPane["kind"], mark: string | undefined, text: string): ChaosPane {
    const pane: ChaosPane = { paneId: `%${this.nextPane++}`, kind, ...(mark !== undefined ? { mark } : {}), text };
    this.panes.set(pane.paneId, pane);
    return pane;
  }

  private maybeFail(op: FlakyOp, what: string): void {
    let fail = false;
    if (this.failNext[op] > 0) {
      this.failNext[op]--;
      fail = true;
    } else if (this.failRate > 0 && this.rng.chance(this.failRate)) {
      fail = true;
    }
    if (!fail) return;
    this.injected[op]++;
    // What the tmux adapter makes of a tmux process that exits non-zero for a passing reason.
    throw new ShepherdError("runtime_error", `${what}: tmux exited with code 1: server exited unexpectedly (injected)`);
  }

  private async jitter(): Promise<void> {
    if (this.maxJitter <= 0) return;
    for (let n = this.rng.int(this.maxJitter + 1); n > 0; n--) await Promise.resolve();
  }

  private after(ms: number, fn: () => void): void {
    if (ms <= 0) queueMicrotask(fn);
    else void this.clock.sleep(ms).then(fn);
  }

  private ring(agentId: string): void {
    for (const fn of [...this.mem(agentId).listeners]) fn();
  }
}

interface StateFile extends StoredState {
  version: 1;
}

/**
 * The shared state file in memory: every load and save goes through JSON text, so nothing the
 * core keeps a reference to can change what a later shepherd reads. Saves merge by owner as
 * the file store does, and keep only records a load accepts (the file store's own checks); a dead
 * owner's late saves never land.
 */
export class ChaosStore implements StateStore {
  private text = JSON.stringify({ version: 1, agents: [], prompts: [] } satisfies StateFile);

  constructor(private readonly deadOwners: ReadonlySet<string>) {}

  async load(): Promise<{ state: StoredState; warnings: string[] }> {
    return { state: this.peek(), warnings: [] };
  }

  async save(owner: string, mine: StoredState): Promise<void> {
    if (this.deadOwners.has(owner)) return;
    const before = this.peek();
    const theirs = new Set([...mine.agents.map((a) => a.agentId), ...(mine.forgotten ?? [])]);
    const agents = [...before.agents.filter((a) => a.owner !== owner && !theirs.has(a.agentId)), ...mine.agents];
    const kept = new Set(agents.map((a) => a.agentId));
    const minePrompts = new Set(mine.prompts.map((p) => p.promptId));
    const prompts = [...before.prompts.filter((p) => kept.has(p.agentId) && !theirs.has(p.agentId) && !minePrompts.has(p.promptId)), ...mine.prompts];
    // As the file store writes: only what a load accepts, so a record a load would refuse is missing here too.
    const checked = checkRecords(agents, prompts, []);
    this.text = JSON.stringify({ version: 1, agents: checked.agents, prompts: checked.prompts } satisfies StateFile);
  }

  /** The records as the file holds them now. */
  peek(): StoredState {
    const data = JSON.parse(this.text) as StateFile;
    return { agents: data.agents, prompts: data.prompts };
  }
}
