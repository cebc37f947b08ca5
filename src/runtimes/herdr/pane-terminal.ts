/**
 * A sheep's herdr pane as a terminal in the panel. herdr has no output stream a client can
 * follow (`pane.output_changed` cannot be subscribed to), so the watch polls the pane's visible
 * screen: one `pane read --source visible --format ansi` at a time, WATCH_INTERVAL_MS after the
 * last one ended, each with its own deadline, and a whole redraw sent only when the screen
 * changed. The mark (the pane label's agent id) is read with `pane get` after every read that
 * changed and every MARK_EVERY reads anyway, before anything of it is sent: herdr numbers panes
 * afresh in a new server, as liveness knows. The watch ends when the pane is gone or lost its mark.
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

/** How long a watch waits after one read ended before the next begins. */
export const WATCH_INTERVAL_MS = 250;
/** Every this many reads the mark is read even when the screen did not change. */
export const MARK_EVERY = 8;
/** Failed reads in a row (a hung or restarting server) that end a watch. */
export const MAX_FAILURES = 5;

/** The calls this needs of herdr's CLI, each with its deadline. */
export interface HerdrCalls {
  request(args: readonly string[], expectType: string): Promise<HerdrResult>;
  silent(args: readonly string[]): Promise<void>;
  text(args: readonly string[], maxBytes?: number): Promise<string>;
}

export interface HerdrTerminalOptions {
  intervalMs?: number;
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
  readonly #intervalMs: number;

  constructor(
    private readonly cli: HerdrCalls,
    opts: HerdrTerminalOptions = {},
  ) {
    this.#intervalMs = opts.intervalMs ?? WATCH_INTERVAL_MS;
  }

  async sendKeys(pane: PaneRef, text: string): Promise<void> {
    checkPane(pane);
    if (text === "") return;
    const steps = keySteps(text);
    await this.#owned(pane);
    for (const step of steps) {
      if ("text" in step) await this.cli.silent(["pane", "send-text", pane.paneId, step.text]);
      else await this.cli.silent(["pane", "send-keys", pane.paneId, ...step.keys]);
    }
  }

  async watch(pane: PaneRef, sink: PaneSink): Promise<PaneWatch> {
    checkPane(pane);
    let last = await this.#read(pane);
    await this.#owned(pane);
    const screen = screenOfRead(last);
    let closed = false;
    let timer: NodeJS.Timeout | undefined;
    let reads = 0;
    let failures = 0;
    const end = (why: string) => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      sink.end(why);
    };
    const tick = async () => {
      if (closed) return;
      try {
        const now = await this.#read(pane);
        reads++;
        const changed = now !== last;
        if (changed || reads % MARK_EVERY === 0) await this.#owned(pane);
        failures = 0;
        if (changed && !closed) {
          last = now;
          sink.output(redrawBytes(screenOfRead(now)));
        }
      } catch (e) {
        if (isHerdrCode(e, "pane_not_found")) return end(`herdr pane ${pane.paneId} is gone.`);
        if (e instanceof ShepherdError && e.code === "not_owned") return end(`herdr pane ${pane.paneId} no longer carries the mark of ${pane.agentId}.`);
        if (isHerdrCode(e, "server_not_running")) return end("herdr's server is not running.");
        if (++failures >= MAX_FAILURES) return end(`the pane's screen could not be read: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (closed) return;
      timer = setTimeout(() => void tick(), this.#intervalMs);
      timer.unref();
    };
    timer = setTimeout(() => void tick(), this.#intervalMs);
    timer.unref();
    return {
      screen,
      close: () => {
        closed = true;
        clearTimeout(timer);
      },
    };
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
