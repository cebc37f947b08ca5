/**
 * The herd widget: while this shepherd has sheep, one line each, refreshed about once a second.
 * It reads only records and the sheep's files (Shepherd.peek), never the multiplexer.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { Shepherd } from "../src/core/shepherd.js";
import { herdWidgetLines } from "../src/tool/widget-text.js";

const KEY = "pi-shepherd-herd";

export class HerdWidget {
  private timer: NodeJS.Timeout | undefined;
  private ctx: ExtensionContext | undefined;
  private shown = "";
  /** Tool calls under way: a call may start sheep at any moment, so keep looking while it runs. */
  private busy = 0;

  constructor(private readonly shepherd: () => Shepherd | undefined) {}

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
    if (!shepherd || !this.ctx) return;
    let lines: string[] | undefined;
    try {
      lines = herdWidgetLines(await shepherd.herdFromFiles(), Date.now());
    } catch {
      return;
    }
    const key = JSON.stringify(lines ?? null);
    if (key !== this.shown) {
      this.shown = key;
      this.ctx.ui.setWidget(KEY, lines);
    }
    if (!lines && this.busy === 0) this.stop();
  }
}
