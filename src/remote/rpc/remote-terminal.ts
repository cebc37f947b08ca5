/**
 * A remote sheep's pane as a terminal, through its host's link: term.watch answers the screen now,
 * and the pane's output follows as events under the watch's id, chosen here before the call goes
 * out so that no event can come before its watch is known. A watch ends (its sink told why) when
 * the agent ends it, when the link goes (the agent there is gone, and its watches with it), or
 * when its page closes it (term.unwatch, not waited for). Every call has the link's deadline.
 */
import { ShepherdError } from "../../domain/errors.ts";
import type { PaneRef, PaneScreen, PaneSink, PaneWatch } from "../../ports/runtime.ts";
import type { RemoteCall, RemoteEvent } from "./call.ts";
import { CallLost } from "./lost-call.ts";
import { expect } from "./shape.ts";
import { MAX_TERM_KEY_BYTES } from "./terminal-event.ts";
import { TERMINAL_WIRE as W } from "./wire/terminal.ts";

/** What output may come before the watch's answer is handed on (none should: the agent answers first). */
const MAX_HELD_BYTES = 1024 * 1024;

interface Open {
  sink: PaneSink;
  /** Output that came before the watch was handed to its caller: passed on right after, in order. */
  held?: Buffer[] | undefined;
  heldBytes: number;
  /** Why it ended before it was handed on. */
  ended?: string;
}

export class RemoteTerminals {
  private nextId = 1;
  private readonly open = new Map<number, Open>();
  private listening = false;

  constructor(
    private readonly remote: RemoteCall,
    private readonly host: string,
  ) {}

  async watch(pane: PaneRef, sink: PaneSink): Promise<PaneWatch> {
    this.listen();
    const id = this.nextId++;
    const entry: Open = { sink, held: [], heldBytes: 0 };
    this.open.set(id, entry);
    let screen: PaneScreen;
    try {
      const params: [PaneRef, number] = [{ paneId: pane.paneId, agentId: pane.agentId }, id];
      screen = expect<PaneScreen>(await this.remote.call(W.watch.name, params), (v) => W.watch.answer(v, params), W.watch.name, this.host);
    } catch (e) {
      this.open.delete(id);
      // Lost on its way, or answered wrongly: a watch may run there that nothing here holds.
      if (e instanceof CallLost || (e instanceof ShepherdError && e.code === "protocol_error")) this.unwatch(id);
      throw e;
    }
    let closed = false;
    // Handed on after the caller has its watch: the screen first, then what followed it.
    setImmediate(() => {
      const held = entry.held ?? [];
      entry.held = undefined;
      if (closed) return;
      for (const chunk of held) sink.output(chunk);
      if (entry.ended !== undefined) sink.end(entry.ended);
    });
    return {
      screen,
      close: () => {
        if (closed) return;
        closed = true;
        if (this.open.get(id) !== entry) return;
        this.open.delete(id);
        this.unwatch(id);
      },
    };
  }

  async sendKeys(pane: PaneRef, text: string): Promise<void> {
    if (text === "") return;
    // Refused here, not sent: the agent would refuse it too.
    if (Buffer.byteLength(text) > MAX_TERM_KEY_BYTES)
      throw new ShepherdError("invalid_params", `at most ${MAX_TERM_KEY_BYTES} bytes of keys at once; send the rest next.`);
    await this.remote.call(W.keys.name, [{ paneId: pane.paneId, agentId: pane.agentId }, text]);
  }

  private unwatch(id: number): void {
    this.remote.call(W.unwatch.name, [id]).catch(() => undefined);
  }

  private listen(): void {
    if (this.listening) return;
    this.listening = true;
    this.remote.onEvent((e) => this.onEvent(e));
    this.remote.onDown?.((why) => {
      for (const id of [...this.open.keys()]) this.ended(id, `the link to host "${this.host}" went down (${why}); open the terminal again once it is back.`);
    });
  }

  private onEvent(e: RemoteEvent): void {
    if (e.ev === "term-output") {
      const entry = this.open.get(e.watch);
      if (!entry) return;
      if (!entry.held) {
        entry.sink.output(e.data);
        return;
      }
      entry.heldBytes += e.data.length;
      if (entry.heldBytes > MAX_HELD_BYTES) {
        this.unwatch(e.watch);
        this.ended(e.watch, "the pane wrote too much before its terminal opened; open it again.");
      } else entry.held.push(e.data);
    } else if (e.ev === "term-end") this.ended(e.watch, e.why);
  }

  private ended(id: number, why: string): void {
    const entry = this.open.get(id);
    if (!entry) return;
    this.open.delete(id);
    if (entry.held) entry.ended = why;
    else entry.sink.end(why);
  }
}
