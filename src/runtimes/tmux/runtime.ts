import { setTimeout as sleep } from "node:timers/promises";
import { MAX_SCREEN_LINES } from "../../domain/bounds.ts";
import { ShepherdError } from "../../domain/errors.ts";
import { isWellFormedId } from "../../domain/ids.ts";
import type { CreatedPane, CreatePaneRequest, Direction, PaneLiveness, PaneRef, PaneSink, PaneWatch, Placement, Runtime } from "../../ports/runtime.ts";
import { shellQuote } from "../shell-line.ts";
import { PaneTerminals } from "./pane-terminal.ts";
import { MARK, PANE_TABLE_ARGS, type PaneRow, parsePaneTable, reportsExit } from "./pane-table.ts";
import { TmuxCli, TmuxError, type TmuxCliOptions } from "./tmux-cli.ts";

export interface TmuxRuntimeOptions extends TmuxCliOptions {
  /** Detached session that holds the sheep when the shepherd is not inside tmux. */
  sessionName?: string;
}

/**
 * Names shown in tmux's status line; tmux may expand "#" sequences in them, so only a plain
 * subset of the user's label is used there. The full label lives in our records.
 */
function windowName(label: string): string {
  const safe = label
    .replace(/[^A-Za-z0-9._ -]/g, "_")
    .slice(0, 40)
    .trim();
  return safe || "sheep";
}

/**
 * User text as one tmux argument that tmux reads literally: tmux expands "#" formats in -c (so
 * "#(cmd)" in a directory name would run a command) and ends a command at an argument that
 * ends in ";" unless that is written "\;".
 */
export function tmuxLiteral(arg: string): string {
  const escaped = arg.replaceAll("#", "##");
  return escaped.endsWith(";") ? `${escaped.slice(0, -1)}\\;` : escaped;
}

/** One word of a pane's command, as tmux reads it: it ends its command at a word ending in ";". */
function tmuxArgument(arg: string): string {
  return arg.endsWith(";") ? `${arg.slice(0, -1)}\\;` : arg;
}

/** The commands, for the end of a command list, that keep a pane when its program ends. */
function keep(target: string): string[] {
  return ["set-option", "-p", "-t", target, "remain-on-exit", "on"];
}

/** Asks the tmux server to collect its children's statuses; false when it cannot be signalled. */
function nudge(serverPid: number): boolean {
  if (!Number.isSafeInteger(serverPid) || serverPid <= 1) return false;
  try {
    process.kill(serverPid, "SIGCHLD");
    return true;
  } catch {
    return false;
  }
}

export class TmuxRuntime implements Runtime {
  readonly name = "tmux" as const;
  private readonly cli: TmuxCli;
  private readonly env: NodeJS.ProcessEnv;
  private readonly sessionName: string;
  /** Creating the shared detached session must not race with itself. */
  private creating: Promise<unknown> = Promise.resolve();
  /** Whether this tmux names the signal that ended a pane's program (asked once). */
  private reporting: Promise<boolean> | undefined;
  private readonly terminals: PaneTerminals;

  constructor(private readonly o: TmuxRuntimeOptions = {}) {
    this.cli = new TmuxCli(o);
    this.terminals = new PaneTerminals(this.cli);
    this.env = o.env ?? process.env;
    this.sessionName = o.sessionName ?? "pi-shepherd";
  }

  /** The shepherd's own pane, when it runs inside the tmux server we talk to. */
  get callerPane(): string | undefined {
    const pane = this.env.TMUX_PANE;
    const tmux = this.env.TMUX;
    if (!pane || !tmux) return undefined;
    if (this.o.socket && tmux.split(",")[0] !== this.o.socket) return undefined;
    return pane;
  }

  async createPane(req: CreatePaneRequest): Promise<CreatedPane> {
    const argv = (await this.reportsExit()) ? req.command.argv : req.command.reporting;
    const created = this.creating.then(() => this.create(req, argv));
    this.creating = created.catch(() => undefined);
    const { marked, ...pane } = await created;
    if (marked) return pane;
    await this.cli.run(["set-option", "-p", "-t", pane.paneId, MARK, req.agentId, ";", ...keep(pane.paneId)]).catch(async (e) => {
      await this.cli.run(["kill-pane", "-t", pane.paneId]).catch(() => undefined);
      throw this.wrap(e, "could not mark the new pane");
    });
    return pane;
  }

  private reportsExit(): Promise<boolean> {
    this.reporting ??= this.cli.run(["-V"]).then(reportsExit, () => {
      this.reporting = undefined;
      return true; // tmux will speak for itself when the pane is made
    });
    return this.reporting;
  }

  /**
   * The sheep's program is the pane's own command (argv after "--", so no shell runs first and
   * none is left behind), and remain-on-exit keeps the pane when it ends: pi's last words stay
   * on screen, and tmux keeps its exit status for liveness. Windows and sessions are created,
   * marked and kept by one tmux process: a new window goes after the last one (-a after {end}),
   * so "{end}" names it to the next commands of the same list, which the server runs before it
   * reaps any child or serves another client. A split cannot be named that way, so it is marked
   * by a second process; a program that died within those few milliseconds takes its pane with
   * it, and the start fails for want of a mark.
   */
  private async create(req: CreatePaneRequest, argv: readonly string[]): Promise<CreatedPane & { marked: boolean }> {
    const fmt = ["-P", "-F", "#{pane_id}"];
    const name = windowName(req.label);
    const caller = this.callerPane;
    const command = ["--", ...argv.map(tmuxArgument)];
    const markThen = (target: string) => [";", "set-option", "-p", "-t", target, MARK, req.agentId, ";", ...keep(target)];
    const newWindow = (session: string) =>
      this.runMarked([
        "new-window",
        "-d",
        "-a",
        "-t",
        `${session}:{end}`,
        "-n",
        name,
        "-c",
        tmuxLiteral(req.cwd),
        ...fmt,
        ...command,
        ...markThen(`${session}:{end}`),
      ]);
    const newSession = (session: string, after: readonly string[] = []) =>
      this.runMarked([
        "new-session",
        "-d",
        "-s",
        session,
        "-n",
        name,
        "-c",
        tmuxLiteral(req.cwd),
        "-x",
        "200",
        "-y",
        "50",
        ...fmt,
        ...command,
        ...markThen(`=${session}:`),
        ...after,
      ]);
    try {
      if (req.placement === "pane") {
        if (!caller) {
          throw new ShepherdError(
            "invalid_params",
            'placement "pane" splits the shepherd\'s own pane, which needs the shepherd to run inside tmux; use placement "tab" or "workspace".',
          );
        }
        const dir = req.direction === "down" ? "-v" : "-h";
        return {
          paneId: (await this.cli.run(["split-window", "-d", dir, "-t", caller, "-c", tmuxLiteral(req.cwd), ...fmt, ...command])).trim(),
          marked: false,
        };
      }
      if (req.placement === "workspace") {
        const session = await this.freeSessionName(`${this.sessionName}-${name.replace(/[ .:]/g, "_")}`);
        return { paneId: await newSession(session), attachHint: this.attachHint(session), marked: true };
      }
      if (caller) {
        const session = (await this.cli.run(["display-message", "-p", "-t", caller, "#{session_id}"])).trim();
        return { paneId: await newWindow(session), marked: true };
      }
      // The home session exists for every sheep but the first: try it straight away instead of
      // asking first, which cost a tmux process on every start. A server whose last pane just
      // closed (a sheep closed a moment before, off a delegate's path) is going away under the
      // call: it answers "no current target" or drops the client, and the next try starts anew.
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.homeWindow(newWindow, newSession);
        } catch (e) {
          if (attempt >= 3 || !(e instanceof TmuxError && serverGoingAway(e))) throw e;
          await new Promise((r) => setTimeout(r, 50 * attempt));
        }
      }
    } catch (e) {
      throw this.wrap(e, "could not create a pane");
    }
  }

  /** A window in the home session, or the session (and a server of ours) when there is none. */
  private async homeWindow(
    newWindow: (session: string) => Promise<string>,
    newSession: (session: string, after?: readonly string[]) => Promise<string>,
  ): Promise<CreatedPane & { marked: boolean }> {
    let serverStarted = false;
    const added = await newWindow(`=${this.sessionName}`).catch((e: unknown) => {
      serverStarted = e instanceof TmuxError && e.noServer;
      if (e instanceof TmuxError && (e.noServer || e.noSuchTarget || /can't find session/.test(e.stderr))) return undefined;
      throw e;
    });
    if (added !== undefined) return { paneId: added, attachHint: this.attachHint(this.sessionName), marked: true };
    // A server this shepherd starts holds only sheep: it gets the keys pi asks tmux for, in the
    // same command list, before pi can ask, so no sheep greets a person with pi's "extended-keys
    // is off" warning. A person's own server (inside tmux, or one already running) keeps its
    // options; -q, because tmux before 3.2 has no such option.
    const keys = serverStarted ? [";", "set-option", "-q", "-s", "extended-keys", "on"] : [];
    return { paneId: await newSession(this.sessionName, keys), attachHint: this.attachHint(this.sessionName), marked: true };
  }

  /** A create-and-mark list: when the mark failed after the pane was made, the pane goes. */
  private async runMarked(args: readonly string[]): Promise<string> {
    try {
      return (await this.cli.run(args)).trim();
    } catch (e) {
      const made = e instanceof TmuxError ? /%\d+/.exec(e.stdout)?.[0] : undefined;
      if (!made) throw e;
      await this.cli.run(["kill-pane", "-t", made]).catch(() => undefined);
      throw this.wrap(e, "could not mark the new pane");
    }
  }

  async liveness(panes: readonly PaneRef[]): Promise<Map<string, PaneLiveness>> {
    let table: Map<string, PaneRow>;
    try {
      table = await this.paneTable();
      // tmux may miss the SIGCHLD of a pane's program (tmux issue 311: libutempter's own
      // handler can take it while a pane closes), and then shows the pane dead with no status
      // until the next one. A SIGCHLD sent to the server makes it collect the status now.
      const waiting = panes.map((p) => table.get(p.paneId)).find((r) => r?.dead && !r.exit);
      if (waiting && nudge(waiting.serverPid)) {
        await sleep(20);
        table = await this.paneTable();
      }
    } catch (e) {
      if (e instanceof TmuxError && e.noServer) table = new Map();
      else throw this.wrap(e, "could not list panes");
    }
    const result = new Map<string, PaneLiveness>();
    for (const { paneId, agentId } of panes) {
      const row = table.get(paneId);
      if (row?.mark !== agentId) result.set(agentId, { state: "gone" });
      // Dead with its status still uncollected: ended, but how is not known yet; the next look
      // will say (and the pid the sheep reported is a witness if it never does).
      else if (row.dead && row.exit) result.set(agentId, { state: "exited", exit: row.exit });
      else result.set(agentId, { state: "alive" });
    }
    return result;
  }

  async markedPanes(): Promise<PaneRef[]> {
    let table: Map<string, PaneRow>;
    try {
      table = await this.paneTable();
    } catch (e) {
      if (e instanceof TmuxError && e.noServer) return [];
      throw this.wrap(e, "could not list panes");
    }
    return [...table].filter(([, row]) => row.mark !== "").map(([paneId, row]) => ({ paneId, agentId: row.mark }));
  }

  /** Every pane of the server with its mark and how its program ended, in one tmux call. */
  private async paneTable(): Promise<Map<string, PaneRow>> {
    return parsePaneTable(await this.cli.run(PANE_TABLE_ARGS));
  }

  async read(paneId: string, lines: number): Promise<string> {
    const n = Math.max(1, Math.min(MAX_SCREEN_LINES, Math.floor(lines)));
    try {
      const text = await this.cli.run(["capture-pane", "-p", "-J", "-t", paneId, "-S", `-${n}`]);
      const all = text.replace(/\s+$/, "").split("\n");
      // remain-on-exit writes its "Pane is dead" line on the screen's last row: the blank rows
      // between it and the program's last words are no text.
      const dead = all.length > 1 && /^Pane is dead\b/.test(all[all.length - 1]!);
      const words = dead ? [...all.slice(0, -1).join("\n").trimEnd().split("\n"), all[all.length - 1]!] : all;
      return words.slice(-n).join("\n");
    } catch (e) {
      throw this.wrap(e, "could not read the pane");
    }
  }

  async watch(pane: PaneRef, sink: PaneSink): Promise<PaneWatch> {
    try {
      return await this.terminals.watch(pane, sink);
    } catch (e) {
      throw this.wrap(e, "could not watch the pane");
    }
  }

  async sendKeys(pane: PaneRef, text: string): Promise<void> {
    try {
      await this.terminals.sendKeys(pane, text);
    } catch (e) {
      throw this.wrap(e, "could not type into the pane");
    }
  }

  endWatches(): Promise<void> {
    return this.terminals.closeAll();
  }

  /** A split shares the window with the user's own panes: only a window made for the sheep is renamed. */
  async relabel(pane: PaneRef, label: string, placement: Placement): Promise<void> {
    if (placement === "pane") return;
    try {
      await this.cli.run(["rename-window", "-t", pane.paneId, windowName(label)]);
    } catch (e) {
      throw this.wrap(e, "could not rename the sheep's window");
    }
  }

  /**
   * Into a split of the shepherd's pane (join-pane), or out into a window of its own in the same
   * session (break-pane); the window it leaves, holding nothing else, goes. Only a pane that
   * carries this sheep's mark is moved: the server checks it in the same command.
   */
  async place(pane: PaneRef, placement: "pane" | "tab", direction: Direction): Promise<void> {
    if (!/^%\d+$/.test(pane.paneId) || !isWellFormedId(pane.agentId, "agent")) {
      throw new ShepherdError("invalid_params", `not a sheep's tmux pane: ${JSON.stringify(pane.paneId)}`);
    }
    const caller = this.callerPane;
    if (placement === "pane" && !(caller && /^%\d+$/.test(caller))) {
      throw new ShepherdError(
        "invalid_params",
        'placement "pane" splits the shepherd\'s own pane, which needs the shepherd to run inside tmux; use placement "tab" or "workspace".',
      );
    }
    const move = placement === "pane" ? `join-pane -d ${direction === "down" ? "-v" : "-h"} -s ${pane.paneId} -t ${caller}` : `break-pane -d -s ${pane.paneId}`;
    let out: string;
    try {
      out = await this.cli.run(["if-shell", "-F", "-t", pane.paneId, `#{==:#{${MARK}},${pane.agentId}}`, move, "display-message -p no"]);
    } catch (e) {
      throw this.wrap(e, "could not move the sheep's pane");
    }
    if (out.trim() === "no") throw new ShepherdError("runtime_error", `pane ${pane.paneId} is not sheep ${pane.agentId}'s; nothing was moved.`);
  }

  async close(paneId: string, agentId: string): Promise<boolean> {
    // The usual case in one tmux process: the server checks the mark in the very command that kills
    // the pane, and kill-pane returns once it is gone. Anything else takes the careful way below.
    if (/^%\d+$/.test(paneId) && isWellFormedId(agentId, "agent")) {
      try {
        const out = await this.cli.run(["if-shell", "-F", "-t", paneId, `#{==:#{${MARK}},${agentId}}`, `kill-pane -t ${paneId}`, "display-message -p no"]);
        if (out.trim() === "") return true;
      } catch {
        // the careful way says what went wrong
      }
    }
    let mark: string | undefined;
    try {
      // list-panes reads pane options reliably; the mark is checked before anything is killed
      mark = (await this.paneTable()).get(paneId)?.mark;
      if (mark === undefined) return true;
    } catch (e) {
      if (e instanceof TmuxError && (e.noServer || e.noSuchTarget)) return true;
      throw this.wrap(e, "could not inspect the pane before closing it");
    }
    if (mark !== agentId) {
      // Pane ids are reused after a tmux server restart: never close a pane that is not marked as ours.
      throw new ShepherdError("not_owned", `pane ${paneId} is not the pane this shepherd created for ${agentId}; it was left alone.`);
    }
    try {
      await this.cli.run(["kill-pane", "-t", paneId]);
    } catch (e) {
      if (e instanceof TmuxError && (e.noServer || e.noSuchTarget)) return true;
      throw this.wrap(e, "could not close the pane");
    }
    return true;
  }

  private async hasSession(name: string): Promise<boolean> {
    try {
      await this.cli.run(["has-session", "-t", `=${name}`]);
      return true;
    } catch (e) {
      if (e instanceof TmuxError && (e.noServer || e.noSuchTarget || /can't find session/.test(e.stderr))) return false;
      throw e;
    }
  }

  private async freeSessionName(base: string): Promise<string> {
    for (let n = 1; ; n++) {
      const name = n === 1 ? base : `${base}-${n}`;
      if (!(await this.hasSession(name))) return name;
    }
  }

  private attachHint(session: string): string {
    const sock = this.o.socket ? ` -S ${shellQuote(this.o.socket)}` : "";
    return `tmux${sock} attach -t ${shellQuote(session)}`;
  }

  private wrap(e: unknown, what: string): Error {
    if (e instanceof ShepherdError) return e;
    if (e instanceof TmuxError) {
      if (e.noServer) return new ShepherdError("runtime_unavailable", `${what}: the tmux server is not running (${e.stderr.trim()}).`);
      return new ShepherdError("runtime_error", `${what}: ${e.message}`);
    }
    const err = e as NodeJS.ErrnoException;
    if (err?.code === "ENOENT") {
      return new ShepherdError(
        "runtime_unavailable",
        `${what}: tmux is not installed; install it (e.g. apt-get install tmux, brew install tmux) or run inside herdr.`,
      );
    }
    return new ShepherdError("runtime_error", `${what}: ${String(err?.message ?? e)}`);
  }
}

/** tmux's words for a server that exits under the call (its last pane closed a moment before). */
function serverGoingAway(e: TmuxError): boolean {
  return e.noServer || e.noSuchTarget || /no current target|server exited|lost server|can't find session/i.test(e.stderr);
}
