/**
 * The runtime port: the few things the shepherd needs from a terminal multiplexer.
 * Adapters (tmux, herdr) implement it; src/core depends only on this shape.
 */

export type Placement = "tab" | "pane" | "workspace";
export type Direction = "right" | "down";
export type RuntimeName = "tmux" | "herdr";

export interface CreatePaneRequest {
  /** Our agent id; adapters mark the pane with it so ownership can be checked before closing. */
  agentId: string;
  placement: Placement;
  direction: Direction;
  cwd: string;
  /** Free text chosen by the user: adapters must never let it reach a shell or a format string. */
  label: string;
  /** What the pane runs. */
  command: PaneCommand;
}

/**
 * The sheep's program, as argv chosen by the package (absolute paths, nothing from the user):
 * adapters run it without a shell where the multiplexer can, and quote every element where it
 * can only type a line into one.
 */
export interface PaneCommand {
  /** pi in the launcher's own process: for a multiplexer that reports how the pane's process ended. */
  argv: readonly string[];
  /** The same under a small POSIX sh that writes pi's exit code or signal to the sheep's files: for one that cannot. */
  reporting: readonly string[];
}

export interface CreatedPane {
  paneId: string;
  /** The multiplexer that made it, where it is not this runtime's own (a remote host's). */
  runtime?: RuntimeName;
  /** How a person can look at the pane, e.g. "tmux -S /x attach -t pi-shepherd". */
  attachHint?: string;
}

/**
 * A sheep's pane as the multiplexer sees it: its program running, ended with the pane still
 * there (pi's last words on screen; code or signal when the multiplexer knows them), or gone.
 */
export type PaneLiveness = { state: "alive" } | { state: "exited"; exit: ExitStatus } | { state: "gone" };

/** How a process ended: a code, or the name of the signal that killed it ("SIGKILL"); null where unknown. */
export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

/** What a sheep is doing, as a multiplexer that shows it can be told (display only). */
export type ReportedState = "idle" | "working" | "blocked";

/** A sheep's pane as the core knows it: pane ids are reused, so the agent id is the identity. */
export interface PaneRef {
  paneId: string;
  agentId: string;
}

/** A pane's screen as a terminal redraws it: its rows with their colours (escape sequences), its size, its cursor (0-based). */
export interface PaneScreen {
  text: string;
  cols: number;
  rows: number;
  cursorX: number;
  cursorY: number;
}

/** Where a watched pane's output goes, as the bytes its program wrote. */
export interface PaneSink {
  output(chunk: Buffer): void;
  /** The watch ended by itself (the pane went, the pipe broke): why, in a sentence. */
  end(why: string): void;
}

/** A pane being watched: its screen when the watch began; close() stops it (once is enough, twice is harmless). */
export interface PaneWatch {
  readonly screen: PaneScreen;
  close(): void;
}

export interface Runtime {
  readonly name: RuntimeName;
  /**
   * Creates an unfocused pane, marked as this agent's, running `command`. Never selects or
   * focuses anything. A pane that could not be marked or started is closed again before this
   * throws.
   */
  createPane(req: CreatePaneRequest): Promise<CreatedPane>;
  /**
   * Liveness of many sheep in one multiplexer call where the multiplexer allows it, keyed by
   * agentId. Anything but "gone" only when the pane exists AND carries that agent's mark, read
   * in the same call: a pane id that came back with a new server (tmux numbers from %0 again)
   * or a new herdr session is someone else's pane. "exited" where the multiplexer keeps a pane
   * whose program ended and says so. A transient error must throw, never report "gone"; only a
   * multiplexer whose server is not there at all makes every pane gone.
   */
  liveness(panes: readonly PaneRef[]): Promise<Map<string, PaneLiveness>>;
  /**
   * Every pane that carries a sheep's mark, whichever shepherd made it: the doctor compares
   * them with the records to find orphans. A server that is not running has none.
   */
  markedPanes(): Promise<PaneRef[]>;
  /**
   * Panes on hosts that carry a sheep's mark and that this machine started (its own mark on the
   * start), each with its host and the shepherd that started it, pane ids as the core holds them;
   * hosts that do not answer tell of none. Which of them no record knows is the caller's to tell.
   */
  hostPanes?(): Promise<(PaneRef & { host: string; owner: string })[]>;
  /** Recent text of the pane, oldest line first. */
  read(paneId: string, lines: number): Promise<string>;
  /**
   * Closes a pane this shepherd created. Closing a pane that is already gone is not an error.
   * Resolves true when the pane is known to be gone by then (nobody needs to ask again).
   */
  close(paneId: string, agentId: string): Promise<boolean | undefined>;
  /**
   * Names a sheep's pane (and the window or tab made for it) after its new label, when a start
   * takes a sheep of the warm pool. A placement of "pane" shares a window with others: only
   * the pane is named then.
   */
  relabel?(pane: PaneRef, label: string, placement: Placement): Promise<void>;
  /**
   * Moves a running sheep's pane to where a placement puts it: "pane" into a split of the
   * shepherd's own pane, "tab" out into a window of its own. The warm pool boots a sheep for
   * placement "pane" in a window of its own (it never takes room in the shepherd's window) and
   * moves it when a start takes it; one that comes back to the pool moves out again. A runtime
   * that cannot move a pane has no place(): the sheep stays where it is.
   */
  place?(pane: PaneRef, placement: "pane" | "tab", direction: Direction): Promise<void>;
  /** The multiplexer's own view of the agent in the pane, for display only. */
  agentStatus?(paneId: string): Promise<string | undefined>;
  /**
   * Tells the multiplexer what the sheep in the pane is doing, for its display only, where the
   * sheep cannot tell it itself (a sandboxed sheep sees neither the multiplexer's variables nor its
   * socket). One bounded call; a failure throws. A multiplexer that shows no such state has none.
   */
  reportState?(paneId: string, state: ReportedState): Promise<void>;
  /**
   * A live view of a sheep's pane for a terminal in the panel: its screen now, then every byte its
   * program writes, to `sink` (a multiplexer with no output stream: a whole redraw of the screen each
   * time it changed). Only a pane that carries this sheep's mark. A runtime that can do neither has
   * no watch().
   */
  watch?(pane: PaneRef, sink: PaneSink): Promise<PaneWatch>;
  /** Types `text` into a sheep's pane as keys, only when the pane carries this sheep's mark (checked in the same call). */
  sendKeys?(pane: PaneRef, text: string): Promise<void>;
  /** Every watch taken down (each pane's stream ended, its files removed), resolved once it is: a process about to exit leaves nothing running. */
  endWatches?(): Promise<void>;
}
