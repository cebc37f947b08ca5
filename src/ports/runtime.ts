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
}

export interface CreatedPane {
  paneId: string;
  /** How a person can look at the pane, e.g. "tmux -S /x attach -t pi-shepherd". */
  attachHint?: string;
}

export type PaneLiveness = "alive" | "gone";

/** A sheep's pane as the core knows it: pane ids are reused, so the agent id is the identity. */
export interface PaneRef {
  paneId: string;
  agentId: string;
}

export interface Runtime {
  readonly name: RuntimeName;
  /** Creates an unfocused pane running the user's shell. Never selects or focuses anything. */
  createPane(req: CreatePaneRequest): Promise<CreatedPane>;
  /**
   * Types the launcher command into the pane and presses Enter. `argv` holds only paths the
   * package itself chose; adapters quote every element.
   */
  runLauncher(paneId: string, argv: readonly string[]): Promise<void>;
  /**
   * Liveness of many sheep in one multiplexer call where the multiplexer allows it, keyed by
   * agentId. "alive" only when the pane exists AND carries that agent's mark, read in the same
   * call: a pane id that came back with a new server (tmux numbers from %0 again) or a new
   * herdr session is someone else's pane. A transient error must throw, never report "gone";
   * only a multiplexer whose server is not there at all makes every pane gone.
   */
  liveness(panes: readonly PaneRef[]): Promise<Map<string, PaneLiveness>>;
  /**
   * Every pane that carries a sheep's mark, whichever shepherd made it: the doctor compares
   * them with the records to find orphans. A server that is not running has none.
   */
  markedPanes(): Promise<PaneRef[]>;
  /** Recent text of the pane, oldest line first. */
  read(paneId: string, lines: number): Promise<string>;
  /** Closes a pane this shepherd created. Closing a pane that is already gone is not an error. */
  close(paneId: string, agentId: string): Promise<void>;
  /** The multiplexer's own view of the agent in the pane, for display only. */
  agentStatus?(paneId: string): Promise<string | undefined>;
}
