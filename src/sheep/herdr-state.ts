/**
 * A sheep in a herdr pane tells herdr its true state, so herdr's sidebar shows it working, idle or
 * blocked as the shepherd's `status` does. herdr cannot see it by itself: its screen rule for pi
 * matches only `Working...`, which pi >= 0.85 no longer draws (#3629), and pi's own dialogs are never
 * reported as blocked (#4143). This is for display only: the shepherd's status comes from the
 * sheep's files, never from herdr.
 *
 * Two ways, never both (two sources for one pane would compete, herdr-contract.md §3.2):
 * - herdr's official pi integration installed (`herdr integration install pi`): it already reports
 *   working and idle, so only what it cannot see goes to it, as the `herdr:blocked` events it counts.
 * - otherwise: `herdr pane report-agent` (every version since 0.3.0) with a source of our own.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { cliSafeLabel, REPORT_SOURCE } from "../runtimes/herdr/labels.ts";

export interface SheepState {
  working: boolean;
  /** What the sheep waits for, from any source, when it is blocked. */
  blocked?: string;
  /** The same for the sources no herdr integration sees: pi's own dialogs, a question to the shepherd. */
  ownBlocked?: string;
}

export interface HerdrStateSink {
  readonly mode: "bus" | "report";
  /** The sheep's state now; repeats of the last one send nothing. */
  update(s: SheepState): void;
  /** Resolves once every report made so far has been sent (tests; reports never throw). */
  settled(): Promise<void>;
}

interface Bus {
  emit(channel: string, data: unknown): void;
}

/** Where `herdr integration install pi` puts the official extension. */
function integrationInstalled(env: NodeJS.ProcessEnv): boolean {
  const agentDir = env.PI_CODING_AGENT_DIR || join(homedir(), ".pi", "agent");
  return existsSync(join(agentDir, "extensions", "herdr-agent-state.ts"));
}

/**
 * The sink for this sheep, or undefined when it does not run in a herdr pane. HERDR_PANE_ID alone is
 * not enough: a tmux server started from inside herdr hands herdr's variables to every tmux pane,
 * which must not report on the pane the shepherd runs in.
 */
export function herdrStateSink(env: NodeJS.ProcessEnv, bus: Bus, onOwnEvent: (own: boolean) => void): HerdrStateSink | undefined {
  const pane = env.HERDR_PANE_ID;
  if (env.HERDR_ENV !== "1" || !pane || env.TMUX || env.TMUX_PANE) return undefined;
  let sending: Promise<void> = Promise.resolve();
  let last: string | undefined;

  if (integrationInstalled(env)) {
    let blocked = false;
    return {
      mode: "bus",
      update({ ownBlocked: label }) {
        const now = label !== undefined;
        if (now === blocked) return;
        blocked = now;
        // The sheep itself listens on this bus too (other extensions' dialogs): it must not count its own.
        onOwnEvent(true);
        try {
          bus.emit("herdr:blocked", now ? { active: true, label } : { active: false });
        } finally {
          onOwnEvent(false);
        }
      },
      settled: () => Promise.resolve(),
    };
  }

  // The server's own binary (0.8.1+) speaks its protocol; the shepherd's choice comes first.
  const bin = env.PI_SHEPHERD_HERDR_BIN || env.HERDR_BIN_PATH || "herdr";
  // `--seq` must rise strictly per source, across restarts of pi too (herdr ignores stale ones).
  let seq = Date.now() * 1000;
  return {
    mode: "report",
    update(s) {
      const state = s.blocked !== undefined ? "blocked" : s.working ? "working" : "idle";
      const message = s.blocked !== undefined ? cliSafeLabel(s.blocked, "blocked") : undefined;
      const key = `${state}\n${message ?? ""}`;
      if (key === last) return;
      last = key;
      const args = ["pane", "report-agent", pane, "--source", REPORT_SOURCE, "--agent", "pi", "--state", state, "--seq", String(++seq)];
      if (message) args.push("--message", message);
      sending = sending.then(() =>
        execa(bin, args, { env, extendEnv: false, stdin: "ignore", reject: false, timeout: 10_000 }).then(
          () => undefined,
          () => undefined,
        ),
      );
    },
    settled: () => sending,
  };
}
