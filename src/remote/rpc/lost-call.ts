/**
 * A call lost on its way: the connection went before its answer came, so it may have been done
 * there or not. What a caller whose call is safe to make again (or to make good) needs.
 */
import { isShepherdError, ShepherdError } from "../../domain/errors.ts";
import type { RemoteCall } from "./call.ts";

/**
 * [host_unreachable] for a call that was on its way when the connection went: unlike one refused
 * while the host is down, it may have been done there. A caller whose call is safe to make twice
 * (a delivery the sheep takes once by its id) makes it again once the host is back.
 */
export class CallLost extends ShepherdError {
  constructor(message: string) {
    super("host_unreachable", message);
  }
}

/** How long a call lost on its way waits for the host to come back, to be made again or made good. */
export const LOST_CALL_WAIT_MS = 30_000;

/**
 * Makes `attempt` once now and again at each reconnect while the host is away, for at most waitMs:
 * its value once it got through, undefined when the host did not take it in time.
 */
export async function whileAway<T>(remote: RemoteCall, waitMs: number, attempt: () => Promise<T>): Promise<{ value: T } | undefined> {
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      return { value: await attempt() };
    } catch (e) {
      if (!isShepherdError(e, "host_unreachable")) throw e;
    }
    if (Date.now() >= until) return undefined;
    await whenBack(remote, until);
  }
}

/** Resolves at the connection's next reconnect, or at `until` (a time in ms). */
function whenBack(remote: RemoteCall, until: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(), Math.max(0, until - Date.now()));
    const off = remote.onReconnect(() => done());
    const done = () => {
      clearTimeout(timer);
      off();
      resolve();
    };
  });
}
