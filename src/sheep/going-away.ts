/**
 * A closed pane sends pi SIGHUP (a stop, SIGTERM), and pi aborts the running turn on its way out.
 * That abort is nobody's answer: without a result file the shepherd reports what really happened,
 * [pane_gone] or [pi_exited], instead of "cancelled". This remembers that such a signal came.
 */
const SIGNALS = ["SIGHUP", "SIGTERM"] as const;

export class GoingAway {
  /** A stop signal came: the process is on its way out. */
  now = false;

  private readonly onSignal = (sig: NodeJS.Signals) => {
    this.now = true;
    if (process.listenerCount(sig) === 1) {
      // nothing else handles it here: keep the default, which ends the process
      process.off(sig, this.onSignal);
      process.kill(process.pid, sig);
    }
  };

  watch(on: boolean): void {
    for (const sig of SIGNALS) {
      process.off(sig, this.onSignal);
      if (on) process.on(sig, this.onSignal);
    }
  }
}
