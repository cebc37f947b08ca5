/**
 * Records and panes against each other: a record whose pane is gone (stale), and a pane that
 * carries a sheep's mark that no record knows (orphan). Read only: each comes with the command
 * that cleans it, and nothing is cleaned here.
 */
import { errorText } from "../domain/errors.ts";
import type { AgentRecord } from "../ports/types.ts";
import type { PaneLiveness, PaneRef, RuntimeName } from "../ports/runtime.ts";
import { peekState } from "../stores/state-store.ts";
import { resolveHerdrBin } from "../runtimes/herdr/cli.ts";
import { makeRuntime } from "../runtimes/make.ts";
import { shellQuote } from "../runtimes/shell-line.ts";
import { plain } from "./config.ts";
import { pass, warn, type Check } from "./types.ts";
import { specChecks } from "./specs.ts";
import { worktreeChecks } from "./worktrees.ts";

export interface HerdCheckInput {
  stateDir: string;
  env: NodeJS.ProcessEnv;
  /** The records this shepherd holds in memory, newer than the file when a write failed. */
  records: readonly AgentRecord[];
  /** This shepherd, and whether another owner still runs. */
  owner?: string;
  ownerAlive(owner: string): boolean;
  /** The runtime whose panes are searched for orphans. */
  chosen?: RuntimeName;
}

export async function herdChecks(o: HerdCheckInput): Promise<Check[]> {
  const checks: Check[] = [];
  const file = await peekState(o.stateDir);
  if (file.problem) checks.push(warn("state file", plain(file.problem), "the next shepherd to start moves it aside and starts empty; or remove it"));
  if (file.rejected)
    checks.push(warn("state file", `${file.rejected} records fail validation`, "the next shepherd to start sets them aside (state.rejected-*.json)"));
  const all = new Map<string, AgentRecord>();
  for (const r of [...file.agents, ...o.records]) all.set(r.agentId, r);
  const live = [...all.values()].filter((r) => r.state !== "closed");
  checks.push(...(await staleChecks(o, live)));
  if (o.chosen) checks.push(...(await orphanChecks(o, o.chosen, new Set(live.map((r) => r.agentId)))));
  checks.push(...(await worktreeChecks(o, all.values())));
  checks.push(...(await specChecks({ stateDir: o.stateDir, known: new Set(all.keys()) })));
  return checks;
}

async function staleChecks(o: HerdCheckInput, live: AgentRecord[]): Promise<Check[]> {
  const checks: Check[] = [];
  for (const name of ["tmux", "herdr"] as const) {
    const mine = live.filter((r) => r.runtime === name);
    if (mine.length === 0) continue;
    let alive: Map<string, PaneLiveness>;
    try {
      alive = await makeRuntime(name, o.env).liveness(mine.map((r) => ({ paneId: r.paneId, agentId: r.agentId })));
    } catch (e) {
      checks.push(warn("records", `${mine.length} records on ${name} could not be checked: ${plain(errorText(e)).slice(0, 160)}`, `see the ${name} check`));
      continue;
    }
    for (const r of mine) {
      if (alive.get(r.agentId)?.state !== "gone") continue;
      const someoneElse = r.owner !== o.owner && o.ownerAlive(r.owner);
      const fix = someoneElse ? `run /shepherd prune in the shepherd that owns it (pid ${r.owner.split(":")[0]})` : "/shepherd prune";
      checks.push(warn("stale record", `${r.agentId} (${plain(r.label)}) on ${name} pane ${plain(r.paneId)}: the pane is gone`, fix));
    }
  }
  if (checks.length === 0) checks.push(pass("records", live.length ? `${live.length} live records, every pane there` : "no live records"));
  return checks;
}

async function orphanChecks(o: HerdCheckInput, runtime: RuntimeName, known: Set<string>): Promise<Check[]> {
  let marked: PaneRef[];
  try {
    marked = await makeRuntime(runtime, o.env).markedPanes();
  } catch (e) {
    return [warn("orphan panes", `could not list ${runtime} panes: ${plain(errorText(e)).slice(0, 160)}`, `see the ${runtime} check`)];
  }
  const orphans = marked.filter((p) => !known.has(p.agentId));
  if (orphans.length === 0) return [pass("orphan panes", `none on ${runtime}${marked.length ? ` (${marked.length} sheep panes, each with a record)` : ""}`)];
  return orphans.map((p) =>
    warn(
      "orphan pane",
      `${runtime} pane ${plain(p.paneId)} carries the mark of ${plain(p.agentId)}, which no record knows`,
      closeCommand(runtime, p.paneId, o.env),
    ),
  );
}

/** The command a person runs to close an orphan; shown, never run here. */
function closeCommand(runtime: RuntimeName, paneId: string, env: NodeJS.ProcessEnv): string {
  if (runtime === "herdr") return `${shellQuote(resolveHerdrBin(env))} pane close ${shellQuote(paneId)}`;
  const socket = env.PI_SHEPHERD_TMUX_SOCKET ? ` -S ${shellQuote(env.PI_SHEPHERD_TMUX_SOCKET)}` : "";
  return `tmux${socket} kill-pane -t ${shellQuote(paneId)}`;
}
