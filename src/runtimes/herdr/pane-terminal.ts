/**
 * A sheep's herdr pane as a terminal in the panel. herdr has no output stream a client can
 * follow (`pane.output_changed` cannot be subscribed to), so the watch polls the pane's visible
 * screen: one `pane read --source visible --format ansi` at a time, each with its own deadline,
 * and a whole redraw sent only when the screen changed. Every read is a herdr process the
 * shepherd spawns, so the poll adapts: FAST_MS after a change, doubling while the screen stays
 * the same up to SLOW_MS (an idle pane costs a read every 2 s, not four a second), and at once
 * when keys were typed into the pane through sendKeys, then KEYS_MS doubling, so the echo shows
 * within a read or two. The mark (the pane label's agent id) is read with `pane get` after every
 * read that changed, before anything of it is sent, and at least every MARK_EVERY_MS anyway:
 * herdr numbers panes afresh in a new server, as liveness knows. The watch ends when the pane is
 * gone or lost its mark.
 * Keys: the mark read first, then send-text and send-keys (keys.ts); herdr cannot check the
 * mark in the same command, but it never reuses a pane id within one server.
 */
import { ShepherdError } from "../../domain/errors.ts";
import { isWellFormedId } from "../../domain/ids.ts";
import type { PaneRef, PaneSink, PaneWatch } from "../../ports/runtime.ts";
import type { HerdrResult } from "./cli.ts";
import { isHerdrCode } from "./errors.ts";
import { keySteps } from "./keys.ts";
import { carriesMark } from "./labels.ts";
import { paneRecord } from "./records.ts";
import { MAX_SCREEN_BYTES, redrawBytes, screenOfRead } from "./screen.ts";

/** The wait after a read that changed (and after the first): the screen is moving. */
export const FAST_MS = 250;
/** The longest wait between reads of a screen that stays the same. */
export const SLOW_MS = 4_000;
/** After keys were typed the pane is read at once; this is the wait after that read when it did not show them yet, doubling. */
export const KEYS_MS = 25;
/** An unchanged pane's mark is read at least this often, so a relabelled pane's watch ends. */
export const MARK_EVERY_MS = 12_000;
/** Failed reads in a row (a hung or restarting server) that end a watch. */
export const MAX_FAILURES = 5;

/** The calls this needs of herdr's CLI, each with its deadline. */
export interface HerdrCalls {
  request(args: readonly string[], expectType: string): Promise<HerdrResult>;
  silent(args: readonly string[]): Promise<void>;
  text(args: readonly string[], maxBytes?: number): Promise<string>;
}

export interface HerdrTerminalOptions {
  fastMs?: number;
  slowMs?: number;
  keysMs?: number;
  markEveryMs?: number;
}

function checkPane(pane: PaneRef): void {
  if (!/^[^\s-]\S*$/.test(pane.paneId) || !isWellFormedId(pane.agentId, "agent")) {
    throw new ShepherdError("invalid_params", `not a sheep's herdr pane: ${JSON.stringify(pane.paneId)}`);
  }
}

function notOwned(agentId: string): ShepherdError {
  return new ShepherdError("not_owned", `that pane is not the one this shepherd made for ${agentId}; no key was typed and nothing read.`);
}

export class HerdrPaneTerminals {
  readonly #opts: Required<HerdrTerminalOptions>;
  /** The open watches of each pane, woken when keys were typed into it. */
  readonly #wakes = new Map<string, Set<() => void>>();

  constructor(
    private readonly cli: HerdrCalls,
    opts: HerdrTerminalOptions = {},
  ) {
    this.#opts = { fastMs: FAST_MS, slowMs: SLOW_MS, keysMs: KEYS_MS, markEveryMs: MARK_EVERY_MS, ...opts };
  }

  async sendKeys(pane: PaneRef, text: string): Promise<void> {
    checkPane(pane);
    if (text === "") return;
    const steps = keySteps(text);
    await this.#owned(pane);
    try {
      for (const step of steps) {
        if ("text" in step) await this.cli.silent(["pane", "send-text", pane.paneId, step.text]);
        else await this.cli.silent(["pane", "send-keys", pane.paneId, ...step.keys]);
      }
    } finally {
      // Even a failed call may have typed some: the pane's watches read it now.
      for (const wake of this.#wakes.get(pane.paneId) ?? []) wake();
    }
  }

  async watch(pane: PaneRef, sink: PaneSink): Promise<PaneWatch> {
    checkPane(pane);
    const { fastMs, slowMs, keysMs, markEveryMs } = this.#opts;
    let last = await this.#read(pane);
    await this.#owned(pane);
    let markedAt = Date.now();
    const screen = screenOfRead(last);
    let closed = false;
    let timer: NodeJS.Timeout | undefined;
    let reading = false;
    /** Keys were typed while a read was under way: it may not show them, so the next comes at once. */
    let woken = false;
    /** The wait before the next read: fastMs after a change, doubled at each read that changed nothing; 0 after keys. */
    let delay = fastMs;
    let failures = 0;
    const schedule = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => void tick(), ms);
      timer.unref();
    };
    const wake = () => {
      if (closed) return;
      delay = 0;
      if (reading) woken = true;
      else schedule(0);
    };
    const wakes = this.#wakes.get(pane.paneId) ?? new Set<() => void>();
    this.#wakes.set(pane.paneId, wakes);
    wakes.add(wake);
    const stop = () => {
      closed = true;
      clearTimeout(timer);
      wakes.delete(wake);
      if (wakes.size === 0 && this.#wakes.get(pane.paneId) === wakes) this.#wakes.delete(pane.paneId);
    };
    const end = (why: string) => {
      if (closed) return;
      stop();
      sink.end(why);
    };
    const tick = async () => {
      if (closed || reading) return;
      reading = true;
      try {
        const now = await this.#read(pane);
        const changed = now !== last;
        if (changed || Date.now() - markedAt >= markEveryMs) {
          await this.#owned(pane);
          markedAt = Date.now();
        }
        failures = 0;
        if (changed && !closed) {
          last = now;
          sink.output(redrawBytes(screenOfRead(now)));
        }
        // The wait this read came after doubles unless the screen moved; after keys it starts from keysMs.
        delay = changed ? fastMs : delay === 0 ? keysMs : Math.min(delay * 2, slowMs);
      } catch (e) {
        if (isHerdrCode(e, "pane_not_found")) return end(`herdr pane ${pane.paneId} is gone.`);
        if (e instanceof ShepherdError && e.code === "not_owned") return end(`herdr pane ${pane.paneId} no longer carries the mark of ${pane.agentId}.`);
        if (isHerdrCode(e, "server_not_running")) return end("herdr's server is not running.");
        if (++failures >= MAX_FAILURES) return end(`the pane's screen could not be read: ${e instanceof Error ? e.message : String(e)}`);
        // A failing server is not asked faster than a quiet pane.
        delay = slowMs;
      } finally {
        reading = false;
      }
      if (closed) return;
      if (woken) {
        // Keys came during this read: read again at once.
        woken = false;
        delay = 0;
        schedule(0);
      } else schedule(delay);
    };
    schedule(delay);
    return { screen, close: stop };
  }

  /** The pane's visible screen with its colours, bounded where it is read. 0.8.0 wants the id first. */
  #read(pane: PaneRef): Promise<string> {
    return this.cli.text(["pane", "read", pane.paneId, "--source", "visible", "--format", "ansi"], MAX_SCREEN_BYTES);
  }

  /** Throws not_owned unless the pane carries this sheep's mark; herdr's pane_not_found when it is gone. */
  async #owned(pane: PaneRef): Promise<void> {
    const info = paneRecord((await this.cli.request(["pane", "get", pane.paneId], "pane_info")).pane, "pane get");
    if (!carriesMark(info.label, pane.agentId)) throw notOwned(pane.agentId);
  }
}
