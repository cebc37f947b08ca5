/** What the warm pool keeps, and which start a warm sheep may serve. */
import { resolve } from "node:path";
import type { Direction, Placement } from "../../ports/runtime.ts";
import type { AgentDefinition, AgentRecord, StartRequest } from "../../ports/types.ts";

export interface WarmConfig {
  /** Agent definition name -> how many ready sheep to keep. */
  sizes: Readonly<Record<string, number>>;
  /** The directory the pool's sheep run in (the shepherd's). */
  cwd: string;
  placement: Placement;
  direction: Direction;
  /** The definitions a start would find now, read fresh each time; names not found are not warmed. */
  definitions(): Promise<AgentDefinition[]>;
  /** How often the pool looks for sheep that died (ms). */
  checkEveryMs?: number;
  /**
   * The memory (MB) the pool's sheep may hold, of every definition, booting ones too, for a
   * delegated sheep to come back into instead of closing: each counted at its pi's resident memory
   * where the host can read it, else at WARM_SHEEP_MB. 0 or absent: none come back.
   */
  memoryMb?: number;
}

/** Two definitions are the same sheep when every field a sheep runs with is the same. */
export function fingerprint(d: AgentDefinition, model: string | undefined): string {
  const sorted = Object.fromEntries(Object.entries({ ...d, model }).sort(([a], [b]) => a.localeCompare(b)));
  return JSON.stringify(sorted);
}

/**
 * Whether a start asks for what the pool keeps: its placement and a fresh conversation, and on this
 * machine its cwd. A start on another host fits too: only a sheep of that host in that cwd (one
 * that came back there) is taken for it (`sameHost`).
 */
export function fits(config: WarmConfig, req: StartRequest): boolean {
  if (req.isolate || req.resume) return false;
  if (req.host === undefined && resolve(req.cwd) !== resolve(config.cwd)) return false;
  if ((req.placement ?? "tab") !== config.placement) return false;
  return config.placement !== "pane" || (req.direction ?? "right") === config.direction;
}

/** A warm sheep serves a start on its own machine, and on another host only in the cwd it ran in there. */
export function sameHost(rec: AgentRecord, req: StartRequest): boolean {
  return rec.host === req.host && (req.host === undefined || rec.cwd === req.cwd);
}

/** A warm sheep's label until a start gives it one: seen only in the multiplexer's window list. */
export function warmLabel(name: string): string {
  return `warm ${[...name].slice(0, 40).join("")}`;
}
