import type { Clock } from "./clock.ts";
import { WOKEN } from "./signals.ts";

/**
 * Work raced against the caller's deadline (a time on the clock) and signal: its value when it
 * ends first, undefined when the deadline comes first; the signal's reason, thrown, when it
 * aborts first. The work is not stopped, only no longer waited for (a look at a machine that
 * does not answer ends at its own call's deadline), so its later failure is swallowed here.
 */
export async function bounded<T>(work: Promise<T>, clock: Clock, until: number, signal?: AbortSignal): Promise<{ value: T } | undefined> {
  if (signal?.aborted) throw signal.reason;
  work.catch(() => undefined);
  const stop = new AbortController();
  const onAbort = () => stop.abort(WOKEN);
  signal?.addEventListener("abort", onAbort, { once: true });
  let out: { value: T } | undefined;
  try {
    out = await Promise.race([
      work.then((value) => ({ value })),
      clock.sleep(Math.max(0, until - clock.now()), stop.signal).then(
        () => undefined,
        () => undefined,
      ),
    ]);
  } finally {
    signal?.removeEventListener("abort", onAbort);
    stop.abort(WOKEN);
  }
  if (signal?.aborted) throw signal.reason;
  return out;
}
