/** The workspace port routed by host (see table.ts): git runs on the machine that holds the checkout. */
import { ShepherdError } from "../domain/errors.ts";
import type {
  BranchState,
  Baseline,
  Diffstat,
  Isolated,
  IsolateRequest,
  MarkedWorktree,
  Landed,
  Synced,
  Workspace,
  Worktree,
  WorktreeState,
} from "../ports/workspace.ts";
import type { HostTable } from "./table.ts";

export class RoutedWorkspace implements Workspace {
  constructor(private readonly table: HostTable) {}

  #on(host: string | undefined): Workspace {
    const ws = this.table.portsOf(host).workspace;
    if (!ws)
      throw new ShepherdError(
        "not_a_repository",
        `${host === undefined ? "this shepherd" : `host "${host}"`} has no git support; start the sheep without isolate.`,
      );
    return ws;
  }

  async baseline(cwd: string, agentId?: string): Promise<Baseline | undefined> {
    const host = agentId === undefined ? undefined : this.table.hostOf(agentId);
    const b = await this.#on(host).baseline(cwd, agentId);
    return b && host !== undefined ? { ...b, host } : b;
  }

  async diff(baseline: Baseline, o: { patchPath: string; inlineLines: number }): Promise<Diffstat> {
    const d = await this.#on(baseline.host).diff(baseline, o);
    // The host's own answer knows no host: the evidence's baseline (a follow-up starts from it) is stamped here.
    return baseline.host === undefined ? d : { ...d, baseline: { ...d.baseline, host: baseline.host } };
  }

  async isolate(o: IsolateRequest): Promise<Isolated> {
    // A chain's step starts from the worktree of the step before: that is a checkout on its machine only.
    if (o.from && o.from.host !== o.host) {
      const where = (h: string | undefined) => (h === undefined ? "this machine" : `host "${h}"`);
      throw new ShepherdError(
        "invalid_params",
        `this step runs on ${where(o.host)}, but the worktree it would start from (the step before's) is on ${where(o.from.host)}: run the steps of a chain with isolate on one machine, or this step without isolate.`,
      );
    }
    const made = await this.#on(o.host).isolate(o);
    return o.host === undefined ? made : { ...made, worktree: { ...made.worktree, host: o.host } };
  }

  inspect(wt: Worktree): Promise<WorktreeState> {
    return this.#on(wt.host).inspect(wt);
  }

  remove(wt: Worktree): Promise<void> {
    return this.#on(wt.host).remove(wt);
  }

  land(wt: Worktree, o: { squash: boolean; label: string; message?: string }): Promise<Landed> {
    return this.#on(wt.host).land(wt, o);
  }

  sync(wt: Worktree, o: { label: string }): Promise<Synced> {
    return this.#on(wt.host).sync(wt, o);
  }

  conflicts(wt: Worktree): Promise<string[]> {
    return this.#on(wt.host).conflicts(wt);
  }

  /** Undefined where the host's agent cannot tell (an older one): land and sync there still say where it stands. */
  async branchState(wt: Worktree): Promise<BranchState | undefined> {
    return this.#on(wt.host).branchState?.(wt);
  }

  /** This machine's marks only: a host's are its own shepherd's to clean. */
  async marked(): Promise<MarkedWorktree[]> {
    return (await this.table.portsOf(undefined).workspace?.marked?.()) ?? [];
  }
}
