/**
 * At most one call per interval, and the last value always gets through (after the interval),
 * so a throttled progress display never ends on a stale state.
 */
export function throttle<T>(ms: number, fn: (value: T) => void, now: () => number = Date.now) {
  let last = -Infinity;
  let pending: { value: T } | undefined;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    if (!pending) return;
    const { value } = pending;
    pending = undefined;
    last = now();
    fn(value);
  };
  return {
    push(value: T) {
      pending = { value };
      const wait = last + ms - now();
      if (wait <= 0 && !timer) flush();
      else timer ??= setTimeout(flush, Math.max(0, wait));
    },
    /** Drops what is pending: the call is over, its final result follows. */
    cancel() {
      clearTimeout(timer);
      timer = undefined;
      pending = undefined;
    },
  };
}
