/**
 * The herd widget: while this shepherd has sheep, one line each. Every second the records are
 * brought up to date from the sheep's files (Shepherd.refreshFromFiles, never the multiplexer).
 * In pi's TUI the lines are drawn from the records at the moment of drawing, with the frame's
 * clock (LiveText), so they tick with the progress of a wait or delegate; elsewhere (RPC) they
 * are plain lines sent when they change.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { Shepherd } from "../src/core/shepherd.js";
import { herdWidgetLines } from "../src/tool/widget-text.js";
import { type FrameClock, LiveText } from "./live-text.js";

const KEY = "pi-shepherd-herd";

export class HerdWidget {
  private timer: NodeJS.Timeout | undefined;
  private ctx: ExtensionContext | undefined;
  private shown = "";
  private warmShown = "";
  /** The TUI the live widget is drawn in, to ask for a frame each second. */
  private tui: { requestRender(): void } | undefined;
  /** The questions sheep wait on, as of the last refresh. */
  private asking = new Map<string, { messageId: string; text: string }>();
  /** Tool calls under way: a call may start sheep at any moment, so keep looking while it runs. */
  private busy = 0;

  constructor(
    private readonly shepherd: () => Shepherd | undefined,
    private readonly clock: FrameClock,
  ) {}

  /** Called with the freshest context after every tool call; starts refreshing when needed. */
  touch(ctx: ExtensionContext) {
    if (!ctx.hasUI) return; // print and json modes show nothing
    this.ctx = ctx;
    void this.refresh();
    if (!this.timer) {
      this.timer = setInterval(() => void this.refresh(), 1000);
      this.timer.unref();
    }
  }

  /** Wraps a tool call: the widget refreshes during it even while the herd is still empty. */
  async during<T>(ctx: ExtensionContext, fn: () => Promise<T>): Promise<T> {
    this.busy++;
    this.touch(ctx);
    try {
      return await fn();
    } finally {
      this.busy--;
      this.touch(ctx);
    }
  }

  stop() {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async refresh() {
    const shepherd = this.shepherd();
    const ctx = this.ctx;
    if (!shepherd || !ctx) return;
    let empty: boolean;
    let sheep: boolean;
    const warm = shepherd.warm().counts;
    try {
      const refreshed = await shepherd.refreshFromFiles();
      sheep = refreshed.length > 0;
      empty = !sheep && !Object.values(warm).some((c) => c.ready + c.starting > 0);
      // A sheep's question is known from its files: as of this refresh.
      this.asking = new Map(refreshed.flatMap((v) => (v.asking ? [[v.agentId, v.asking] as const] : [])));
    } catch {
      return;
    }
    const views = () => shepherd.views().map((v) => ({ ...v, ...(this.asking.has(v.agentId) ? { asking: this.asking.get(v.agentId)! } : {}) }));
    // pi 1.6 says which UI it drives; only its TUI draws components.
    const live = (ctx as { mode?: string }).mode === "tui";
    const key = empty ? "none" : live ? "live" : JSON.stringify(herdWidgetLines(views(), Date.now(), warm));
    if (key !== this.shown) {
      this.shown = key;
      if (empty) ctx.ui.setWidget(KEY, undefined);
      else if (live) {
        ctx.ui.setWidget(KEY, (tui) => {
          this.tui = tui;
          return new LiveText(() => (herdWidgetLines(views(), this.clock.now(), shepherd.warm().counts) ?? []).join("\n"), 1);
        });
      } else ctx.ui.setWidget(KEY, herdWidgetLines(views(), Date.now(), warm));
    }
    // Only sheep have clocks that tick: a widget of the warm pool alone changes only with its counts.
    const warmKey = JSON.stringify(warm);
    if (live && (sheep || warmKey !== this.warmShown)) this.tui?.requestRender();
    this.warmShown = warmKey;
    if (empty && this.busy === 0) this.stop();
  }
}
