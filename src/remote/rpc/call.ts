/**
 * The agent protocol's shapes: what the shepherd and the program of ours on a remote host say to
 * each other, one JSON object per line over one stdio channel (spec.md, "Remote hosts: the agent
 * protocol"). `RemoteCall` is all the proxies need of a connection: the RpcClient over a child's
 * pipes is one, a reconnecting ssh session (src/remote/link) another. The methods, each port's in
 * one table, are in wire/.
 */
import type { RuntimeName } from "../../ports/runtime.ts";
import type { EgressRefusalEvent } from "./egress-event.ts";
import type { TermEvent } from "./terminal-event.ts";

export const PROTOCOL_VERSION = 1;

/** A line longer than this is a protocol error on either side: it is dropped unread, never buffered whole. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/**
 * What the remote side pushes without being asked: a sheep's files changed (a SheepFiles.subscribe
 * onChange there), a sandboxed sheep's egress refusal there (for this machine's audit log), or a
 * watched pane's output and a watch's end (terminal-event.ts).
 */
export type RemoteEvent = { ev: "change"; agentId: string } | EgressRefusalEvent | TermEvent;

export interface RemoteCall {
  /** Resolves with the method's answer (undefined for void), rejects with a `[code]` ShepherdError. */
  call(method: string, params: unknown[]): Promise<unknown>;
  onEvent(cb: (event: RemoteEvent) => void): () => void;
  /** After a lost connection came back (a new agent process, initialised again): subscriptions are gone there. */
  onReconnect(cb: () => void): () => void;
  /**
   * Told, with the reason, each time the connection goes (its agent there is gone, and every watch
   * it held with it). A RemoteCall that never goes need not have it.
   */
  onDown?(cb: (reason: string) => void): () => void;
}

/** The agent's first line. */
export interface Hello {
  protocol: number;
  /** The content hash of the bundle it runs from (its directory's name), "dev" outside one. */
  bundle: string;
  pid: number;
  node: string;
}

export interface InitParams {
  /** The remote pi agent dir: sheep directories, cards and worktrees live under its pi-shepherd/. */
  agentDir: string;
  /** Default `<agentDir>/pi-shepherd`. */
  stateDir?: string;
  runtime: "auto" | RuntimeName;
  /** The remote pi, as argv. */
  piCommand: string[];
  /** PI_SHEPHERD_DEPTH the sheep get. */
  depth: number;
  /** Variables for the sheep (provider keys among them): they travel here, on stdin, never on a command line. */
  env: Record<string, string>;
  /**
   * The user's `sandbox` setting from the shepherd's machine (user-only, so one policy everywhere), in
   * src/sandbox/settings.ts's shape: the agent checks it as the settings file is (setup.ts) and composes
   * its own bubblewrap probe and egress proxy from it, on that host.
   */
  sandbox?: object;
}

export interface InitAnswer {
  runtime: RuntimeName;
  stateDir: string;
  /** The private tmux server's socket (tmux only): the remote user's own server is never used. */
  tmuxSocket?: string;
  /** The remote user's home: a start's cwd when neither the call nor the host's settings name one. */
  home: string;
}

export interface SysInfo {
  node: string;
  pi?: string;
  tmux?: string;
  herdr?: string;
  /** The permission bits of the remote state dir (0o700 when private); null when it does not exist. */
  stateDirMode: number | null;
}

export type WireRequest = { id: number; m: string; p: unknown[] };
export type WireAnswer = { id: number; ok?: unknown } | { id: number | null; err: WireError };
export interface WireError {
  code: string;
  message: string;
}
