/** The runtime port's wire: served on the far end's own tmux or herdr, asked by RemoteRuntime. */
import { ShepherdError } from "../../../domain/errors.ts";
import { PANE_ID } from "../../../domain/ids.ts";
import { printable } from "../../../domain/printable.ts";
import type { CreatePaneRequest, Placement, ReportedState, Runtime } from "../../../ports/runtime.ts";
import { arrayOf, fields, type Guard, isAgentId, isObject, isString, oneOf, optional } from "../shape.ts";
import { ignored, methodsOn, num, obj, type Param, paneRef, paneRefs, str } from "./method.ts";

const exitStatus = fields({ code: (v) => v === null || Number.isSafeInteger(v), signal: optional(isString) });
const liveness: Guard = (v) => isObject(v) && (v.state === "alive" || v.state === "gone" || (v.state === "exited" && exitStatus(v.exit)));
/** A pane id the records can keep: any other would be set aside at the next load, and the sheep with it. */
const isPaneId: Guard = (v) => typeof v === "string" && PANE_ID.test(v);

const method = methodsOn<Runtime>();

/** Checked here as the herdr adapter's caller would be: the pane id goes onto herdr's command line. */
const paneId: Param<string> = (p, i, name) => {
  const v = str(p, i, name);
  if (!PANE_ID.test(v)) throw new ShepherdError("invalid_params", `${name}: "${printable(v.slice(0, 40))}" is no pane id.`);
  return v;
};
const REPORTED: readonly ReportedState[] = ["idle", "working", "blocked"];
const reportedState: Param<ReportedState> = (p, i, name) => {
  const v = p[i];
  if (!REPORTED.includes(v as ReportedState)) throw new ShepherdError("invalid_params", `${name}: parameter ${i + 1} must be one of ${REPORTED.join(", ")}.`);
  return v as ReportedState;
};

export const RUNTIME_WIRE = {
  /** The answer names the far end's multiplexer: a connection made lazily learns it only after init. */
  createPane: method(
    "runtime.createPane",
    [obj<CreatePaneRequest>()],
    fields({ paneId: isPaneId, attachHint: optional(isString), runtime: optional(oneOf("tmux", "herdr")) }),
    async (rt, req) => ({ runtime: rt.name, ...(await rt.createPane(req)) }),
  ),
  /** A Map travels as its entries. */
  liveness: method(
    "runtime.liveness",
    [paneRefs],
    arrayOf((e) => Array.isArray(e) && e.length === 2 && isString(e[0]) && liveness(e[1])),
    async (rt, panes) => [...(await rt.liveness(panes)).entries()],
  ),
  markedPanes: method("runtime.markedPanes", [], arrayOf(fields({ paneId: isPaneId, agentId: isAgentId })), (rt) => rt.markedPanes()),
  read: method("runtime.read", [paneRef, num], isString, (rt, pane, lines) => rt.read(pane.paneId, lines)),
  close: method("runtime.close", [str, str], optional(oneOf(true, false)), (rt, paneId, agentId) => rt.close(paneId, agentId)),
  relabel: method("runtime.relabel", [paneRef, str, str as Param<Placement>], ignored, (rt, pane, label, placement) => rt.relabel?.(pane, label, placement)),
  agentStatus: method("runtime.agentStatus", [paneRef], optional(isString), (rt, pane) => rt.agentStatus?.(pane.paneId)),
  /** A sandboxed sheep's state, for herdr there to show; a tmux there shows none, and answers nothing. */
  reportState: method("runtime.reportState", [paneId, reportedState], ignored, (rt, pane, state) => rt.reportState?.(pane, state)),
};
