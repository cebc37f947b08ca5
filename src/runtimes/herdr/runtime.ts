/**
 * The herdr adapter of the runtime port. It uses only commands that herdr 0.7.5 to 0.9.x
 * share (herdr-contract.md §6.1, herdr-09.md §2), never takes focus, and never splits a pane it
 * was not told about: a split always names the calling pane from HERDR_PANE_ID. It never calls
 * `agent start` or `agent prompt` (a sheep's prompts travel as files and its readiness is its
 * status file), so their 0.8.1 refusals (`agent_blocked`, `agent_not_ready`) never reach it, and it
 * subscribes to no events (so 0.9.0's subscriptions without replay change nothing here).
 */
import path from "node:path";
import { ShepherdError } from "../../domain/errors.ts";
import type { CreatedPane, CreatePaneRequest, PaneLiveness, PaneRef, PaneSink, PaneWatch, ReportedState, Runtime } from "../../ports/runtime.ts";
import { HerdrCli, resolveHerdrBin } from "./cli.ts";
import { isHerdrCode } from "./errors.ts";
import { assertCompatible, probeHerdr } from "./probe.ts";
import { HerdrPaneTerminals } from "./pane-terminal.ts";
import { startHerdrServer } from "./server.ts";
import { carriesMark, cliSafeLabel, markedPaneLabel, markOf, REPORT_SOURCE } from "./labels.ts";
import { agentStatusOf, paneList, paneRecord, type PaneRecord, workspaceId } from "./records.ts";
import { shellLine } from "../shell-line.ts";
import { type HerdrVersion, meetsFloor, RECENT_READS_FIXED } from "./version.ts";

export interface HerdrRuntimeOptions {
  /** Environment of the shepherd; HERDR_* ids and herdr's socket come from it. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** The herdr executable. Default: env PI_SHEPHERD_HERDR_BIN, else `herdr` on PATH. */
  bin?: string;
  /** Upper bound for one herdr CLI call, in milliseconds. */
  timeoutMs?: number;
  /** Label of the workspace that holds "tab" placements when pi runs outside herdr. */
  homeWorkspaceLabel?: string;
}

/** A state report is display only: it waits no longer than this for herdr. */
const REPORT_TIMEOUT_MS = 5_000;
/** A terminal's read or keys: a page waits on it, and the next poll asks again. */
const TERMINAL_TIMEOUT_MS = 3_000;

export class HerdrRuntime implements Runtime {
  readonly name = "herdr" as const;
  readonly #cli: HerdrCli;
  /** The same CLI with the shorter deadline of a state report. */
  readonly #reportCli: HerdrCli;
  /** The panel's terminals: a poll of each watched pane's screen, and keys. */
  readonly #terminals: HerdrPaneTerminals;
  /** `--seq` must rise strictly per source and pane, across reloads too (herdr ignores stale ones). */
  #seq = 0;
  readonly #env: NodeJS.ProcessEnv;
  readonly #homeLabel: string;
  /** The binary's version, once its server was seen running with the same protocol. */
  #ready: Promise<HerdrVersion> | undefined;
  /** Outside herdr, tabs go into one workspace of our own, created on first use. */
  #home: Promise<string> | undefined;

  constructor(opts: HerdrRuntimeOptions = {}) {
    this.#env = opts.env ?? process.env;
    const cli = {
      bin: resolveHerdrBin(this.#env, opts.bin),
      env: this.#env,
      // The server went away or was replaced (perhaps by another version): probe it again.
      onFailure: (e: ShepherdError) => {
        if (isHerdrCode(e, "server_not_running", "protocol_mismatch")) this.#ready = undefined;
      },
    };
    this.#cli = new HerdrCli({ ...cli, ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}) });
    this.#reportCli = new HerdrCli({ ...cli, timeoutMs: Math.min(opts.timeoutMs ?? REPORT_TIMEOUT_MS, REPORT_TIMEOUT_MS) });
    this.#terminals = new HerdrPaneTerminals(new HerdrCli({ ...cli, timeoutMs: Math.min(opts.timeoutMs ?? TERMINAL_TIMEOUT_MS, TERMINAL_TIMEOUT_MS) }));
    this.#homeLabel = opts.homeWorkspaceLabel ?? "pi-shepherd";
  }

  async createPane(req: CreatePaneRequest): Promise<CreatedPane> {
    await this.#ensureReady(true);
    const cwd = path.resolve(req.cwd); // herdr passes --cwd to the server unexpanded
    const label = cliSafeLabel(req.label, req.agentId);
    let pane: PaneRecord;
    switch (req.placement) {
      case "tab":
        pane = await this.#tab(label, cwd);
        break;
      case "pane":
        pane = await this.#split(req.direction, cwd);
        break;
      case "workspace":
        pane = await this.#workspace(label, cwd);
        break;
      default:
        throw new ShepherdError("invalid_params", `unknown placement ${JSON.stringify(req.placement)}; use tab, pane or workspace`);
    }
    try {
      await this.#cli.request(["pane", "rename", pane.pane_id, markedPaneLabel(req.label, req.agentId)], "pane_info");
    } catch (e) {
      // An unmarked pane could never be closed by us later, so do not leave it behind.
      await this.#cli.request(["pane", "close", pane.pane_id], "ok").catch(() => undefined);
      throw e;
    }
    try {
      // herdr's CLI cannot start a pane with a program (only the socket's layout.apply can), so
      // the launcher is typed into the pane's shell, which stays after pi and keeps no exit
      // status: it runs under report-exit.sh, which writes pi's code or signal to its files.
      await this.runLauncher(pane.pane_id, req.command.reporting);
    } catch (e) {
      await this.#cli.request(["pane", "close", pane.pane_id], "ok").catch(() => undefined);
      throw e;
    }
    const created: CreatedPane = { paneId: pane.pane_id };
    if (this.#env.HERDR_ENV !== "1") {
      created.attachHint = `run \`herdr\` and open workspace ${pane.workspace_id} (pane ${pane.pane_id})`;
    }
    return created;
  }

  /** Types argv into the pane's shell as one line of single-quoted words, and presses Enter. */
  async runLauncher(paneId: string, argv: readonly string[]): Promise<void> {
    const line = shellLine(argv);
    await this.#ensureReady();
    await this.#cli.silent(["pane", "run", paneArg(paneId), line]);
  }

  async liveness(panes: readonly PaneRef[]): Promise<Map<string, PaneLiveness>> {
    const result = new Map<string, PaneLiveness>();
    if (panes.length === 0) return result;
    await this.#ensureReady();
    const listed = new Map(paneList(await this.#cli.request(["pane", "list"], "pane_list"), "pane list").map((p) => [p.pane_id, p]));
    for (const { paneId, agentId } of panes) {
      // A pane moved to another workspace is listed under a new id but its old id still
      // resolves, so only `pane get` may declare a pane gone. Either way the pane must still
      // carry this agent's mark: herdr reuses pane ids too.
      const pane = listed.get(paneId) ?? (await this.#paneByGet(paneId));
      // A shell stays in a herdr pane after pi: how pi ended is report-exit.sh's to say.
      result.set(agentId, { state: pane && carriesMark(pane.label, agentId) ? "alive" : "gone" });
    }
    return result;
  }

  async markedPanes(): Promise<PaneRef[]> {
    await this.#ensureReady();
    const panes = paneList(await this.#cli.request(["pane", "list"], "pane_list"), "pane list");
    const out: PaneRef[] = [];
    for (const p of panes) {
      const agentId = markOf(p.label);
      if (agentId) out.push({ paneId: p.pane_id, agentId });
    }
    return out;
  }

  async read(paneId: string, lines: number): Promise<string> {
    if (!Number.isFinite(lines) || lines < 1) {
      throw new ShepherdError("invalid_params", `lines must be a positive number, got ${String(lines)}`);
    }
    const version = await this.#ensureReady();
    // 0.8.0 wants the pane id first and `--opt value` forms.
    const n = String(Math.floor(lines));
    const text = await this.#cli.text(["pane", "read", paneArg(paneId), "--source", "recent-unwrapped", "--lines", n]);
    // Before 0.9.0 `recent` can come back empty while the output still fits the viewport (#3444);
    // then the viewport is all there is, and `visible` reads it.
    if (text.trim() !== "" || meetsFloor(version, RECENT_READS_FIXED)) return text;
    return this.#cli.text(["pane", "read", paneArg(paneId), "--source", "visible", "--lines", n]);
  }

  /**
   * The pane's label carries the mark, so it is renamed with the mark kept. The tab keeps the name
   * it was made with: the pane label is what herdr shows for the sheep.
   */
  async relabel(pane: PaneRef, label: string): Promise<void> {
    await this.#ensureReady();
    await this.#cli.request(["pane", "rename", pane.paneId, markedPaneLabel(label, pane.agentId)], "pane_info");
  }

  async close(paneId: string, agentId: string): Promise<undefined> {
    await this.#ensureReady();
    let pane: PaneRecord;
    try {
      pane = paneRecord((await this.#cli.request(["pane", "get", paneArg(paneId)], "pane_info")).pane, "pane get");
    } catch (e) {
      if (isHerdrCode(e, "pane_not_found")) return;
      throw e;
    }
    if (!carriesMark(pane.label, agentId)) {
      throw new ShepherdError(
        "not_owned",
        `herdr pane ${paneId} does not carry the mark of agent ${agentId} (its label is ${JSON.stringify(pane.label ?? "")}); pi-shepherd closes only panes it created. Close it in herdr yourself if it is no longer needed.`,
      );
    }
    try {
      await this.#cli.request(["pane", "close", paneId], "ok");
    } catch (e) {
      if (!isHerdrCode(e, "pane_not_found")) throw e;
    }
  }

  async agentStatus(paneId: string): Promise<string | undefined> {
    await this.#ensureReady();
    try {
      return agentStatusOf(await this.#cli.request(["agent", "get", paneArg(paneId)], "agent_info"), "agent get");
    } catch (e) {
      // No agent identity (yet) is normal for a freshly started sheep: nothing to display.
      if (isHerdrCode(e, "agent_not_found", "agent_pane_not_found", "pane_not_found")) return undefined;
      throw e;
    }
  }

  /**
   * A sandboxed sheep's state, told by the shepherd as the sheep itself tells it when it can
   * (src/sheep/herdr-state.ts, its report mode): the same source, so herdr shows either alike.
   * It does not probe the server first: one call, and its failure is the caller's to tell.
   */
  async reportState(paneId: string, state: ReportedState): Promise<void> {
    this.#seq = Math.max(this.#seq + 1, Date.now() * 1000);
    const who = ["--source", REPORT_SOURCE, "--agent", "pi"];
    await this.#reportCli.silent(["pane", "report-agent", paneArg(paneId), ...who, "--state", state, "--seq", String(this.#seq)]);
  }

  /** A poll of the pane's visible screen (herdr has no output stream): pane-terminal.ts. */
  async watch(pane: PaneRef, sink: PaneSink): Promise<PaneWatch> {
    await this.#ensureReady();
    return this.#terminals.watch(pane, sink);
  }

  async sendKeys(pane: PaneRef, text: string): Promise<void> {
    await this.#ensureReady();
    await this.#terminals.sendKeys(pane, text);
  }

  /**
   * The binary's version (>= the floor) and its server's protocol, probed once and again after a
   * call found the server gone or mismatched: with a server of another protocol every herdr command
   * fails, so this one says why (both versions and the fix). With `start`, a shepherd outside herdr
   * starts a server when none runs; inside herdr the server is the user's, and only they start it.
   */
  #ensureReady(start = false): Promise<HerdrVersion> {
    if (!this.#ready) {
      const check = (async () => {
        let probe = await probeHerdr(this.#cli);
        if (start && probe.server && !probe.server.running && this.#env.HERDR_ENV !== "1") {
          await startHerdrServer(this.#cli, this.#env);
          probe = await probeHerdr(this.#cli);
        }
        assertCompatible(probe, this.#cli.bin);
        return probe;
      })();
      const ready = check.then((probe) => {
        // No server yet is no answer to keep: the calls say server_not_running, and the next probes again.
        if (probe.server && !probe.server.running && this.#ready === ready) this.#ready = undefined;
        return probe.client;
      });
      // A failed check is retried on the next call, so installing or upgrading herdr
      // does not require restarting pi.
      ready.catch(() => {
        if (this.#ready === ready) this.#ready = undefined;
      });
      this.#ready = ready;
    }
    return this.#ready;
  }

  async #paneByGet(id: string): Promise<PaneRecord | undefined> {
    try {
      return paneRecord((await this.#cli.request(["pane", "get", paneArg(id)], "pane_info")).pane, "pane get");
    } catch (e) {
      if (isHerdrCode(e, "pane_not_found")) return undefined;
      throw e;
    }
  }

  async #tab(label: string, cwd: string): Promise<PaneRecord> {
    const ws = this.#env.HERDR_WORKSPACE_ID;
    if (ws) return this.#tabIn(ws, label, cwd);
    return this.#tabInHome(label, cwd);
  }

  async #tabIn(ws: string, label: string, cwd: string): Promise<PaneRecord> {
    const r = await this.#cli.request(["tab", "create", "--workspace", ws, "--cwd", cwd, "--label", label, "--no-focus"], "tab_created");
    return paneRecord(r.root_pane, "tab create");
  }

  /**
   * Without a workspace id, `tab create` would use whatever workspace the UI shows (or fail
   * on a bare server), so we create our own workspace once; its root pane hosts the first
   * sheep and later sheep get tabs beside it.
   */
  async #tabInHome(label: string, cwd: string): Promise<PaneRecord> {
    const home = this.#home;
    if (home) {
      const ws = await home.catch(() => undefined);
      if (ws !== undefined) {
        try {
          return await this.#tabIn(ws, label, cwd);
        } catch (e) {
          // Closing its last pane closed it; make a new one.
          if (!isHerdrCode(e, "workspace_not_found")) throw e;
        }
      }
      if (this.#home === home) this.#home = undefined;
      else if (this.#home) return this.#tabInHome(label, cwd); // a concurrent call replaced it
    }
    const created = this.#cli.request(["workspace", "create", "--cwd", cwd, "--label", this.#homeLabel, "--no-focus"], "workspace_created");
    const id = created.then((r) => workspaceId(r, "workspace create"));
    id.catch(() => undefined); // the caller below sees the failure; later calls start over
    this.#home = id;
    return paneRecord((await created).root_pane, "workspace create");
  }

  async #split(direction: string, cwd: string): Promise<PaneRecord> {
    if (direction !== "right" && direction !== "down") {
      throw new ShepherdError("invalid_params", `unknown direction ${JSON.stringify(direction)}; use right or down`);
    }
    const own = this.#env.HERDR_PANE_ID;
    if (!own) {
      // Without a target herdr splits the pane its UI has focused, which may be the user's.
      throw new ShepherdError(
        "invalid_params",
        'placement "pane" splits the herdr pane pi runs in, but HERDR_PANE_ID is not set (pi is not running inside a herdr pane). Use placement "tab" or "workspace".',
      );
    }
    const r = await this.#cli.request(["pane", "split", "--pane", own, "--direction", direction, "--cwd", cwd, "--no-focus"], "pane_info");
    return paneRecord(r.pane, "pane split");
  }

  async #workspace(label: string, cwd: string): Promise<PaneRecord> {
    const r = await this.#cli.request(["workspace", "create", "--cwd", cwd, "--label", label, "--no-focus"], "workspace_created");
    return paneRecord(r.root_pane, "workspace create");
  }
}

/** Pane ids come from herdr, but one that looked like an option would change the command. */
function paneArg(id: string): string {
  if (!/^[^\s-]\S*$/.test(id)) throw new ShepherdError("invalid_params", `not a herdr pane id: ${JSON.stringify(id)}`);
  return id;
}
