import type { Shepherd } from "../core/shepherd.ts";
import type { HerdView } from "../core/prompts/views.ts";

/**
 * Seconds after which every sheep's files are read though no bell rang: for a watch event the
 * file system missed, and for a pi that ended without a word (its pid is the only witness).
 */
const READ_ALL_EVERY = 5;

/**
 * What the herd widget reads each second: the files of the sheep whose bells rang since the
 * last read (their files changed), every sheep's after a tool call and every fifth second, and
 * nothing else. Reading 16 unchanged status files a second would cost more than the widget.
 */
export class WidgetRefresh {
  private changed: Set<string> | "all" = "all";
  private ticks = 0;
  private heard: { shepherd: Shepherd; stop: () => void } | undefined;
  /** The questions sheep wait on, as of the last time their files were read. */
  private readonly asking = new Map<string, { messageId: string; text: string }>();

  /** Every sheep's files are read next time (a tool call may have changed anything). */
  all(): void {
    this.changed = "all";
    this.ticks = 0;
  }

  /** A second went by. */
  tick(): void {
    if (++this.ticks % READ_ALL_EVERY === 0) this.changed = "all";
  }

  /** Brings the records up to date as far as the files changed; false when the herd is empty. */
  async refresh(shepherd: Shepherd): Promise<boolean> {
    this.hear(shepherd);
    const which = this.changed;
    this.changed = new Set();
    let refreshed: HerdView[];
    try {
      refreshed = which === "all" || which.size > 0 ? await shepherd.refreshFromFiles(which === "all" ? undefined : which) : shepherd.views();
    } catch (e) {
      this.changed = "all";
      throw e;
    }
    const listed = new Set(refreshed.map((v) => v.agentId));
    for (const id of this.asking.keys()) if (!listed.has(id)) this.asking.delete(id);
    for (const v of refreshed) {
      if (which !== "all" && !which.has(v.agentId)) continue;
      if (v.asking) this.asking.set(v.agentId, v.asking);
      else this.asking.delete(v.agentId);
    }
    return refreshed.length > 0;
  }

  /** The live sheep from the records as they are now, with the questions known from their files. */
  views(shepherd: Shepherd): HerdView[] {
    return shepherd.views().map((v) => {
      const asking = this.asking.get(v.agentId);
      return asking ? { ...v, asking } : v;
    });
  }

  stop(): void {
    this.heard?.stop();
    this.heard = undefined;
  }

  private hear(shepherd: Shepherd): void {
    if (this.heard?.shepherd === shepherd) return;
    this.heard?.stop();
    const stop = shepherd.onChange((agentId) => {
      if (agentId && this.changed !== "all") this.changed.add(agentId);
    });
    this.heard = { shepherd, stop };
    this.changed = "all";
  }
}
