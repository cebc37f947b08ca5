/**
 * What the bench needs from a runtime besides the shepherd itself: the env that points a
 * shepherd at it, a count of the multiplexer processes the shepherd ran, and ways to start a
 * bare pi in a new pane of the same server (the boot baseline).
 */
export type BareMode =
  /** The way the runtime runs a program in a new pane: a shell, and the command line typed into it. */
  | "typed"
  /** tmux only: pi as the pane's own command, with no shell at all. */
  | "direct";

export interface BarePane {
  kill(): Promise<void>;
}

export interface RuntimeFixture {
  name: "tmux" | "herdr";
  /** Added to the world's env for the shepherd (and the RPC shepherd's pi). */
  env: NodeJS.ProcessEnv;
  /** How many multiplexer processes the shepherd has run so far. */
  multiplexerCalls(): Promise<number>;
  /** What one counted process is, for the report. */
  counted: string;
  /** Runs one read-only multiplexer command the way the runtime does (for reference: its cost). */
  probeCall(): Promise<void>;
  bareModes: readonly BareMode[];
  /** The pid of a pane's own process (its root: pi on tmux, the pane's shell on herdr). */
  panePid(paneId: string): Promise<number>;
  /** Starts argv in a new pane without shepherd, launcher or mark. */
  bareLaunch(mode: BareMode, argv: readonly string[], env: Record<string, string>, cwd: string): Promise<BarePane>;
  cleanup(): Promise<void>;
}
