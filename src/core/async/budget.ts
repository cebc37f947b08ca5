/**
 * The courier's rate limit: a sheep is driven by a model that may have read hostile text, and may
 * flood, so each gets at most PUSHES_PER_WINDOW pushes and as many notices in any WINDOW_MS.
 */

/** The window of the rate limit, and what each sheep gets in it: pushes of questions, and notices. */
export const WINDOW_MS = 60_000;
export const PUSHES_PER_WINDOW = 3;
/** The most questions one push lists; more wait for the next. */
export const MAX_QUESTIONS_PER_PUSH = 50;

/** Times of the last sends per sheep, for a sliding window. */
export class Budget {
  private readonly sent = new Map<string, number[]>();
  private recent(agentId: string, now: number): number[] {
    const times = (this.sent.get(agentId) ?? []).filter((t) => t > now - WINDOW_MS);
    this.sent.set(agentId, times);
    return times;
  }
  allows(agentId: string, now: number): boolean {
    return this.recent(agentId, now).length < PUSHES_PER_WINDOW;
  }
  /** When the next send is allowed. */
  opens(agentId: string, now: number): number {
    const times = this.recent(agentId, now);
    return times.length < PUSHES_PER_WINDOW ? now : times[0]! + WINDOW_MS;
  }
  spend(agentId: string, now: number): void {
    this.recent(agentId, now).push(now);
  }
}
