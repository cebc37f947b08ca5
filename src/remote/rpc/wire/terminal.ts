/**
 * The terminal's wire: a remote sheep's pane watched and typed into through its host's link.
 * `term.watch` answers the pane's screen now; what the pane writes after comes as term-output
 * events under the watch's id (chosen by the shepherd, so no event can come before its watch is
 * known there). Served at the far end on its own runtime's watch and sendKeys, which check the
 * pane's mark themselves.
 */
import { ShepherdError } from "../../../domain/errors.ts";
import type { PaneRef, PaneScreen } from "../../../ports/runtime.ts";
import { fields, type Guard, isString } from "../shape.ts";
import { isWatchId, MAX_TERM_KEY_BYTES } from "../terminal-event.ts";
import { agentId, ignored, methodsOn, type Param, paneRef, str } from "./method.ts";

/** What the terminal's methods are served on at the far end: its watches, over its runtime. */
export interface TermSide {
  watch(pane: PaneRef, watchId: number): Promise<PaneScreen>;
  /** Idempotent: a watch already ended is let go silently. */
  unwatch(watchId: number): void;
  keys(pane: PaneRef, text: string): Promise<void>;
}

const method = methodsOn<TermSide>();

/** A sheep's pane: its agent id is required (the mark the runtime checks). */
const sheepPane: Param<PaneRef> = (p, i, name) => {
  const pane = paneRef(p, i, name);
  agentId([pane.agentId], 0, name);
  return pane;
};

const watchId: Param<number> = (p, i, name) => {
  if (!isWatchId(p[i])) throw new ShepherdError("invalid_params", `${name}: parameter ${i + 1} must be a watch id (a whole number from 1).`);
  return p[i] as number;
};

/** Keys: bounded in bytes here, before anything of them is looked at (the runtime counts the characters). */
const keys: Param<string> = (p, i, name) => {
  const text = str(p, i, name);
  if (Buffer.byteLength(text) > MAX_TERM_KEY_BYTES)
    throw new ShepherdError("invalid_params", `${name}: at most ${MAX_TERM_KEY_BYTES} bytes of keys at once; send the rest next.`);
  return text;
};

const size = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= 10_000;
/** A screen as a tmux there captures it is at most 2 MiB (runtimes/tmux/pane-terminal.ts). */
const MAX_SCREEN_CHARS = 2 * 1024 * 1024;
const screen: Guard = fields({ text: (v) => isString(v) && (v as string).length <= MAX_SCREEN_CHARS, cols: size, rows: size, cursorX: size, cursorY: size });

export const TERMINAL_WIRE = {
  watch: method("term.watch", [sheepPane, watchId], screen, (s, pane, id) => s.watch(pane, id)),
  unwatch: method("term.unwatch", [watchId], ignored, (s, id) => s.unwatch(id)),
  keys: method("term.keys", [sheepPane, keys], ignored, (s, pane, text) => s.keys(pane, text)),
};
