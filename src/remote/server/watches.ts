/**
 * The agent's terminals: watches of its own runtime's panes, each under the id the shepherd chose,
 * whose output goes to the shepherd as term-output events. Bounded: at most MAX_REMOTE_WATCHES at
 * once, each event's chunk capped, and a watch whose output the link cannot carry away (more than
 * MAX_TERM_BACKLOG_BYTES unsent) is ended rather than buffered. endAll() leaves nothing running:
 * every watch closed and the runtime's pipes taken down, awaited.
 */
import { ShepherdError } from "../../domain/errors.ts";
import type { PaneRef, PaneScreen, PaneWatch, Runtime } from "../../ports/runtime.ts";
import { endLine, MAX_REMOTE_WATCHES, MAX_TERM_BACKLOG_BYTES, outputLines } from "../rpc/terminal-event.ts";
import type { TermSide } from "../rpc/wire/terminal.ts";

interface Held {
  /** Undefined while the runtime is still opening it. */
  watch?: PaneWatch;
  /** Set once it ended (unwatched, or by itself): a watch still opening is closed as it arrives. */
  over?: boolean;
}

export class AgentWatches implements TermSide {
  private readonly held = new Map<number, Held>();

  constructor(
    private readonly runtime: () => Runtime,
    /** Writes one line to the shepherd. */
    private readonly write: (line: string) => void,
    /** Bytes written and not yet taken by the link. */
    private readonly backlog: () => number = () => 0,
  ) {}

  get size(): number {
    return this.held.size;
  }

  async watch(pane: PaneRef, id: number): Promise<PaneScreen> {
    const runtime = this.runtime();
    if (!runtime.watch) throw new ShepherdError("runtime_unavailable", `${runtime.name} on this host cannot stream a pane's output; look at the sheep there.`);
    if (this.held.has(id)) throw new ShepherdError("invalid_params", `term.watch: watch ${id} is already open.`);
    if (this.held.size >= MAX_REMOTE_WATCHES)
      throw new ShepherdError("runtime_unavailable", `${MAX_REMOTE_WATCHES} terminals are open on this host; close one first.`);
    const entry: Held = {};
    this.held.set(id, entry);
    const end = (why: string) => {
      if (this.held.get(id) !== entry || entry.over) return;
      this.drop(id, entry);
      this.write(endLine(id, why));
    };
    let watch: PaneWatch;
    try {
      watch = await runtime.watch(pane, {
        output: (chunk) => {
          if (entry.over) return;
          if (this.backlog() > MAX_TERM_BACKLOG_BYTES) {
            end("the link to this host is too slow for the pane's output; open the terminal again.");
            return;
          }
          for (const line of outputLines(id, chunk)) this.write(line);
        },
        end,
      });
    } catch (e) {
      if (this.held.get(id) === entry) this.held.delete(id);
      throw e;
    }
    entry.watch = watch;
    // Unwatched (or the agent ending) while it opened: closed now, and nothing of it answered.
    if (entry.over) {
      watch.close();
      throw new ShepherdError("aborted", `watch ${id} was closed while it opened.`);
    }
    return watch.screen;
  }

  unwatch(id: number): void {
    const entry = this.held.get(id);
    if (entry) this.drop(id, entry);
  }

  async keys(pane: PaneRef, text: string): Promise<void> {
    const runtime = this.runtime();
    if (!runtime.sendKeys) throw new ShepherdError("runtime_unavailable", `${runtime.name} on this host cannot type into a pane; use it there.`);
    await runtime.sendKeys(pane, text);
  }

  /** The link ended: every watch closed, and the runtime's pipes taken down before this resolves. */
  async endAll(runtime: Runtime | undefined): Promise<void> {
    for (const [id, entry] of [...this.held]) this.drop(id, entry);
    await runtime?.endWatches?.();
  }

  private drop(id: number, entry: Held): void {
    entry.over = true;
    this.held.delete(id);
    entry.watch?.close();
  }
}
