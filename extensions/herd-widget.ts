/**
 * The herd widget: while this shepherd has sheep, one line each. Every second the records are
 * brought up to date from the files that changed (WidgetRefresh, never the multiplexer).
 * In pi's TUI the lines are drawn from the records at the moment of drawing, with the frame's
 * clock (LiveText), so they tick with the progress of a wait or delegate; elsewhere (RPC) they
 * are plain lines sent when they change.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { Shepherd } from "../src/core/shepherd.ts";
import { WidgetRefresh } from "../src/edge/widget-refresh.ts";
import { herdWidgetLines } from "../src/texts/widget.ts";
import { type FrameClock, LiveText } from "./live-text.ts";

const KEY = "pi-shepherd-herd";

export class HerdWidget {
  private timer: NodeJS.Timeout | undefined;
  private ctx: ExtensionContext | undefined;
  private shown = "";
  private warmShown = "";
  /** The TUI the live widget is drawn in, to ask for a frame each second. */
  private tui: { requestRender(): void } | undefined;
  private readonly reads = new WidgetRefresh();
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
    this.reads.all();
    void this.refresh();
    if (!this.timer) {
      this.timer = setInterval(() => {
        this.reads.tick();
        void this.refresh();
      }, 1000);
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
    this.reads.stop();
  }

  private async refresh() {
    const shepherd = this.shepherd();
    const ctx = this.ctx;
    if (!shepherd || !ctx) return;
    let empty: boolean;
    let sheep: boolean;
    const warm = shepherd.warm().counts;
    try {
      sheep = await this.reads.refresh(shepherd);
      empty = !sheep && !Object.values(warm).some((c) => c.ready + c.starting > 0);
    } catch {
      return;
    }
    const views = () => this.reads.views(shepherd);
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
    // A pool that is configured keeps the widget looking: its first sheep may not have begun to boot yet.
    const pool = Object.keys(warm).length > 0;
    if (empty && this.busy === 0 && !pool) this.stop();
  }
}
