/**
 * Resuming: a closed or exited sheep's conversation goes on in a new sheep that runs pi on the
 * kept session file, with the same definition, cwd and model. Sheep are found by the cards their
 * host keeps beside each session, so a sheep closed by a shepherd that quit, or one whose record
 * fell out of the bounded state file, can still be resumed.
 */
import { close } from "./close.ts";
import { ShepherdError } from "../../domain/errors.ts";
import type { Herd } from "../herd/herd.ts";
import { idKind } from "../../domain/ids.ts";
import type { AgentRecord, ResumeCard } from "../../ports/types.ts";

const stopped = (r: AgentRecord) => r.state === "closed" || r.state === "exited";

/** The card of the sheep named by id or label, once it is sure the sheep may be resumed. */
export async function resumable(herd: Herd, target: string): Promise<ResumeCard> {
  const card = await findCard(herd, target);
  await refuseIfRunning(herd, card);
  return card;
}

async function findCard(herd: Herd, target: string): Promise<ResumeCard> {
  const { files: host } = herd.opts;
  const kind = idKind(target);
  if (kind === "prompt") throw new ShepherdError("unknown_agent", `"${target}" is a promptId; resume takes a sheep's agentId or label.`);
  if (kind === "agent") {
    const card = await host.resumeCard(target);
    if (card) return card;
    if (herd.registry.agents.has(target)) {
      throw new ShepherdError("not_resumable", `sheep ${target} left no conversation to resume (it answered no prompt).`);
    }
    throw new ShepherdError("unknown_agent", `no sheep "${target}" with a kept session; /shepherd resume completes the ones that can be resumed.`);
  }
  const live = herd.registry.oneByLabel(target);
  if (live && !stopped(live)) throw running(live);
  if (live) {
    // Ours and exited: that sheep is the one meant, not an older one that wore the label.
    const card = await host.resumeCard(live.agentId);
    if (!card) throw new ShepherdError("not_resumable", `sheep ${live.agentId} (${live.label}) left no conversation to resume (it answered no prompt).`);
    return card;
  }
  const cards = (await host.resumeCards()).filter((c) => c.label === target);
  const card = cards[cards.length - 1];
  if (!card) {
    // A sheep we know wore the label: it exists, it only never wrote a session.
    const known = herd.registry.newestByLabel(target);
    if (known) throw new ShepherdError("not_resumable", `sheep ${known.agentId} (${known.label}) left no conversation to resume (it answered no prompt).`);
    throw new ShepherdError(
      "unknown_agent",
      `no closed or exited sheep labelled "${target}" has a kept session; /shepherd resume completes the ones that can be resumed.`,
    );
  }
  return card;
}

async function refuseIfRunning(herd: Herd, card: ResumeCard): Promise<void> {
  const mine = herd.registry.agents.get(card.agentId);
  if (mine && !stopped(mine)) throw running(mine);
  const user = herd.registry.sessionUser(card.sessionPath);
  if (user) throw inUse(card, user);
  // Sheep of other shepherds on this agent dir, as the state file has them.
  const store = herd.opts.store;
  if (!store) return;
  const { state } = await store.load().catch(() => ({ state: { agents: [] as AgentRecord[] } }));
  const alive = herd.opts.ownerAlive ?? (() => true);
  for (const r of state.agents) {
    // Ours in the registry were asked above; one of ours only on disk (not adopted) is an orphan like any other.
    if (herd.registry.agents.has(r.agentId) || stopped(r) || (r.agentId !== card.agentId && r.sessionPath !== card.sessionPath)) continue;
    if (r.owner !== herd.opts.owner && alive(r.owner)) {
      throw new ShepherdError(
        "not_owned",
        `the conversation of ${card.agentId} goes on in ${r.agentId} (${r.label}) of another running shepherd; only it may use it.`,
      );
    }
    // A shepherd that died left this sheep; its pi may still run in its pane.
    // Unknown counts as running: two pis must never write one session.
    const now = await herd.liveness.fresh(r);
    if (now === undefined || now.state === "alive") {
      const whose = r.owner === herd.opts.owner ? "recorded by this shepherd and not re-attached yet" : "of a shepherd that quit";
      throw new ShepherdError(
        "not_resumable",
        `${r.agentId} (${r.label}) still runs on this conversation in pane ${r.paneId} ${whose}; restart pi to adopt it, or close that pane.`,
      );
    }
  }
}

/**
 * Holds the session for one start. The old sheep, if it is ours and merely exited, is closed
 * first: its pane may still show a shell, and it must not answer for a conversation that moved on.
 */
export async function takeSession(herd: Herd, card: ResumeCard): Promise<() => void> {
  const user = herd.registry.sessionUser(card.sessionPath);
  if (user) throw inUse(card, user);
  const release = herd.registry.reserveSession(card.sessionPath);
  try {
    const old = herd.registry.agents.get(card.agentId);
    if (old?.state === "exited" && old.owner === herd.opts.owner) {
      await close(herd, old.agentId).catch((e: unknown) => {
        // A prune alongside forgot it (its pane was gone): nothing of it is left to answer.
        if (herd.registry.agents.has(old.agentId)) throw e;
      });
    }
    return release;
  } catch (e) {
    release();
    throw e;
  }
}

function running(r: AgentRecord): ShepherdError {
  return new ShepherdError("not_resumable", `sheep ${r.agentId} (${r.label}) is still running (${r.state}); prompt it instead, or close it first.`);
}

function inUse(card: ResumeCard, user: AgentRecord | "starting"): ShepherdError {
  const who = user === "starting" ? "a sheep that is starting" : `${user.agentId} (${user.label})`;
  return new ShepherdError("not_resumable", `the conversation of ${card.agentId} already goes on in ${who}; prompt that one, or close it first.`);
}
