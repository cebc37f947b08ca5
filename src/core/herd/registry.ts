import { ShepherdError } from "../../domain/errors.ts";
import { type AgentId, idKind, parseAgentId } from "../../domain/ids.ts";
import type { AgentRecord, DelegationRecord, PromptRecord } from "../../ports/types.ts";

/** The live records of one shepherd, keyed by opaque id. */
export class Registry {
  readonly agents = new Map<string, AgentRecord>();
  readonly prompts = new Map<string, PromptRecord>();
  readonly delegations = new Map<string, DelegationRecord>();
  /** The warm pool's sheep: kept apart so that no view, label or id lookup of the herd sees them. */
  readonly warm = new Map<string, AgentRecord>();
  /**
   * Labels promised to starts that have not recorded their sheep yet. pi runs a turn's tool
   * calls in parallel, so two starts interleave at every await; a label is taken the moment
   * it is picked, not when its record lands.
   */
  private readonly reserved = new Set<string>();
  /** Session files promised to resumes in flight: two pi on one session would interleave it. */
  private readonly sessions = new Set<string>();

  agent(agentId: AgentId): AgentRecord {
    const rec = this.agents.get(agentId);
    if (rec) return rec;
    if (idKind(agentId) === "prompt") {
      throw new ShepherdError("unknown_agent", `"${agentId}" is a promptId, not an agentId; pass the agentId that start returned.`);
    }
    throw this.unknownAgent(agentId);
  }

  unknownAgent(agentId: string): ShepherdError {
    // A delegated sheep that came back to the warm pool is in no view: its task's answer was the delegate's result.
    if (this.warm.get(agentId)?.renewed)
      return new ShepherdError(
        "unknown_agent",
        `sheep "${agentId}" finished its delegated task and came back to the warm pool in a fresh conversation; its answer was in the delegate's result. Use action "herd" to list live sheep.`,
      );
    return new ShepherdError("unknown_agent", `no sheep with agentId "${agentId}"; use action "herd" to list live sheep.`);
  }

  /** Undefined with the reason when the id is not a known prompt. */
  prompt(promptId: string): PromptRecord | { missing: string } {
    const rec = this.prompts.get(promptId);
    if (rec) return rec;
    if (idKind(promptId) === "agent") {
      return { missing: `[unknown_prompt] "${promptId}" is an agentId, not a promptId; pass the promptId that prompt returned.` };
    }
    return { missing: `[unknown_prompt] no prompt with id "${promptId}".` };
  }

  /** The sheep's unsettled prompt, if it has one. */
  pending(rec: AgentRecord): PromptRecord | undefined {
    const active = rec.activePromptId ? this.prompts.get(rec.activePromptId) : undefined;
    return active && !active.settled ? active : undefined;
  }

  /** The live sheep wearing this label; labels of closed sheep may be reused, so they do not count. */
  liveByLabel(label: string): AgentRecord[] {
    return [...this.agents.values()].filter((a) => a.label === label && a.state !== "closed");
  }

  /**
   * A sheep named by its id or its live label, for every action that takes a sheep (labels of
   * closed sheep may be reused, so only live ones count). An id, or anything shaped like one, is
   * passed through so the caller gives its own precise error (closed, a promptId, another
   * shepherd's sheep). Two live sheep can share a label only after adopting another shepherd's
   * herd; such a label names neither, and the error lists both ids.
   */
  resolve(target: string, o: { closed?: boolean } = {}): AgentId {
    if (this.agents.has(target)) return parseAgentId(target);
    const byLabel = this.oneByLabel(target) ?? (o.closed ? this.newestByLabel(target) : undefined);
    if (byLabel) return byLabel.agentId;
    if (idKind(target) !== undefined) return parseAgentId(target);
    throw new ShepherdError("unknown_agent", `no live sheep with id or label "${target}"; the herd lists them (action "herd", /shepherd herd).`);
  }

  /** The one live sheep wearing this label, if any; `[ambiguous_label]` with the ids when several do. */
  oneByLabel(label: string): AgentRecord | undefined {
    const found = this.liveByLabel(label);
    if (found.length > 1) {
      throw new ShepherdError(
        "ambiguous_label",
        `label "${label}" names ${found.length} live sheep: ${found.map((a) => a.agentId).join(", ")}; pass one of these ids instead.`,
      );
    }
    return found[0];
  }

  /** The newest sheep, live or closed, that wore this label: closed sheep still have diffs and worktrees. */
  newestByLabel(label: string): AgentRecord | undefined {
    return [...this.agents.values()].reverse().find((a) => a.label === label);
  }

  labelTaken(label: string): boolean {
    return this.reserved.has(label) || this.liveByLabel(label).length > 0;
  }

  /** The sheep that runs (or is about to run) pi on this session file, if any. */
  sessionUser(sessionPath: string): AgentRecord | "starting" | undefined {
    if (this.sessions.has(sessionPath)) return "starting";
    for (const a of this.agents.values()) if (a.sessionPath === sessionPath && a.state !== "closed" && a.state !== "exited") return a;
    return undefined;
  }

  /** Holds a session file for a resume until release; call it in the same synchronous step as sessionUser. */
  reserveSession(sessionPath: string): () => void {
    this.sessions.add(sessionPath);
    return () => this.sessions.delete(sessionPath);
  }

  /** Holds a label until release; call both in the same synchronous step as the check. */
  reserveLabel(label: string): () => void {
    this.reserved.add(label);
    return () => this.reserved.delete(label);
  }
}
