/** A row of the published figures and the maker that adds one: what the report and user-rows.ts both use, so neither imports the other. */
import type { CoreFigures } from "./core-bench.ts";
import type { EgressFigures } from "./egress-bench.ts";
import type { PanelFigures } from "./panel-bench.ts";
import type { PeerFigures } from "./peer.ts";
import type { RemoteFigures } from "./remote-bench.ts";
import type { RpcFigures } from "./rpc-bench.ts";
import type { SandboxFigures } from "./sandbox-bench.ts";
import type { SubagentsFigures } from "./subagents.ts";
import type { ToolCost } from "../../src/edge/tool-cost.ts";
import type { TerminalFigures } from "./terminal-bench.ts";
import type { HerdrTerminalFigures } from "./herdr-terminal-bench.ts";
import type { WarmStartFigures } from "./warm-start.ts";
import type { FirstCallFigures } from "./first-call.ts";

/** The parts a run measured (--only leaves some out); warmStart is null where there was no warm pool. */
export interface RuntimeRun {
  core?: CoreFigures;
  rpc?: RpcFigures;
  warmStart?: WarmStartFigures | null;
  peer?: PeerFigures;
  panel?: PanelFigures;
  subagents?: SubagentsFigures;
  /** Sheep on the test's remote host against local ones (tmux only). */
  remote?: RemoteFigures;
  /** The sandbox's egress proxy (measured with the first runtime only). */
  egress?: EgressFigures;
  /** Sandboxed sheep against unsandboxed ones (tmux only). */
  sandbox?: SandboxFigures;
  /** What the tool adds to each model request (text, measured with the first runtime only). */
  toolTokens?: ToolCost;
  /** The first call of a new shepherd against pi-subagents', arguments streamed (issue 36). */
  firstCall?: FirstCallFigures;
  /** The panel's terminal (tmux only). */
  terminal?: TerminalFigures;
  /** The panel's terminal under herdr: the runtime's watches in the bench process on the fake herdr. */
  herdrTerminal?: HerdrTerminalFigures;
}

export type Got = { value: number | string; detail?: string } | undefined;

export type RowMaker = (
  metric: string,
  via: Row["via"],
  unit: string,
  pick: (r: RuntimeRun) => Got,
  /** Judged for the runtimes listed, or for every runtime. */
  target?: { text: string; ok: (v: number) => boolean; runtimes?: string[] },
) => void;

export interface Row {
  metric: string;
  /** core: composeShepherd in the bench process; rpc: a real pi shepherd, whole tool calls; bench: the bench itself. */
  via: "core" | "rpc" | "bench";
  unit: string;
  values: Record<string, number | string>;
  detail: Record<string, string>;
  target?: string;
  /** Per runtime, where the row has a target. */
  met?: Record<string, boolean>;
}
