/**
 * A sheep's pane as a live terminal (the panel's): only a sheep of this shepherd that still runs,
 * through the runtime's watch and keys, which check the pane's mark themselves. A watch ends by
 * itself when the records say the sheep closed or exited: the core's own signal, no poll.
 */
import { ShepherdError } from "../../domain/errors.ts";
import type { AgentId } from "../../domain/ids.ts";
import type { PaneSink, PaneWatch } from "../../ports/runtime.ts";
import type { AgentRecord } from "../../ports/types.ts";
import type { Herd } from "../herd/herd.ts";
import { findRecord } from "../herd/owners.ts";

async function running(herd: Herd, agentId: AgentId): Promise<AgentRecord> {
  const rec = await findRecord(herd, agentId);
  if (rec.state === "closed" || rec.state === "exited") {
    throw new ShepherdError(
      "agent_closed",
      `sheep ${rec.agentId} (${rec.label}) ${rec.state === "closed" ? "is closed" : "has exited"}; its pane has no terminal.`,
    );
  }
  return rec;
}

export async function watchTerminal(herd: Herd, agentId: AgentId, sink: PaneSink): Promise<PaneWatch> {
  const rec = await running(herd, agentId);
  const runtime = herd.opts.runtime;
  if (!runtime.watch)
    throw new ShepherdError("runtime_unavailable", `${runtime.name} cannot stream a pane's output; look at the sheep in ${runtime.name} itself.`);
  let stop: (() => void) | undefined;
  let watch: PaneWatch | undefined;
  let ended = false;
  const end = (why: string) => {
    if (ended) return;
    ended = true;
    stop?.();
    watch?.close();
    sink.end(why);
  };
  watch = await runtime.watch({ paneId: rec.paneId, agentId: rec.agentId }, { output: (chunk) => sink.output(chunk), end });
  stop = herd.onRecords(() => {
    const now = herd.registry.agents.get(rec.agentId);
    if (now !== rec || now.state === "closed" || now.state === "exited") end(`sheep ${rec.agentId} ${now?.state === "exited" ? "has exited" : "is closed"}.`);
  });
  const held = watch;
  return {
    screen: held.screen,
    close: () => {
      ended = true;
      stop?.();
      held.close();
    },
  };
}

export async function typeKeys(herd: Herd, agentId: AgentId, text: string): Promise<void> {
  const rec = await running(herd, agentId);
  const runtime = herd.opts.runtime;
  if (!runtime.sendKeys) throw new ShepherdError("runtime_unavailable", `${runtime.name} cannot type into a pane from here; use ${runtime.name} itself.`);
  await runtime.sendKeys({ paneId: rec.paneId, agentId: rec.agentId }, text);
}

/** The facade's `terminal`: both, on the herd the facade holds. */
export function terminalOf(herd: () => Herd) {
  return {
    watch: (agentId: AgentId, sink: PaneSink) => watchTerminal(herd(), agentId, sink),
    type: (agentId: AgentId, text: string) => typeKeys(herd(), agentId, text),
  };
}
