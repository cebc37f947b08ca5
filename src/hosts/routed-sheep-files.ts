/** The sheep-files port routed by host (see table.ts): the sheep's files on the machine it runs on. */
import { isShepherdError, ShepherdError } from "../domain/errors.ts";
import type { Delivery, PrepareRequest, PreparedSheep, ReplyOutcome, SheepFiles, SheepResult, SheepSnapshot } from "../ports/sheep-files.ts";
import type { Conversation, EgressReport, ResumeCard, SheepMessage } from "../ports/types.ts";
import type { HostTable } from "./table.ts";

export class RoutedSheepFiles implements SheepFiles {
  constructor(private readonly table: HostTable) {}

  async prepare(req: PrepareRequest): Promise<PreparedSheep> {
    if (req.host === undefined) return this.table.local.files.prepare(req);
    const ports = this.table.remote(req.host);
    this.table.starting(req.agentId, req.host);
    // Before the host is asked: a shepherd killed from here on leaves a pane there that this mark claims.
    await this.table.starts?.mark(req.agentId, req.host);
    // A sandboxed sheep there runs in bubblewrap there, behind that host's proxy; a host that cannot says so, and nothing runs.
    return ports.files.prepare(req).catch((e: unknown) => {
      if (isShepherdError(e, "sandbox_unavailable") && !e.message.includes(`host "${req.host}"`)) {
        throw new ShepherdError("sandbox_unavailable", `on host "${req.host}": ${e.message.replace(/^\[sandbox_unavailable\] /, "")}`);
      }
      throw e;
    });
  }

  /** This machine's and every answering host's; a host's found here is routed there from now on (a prune discards it there). */
  async staleSpecs(olderThanMs: number): Promise<{ agentId: string; host?: string }[]> {
    const local = (await this.table.local.files.staleSpecs?.(olderThanMs)) ?? [];
    const remote = await Promise.all(
      (await this.table.markedHosts()).map((host) =>
        Promise.resolve()
          .then(() => this.table.remote(host).files.staleSpecs?.(olderThanMs) ?? [])
          .then((found) => found.map((s) => ({ agentId: s.agentId, host })))
          .catch(() => [] as { agentId: string; host: string }[]),
      ),
    );
    const all: { agentId: string; host?: string }[] = [...local.map((s) => ({ agentId: s.agentId })), ...remote.flat()];
    for (const s of all) if (s.host !== undefined && this.table.hostOf(s.agentId) === undefined) this.table.starting(s.agentId, s.host);
    return all;
  }

  snapshot(agentId: string): Promise<SheepSnapshot> {
    return this.table.forAgent(agentId).files.snapshot(agentId);
  }

  /** Only this machine's pids can be asked by a system call; a host's sheep are the multiplexer's to tell. */
  running(agentId: string): boolean | undefined {
    return this.table.hostOf(agentId) === undefined ? this.table.local.files.running?.(agentId) : undefined;
  }

  result(agentId: string, promptId: string): Promise<SheepResult | undefined> {
    return this.table.forAgent(agentId).files.result(agentId, promptId);
  }

  submit(agentId: string, delivery: Delivery): Promise<void> {
    return this.table.forAgent(agentId).files.submit(agentId, delivery);
  }

  messages(agentId: string): Promise<SheepMessage[]> {
    return this.table.forAgent(agentId).files.messages(agentId);
  }

  replies(agentId: string): Promise<Map<string, "replied" | "expired">> {
    return this.table.forAgent(agentId).files.replies(agentId);
  }

  async replyText(agentId: string, messageId: string): Promise<string | undefined> {
    const { files: host } = this.table.forAgent(agentId);
    return host.replyText ? host.replyText(agentId, messageId) : undefined;
  }

  reply(agentId: string, messageId: string, text: string): Promise<ReplyOutcome> {
    return this.table.forAgent(agentId).files.reply(agentId, messageId, text);
  }

  subscribe(agentId: string, onChange: () => void): () => void {
    try {
      return this.table.forAgent(agentId).files.subscribe(agentId, onChange);
    } catch {
      // a host no longer in the settings has nothing to watch; its sheep's calls say why
      return () => {};
    }
  }

  evidencePath(agentId: string, promptId: string): Promise<string> {
    return this.table.forAgent(agentId).files.evidencePath(agentId, promptId);
  }

  async cleanup(agentId: string): Promise<string | undefined> {
    const kept = await this.table.forAgent(agentId).files.cleanup(agentId);
    await this.table.starts?.unmark(agentId);
    return kept;
  }

  async residentKb(agentId: string): Promise<number | undefined> {
    return this.table.forAgent(agentId).files.residentKb?.(agentId);
  }

  async renewed(agentId: string, sessionPath: string): Promise<string | undefined> {
    return this.table.forAgent(agentId).files.renewed?.(agentId, sessionPath);
  }

  async relabel(agentId: string, label: string): Promise<void> {
    await this.table.forAgent(agentId).files.relabel?.(agentId, label);
  }

  async discard(agentId: string): Promise<void> {
    await this.table.forAgent(agentId).files.discard(agentId);
    await this.table.starts?.unmark(agentId);
  }

  async resumeCard(agentId: string): Promise<ResumeCard | undefined> {
    const host = this.table.hostOf(agentId);
    if (host === undefined) return this.table.local.files.resumeCard(agentId);
    const card = await this.table.remote(host).files.resumeCard(agentId);
    return card && { ...card, host };
  }

  /** This machine's cards, and those of every host that answers, each naming its host. */
  async resumeCards(): Promise<ResumeCard[]> {
    const local = await this.table.local.files.resumeCards();
    const remote = await Promise.all(
      this.table.names.map((host) =>
        Promise.resolve()
          .then(() => this.table.remote(host).files.resumeCards())
          .then((cards) => cards.map((c) => ({ ...c, host })))
          .catch(() => [] as ResumeCard[]),
      ),
    );
    return [...local, ...remote.flat()].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  conversation(agentId: string, turns: number): Promise<Conversation> {
    return this.table.forAgent(agentId).files.conversation(agentId, turns);
  }

  /** Read on the machine the sheep runs on, where its proxy wrote the log. */
  async egress(agentId: string, entries: number): Promise<EgressReport | undefined> {
    return this.table.forAgent(agentId).files.egress?.(agentId, entries);
  }
}
