import { ShepherdError } from "../../core/errors.js";
import type { CreatedPane, CreatePaneRequest, PaneLiveness, PaneRef, Runtime } from "../../ports/runtime.js";
import { shellLine, shellQuote } from "../shell-line.js";
import { TmuxCli, TmuxError, type TmuxCliOptions } from "./tmux-cli.js";

export interface TmuxRuntimeOptions extends TmuxCliOptions {
  /** Detached session that holds the sheep when the shepherd is not inside tmux. */
  sessionName?: string;
}

const MARK = "@pi_shepherd_agent";

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

export class TmuxRuntime implements Runtime {
  readonly name = "tmux" as const;
  private readonly cli: TmuxCli;
  private readonly env: NodeJS.ProcessEnv;
  private readonly sessionName: string;
  /** Creating the shared detached session must not race with itself. */
  private creating: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: TmuxRuntimeOptions = {}) {
    this.cli = new TmuxCli(o);
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
    const created = this.creating.then(() => this.create(req));
    this.creating = created.catch(() => undefined);
    const { marked, ...pane } = await created;
    if (marked) return pane;
    await this.cli.run(["set-option", "-p", "-t", pane.paneId, MARK, req.agentId]).catch(async (e) => {
      await this.cli.run(["kill-pane", "-t", pane.paneId]).catch(() => undefined);
      throw this.wrap(e, "could not mark the new pane");
    });
    return pane;
  }

  /**
   * Windows and sessions are created and marked by one tmux process: a new window goes after
   * the last one (-a after {end}), so "{end}" names it to the next command of the same list,
   * which the server runs before any other client's. Splits are marked by a second process.
   */
  private async create(req: CreatePaneRequest): Promise<CreatedPane & { marked: boolean }> {
    const fmt = ["-P", "-F", "#{pane_id}"];
    const name = windowName(req.label);
    const caller = this.callerPane;
    const markThen = (target: string) => [";", "set-option", "-p", "-t", target, MARK, req.agentId];
    const newWindow = (session: string) =>
      this.runMarked(["new-window", "-d", "-a", "-t", `${session}:{end}`, "-n", name, "-c", tmuxLiteral(req.cwd), ...fmt, ...markThen(`${session}:{end}`)]);
    const newSession = (session: string) =>
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
        ...markThen(`=${session}:`),
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
        return { paneId: (await this.cli.run(["split-window", "-d", dir, "-t", caller, "-c", tmuxLiteral(req.cwd), ...fmt])).trim(), marked: false };
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
      // asking first, which cost a tmux process on every start.
      const added = await newWindow(`=${this.sessionName}`).catch((e: unknown) => {
        if (e instanceof TmuxError && (e.noServer || e.noSuchTarget || /can't find session/.test(e.stderr))) return undefined;
        throw e;
      });
      if (added !== undefined) return { paneId: added, attachHint: this.attachHint(this.sessionName), marked: true };
      return { paneId: await newSession(this.sessionName), attachHint: this.attachHint(this.sessionName), marked: true };
    } catch (e) {
      throw this.wrap(e, "could not create a pane");
    }
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

  async runLauncher(paneId: string, argv: readonly string[]): Promise<void> {
    try {
      // One tmux process for both: a lone ";" argument separates tmux commands, and the line
      // cannot end in ";" (shellLine quotes every word, so it ends in a quote).
      await this.cli.run(["send-keys", "-t", paneId, "-l", "--", shellLine(argv), ";", "send-keys", "-t", paneId, "Enter"]);
    } catch (e) {
      throw this.wrap(e, "could not type the launcher command");
    }
  }

  async liveness(panes: readonly PaneRef[]): Promise<Map<string, PaneLiveness>> {
    const result = new Map<string, PaneLiveness>();
    let marks: Map<string, string>;
    try {
      marks = await this.marks();
    } catch (e) {
      if (e instanceof TmuxError && e.noServer) marks = new Map();
      else throw this.wrap(e, "could not list panes");
    }
    for (const { paneId, agentId } of panes) result.set(agentId, marks.get(paneId) === agentId ? "alive" : "gone");
    return result;
  }

  async markedPanes(): Promise<PaneRef[]> {
    let marks: Map<string, string>;
    try {
      marks = await this.marks();
    } catch (e) {
      if (e instanceof TmuxError && e.noServer) return [];
      throw this.wrap(e, "could not list panes");
    }
    return [...marks].filter(([, agentId]) => agentId !== "").map(([paneId, agentId]) => ({ paneId, agentId }));
  }

  /** Every pane of the server with its ownership mark, in one tmux call. */
  private async marks(): Promise<Map<string, string>> {
    const rows = (await this.cli.run(["list-panes", "-a", "-F", `#{pane_id} #{${MARK}}`])).split("\n");
    const marks = new Map<string, string>();
    for (const row of rows) {
      const space = row.indexOf(" ");
      if (space > 0) marks.set(row.slice(0, space), row.slice(space + 1).trim());
    }
    return marks;
  }

  async read(paneId: string, lines: number): Promise<string> {
    const n = Math.max(1, Math.min(10_000, Math.floor(lines)));
    try {
      const text = await this.cli.run(["capture-pane", "-p", "-J", "-t", paneId, "-S", `-${n}`]);
      const all = text.replace(/\s+$/, "").split("\n");
      return all.slice(-n).join("\n");
    } catch (e) {
      throw this.wrap(e, "could not read the pane");
    }
  }

  async close(paneId: string, agentId: string): Promise<void> {
    let mark: string | undefined;
    try {
      // list-panes reads pane options reliably; the mark is checked before anything is killed
      mark = (await this.marks()).get(paneId);
      if (mark === undefined) return;
    } catch (e) {
      if (e instanceof TmuxError && (e.noServer || e.noSuchTarget)) return;
      throw this.wrap(e, "could not inspect the pane before closing it");
    }
    if (mark !== agentId) {
      // Pane ids are reused after a tmux server restart: never close a pane that is not marked as ours.
      throw new ShepherdError("not_owned", `pane ${paneId} is not the pane this shepherd created for ${agentId}; it was left alone.`);
    }
    try {
      await this.cli.run(["kill-pane", "-t", paneId]);
    } catch (e) {
      if (e instanceof TmuxError && (e.noServer || e.noSuchTarget)) return;
      throw this.wrap(e, "could not close the pane");
    }
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
