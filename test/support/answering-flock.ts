/**
 * Sheep that take their inbox the way extensions/sheep.ts does, over a MemoryWorld: deliveries in
 * the order they were made, each id at most once; one prompt at a time; a steer joins the prompt
 * that runs (and is listed in its result), waits while its target has not been taken, and is
 * dropped once that turn is over. A test says when each sheep answers.
 */
import type { MemoryWorld } from "./memory-world.ts";

interface Running {
  promptId: string;
  text: string;
  steered: string[];
}

interface Flockmate {
  taken: Set<string>;
  /** Every prompt taken, in order: a prompt taken twice would show here twice. */
  submitted: string[];
  /** Indexes of deliveries looked at for good. */
  handled: Set<number>;
  running?: Running | undefined;
}

export class AnsweringFlock {
  private readonly mates = new Map<string, Flockmate>();

  constructor(readonly world: MemoryWorld) {}

  private mate(agentId: string): Flockmate {
    let m = this.mates.get(agentId);
    if (!m) {
      m = { taken: new Set(), submitted: [], handled: new Set() };
      this.mates.set(agentId, m);
    }
    return m;
  }

  /** Goes through the sheep's deliveries as the sheep's inbox scan does. */
  private pump(agentId: string): void {
    const m = this.mate(agentId);
    const deliveries = this.world.mem(agentId).deliveries;
    for (const [i, d] of deliveries.entries()) {
      if (m.handled.has(i)) continue;
      if (d.kind === "interrupt" || d.kind === "renew") {
        m.handled.add(i); // interrupts are the test's; the world answers renewals itself
        continue;
      }
      const id = d.kind === "prompt" ? d.promptId : d.steerId;
      if (m.taken.has(id)) {
        m.handled.add(i); // written again: taken once already
        continue;
      }
      if (d.kind === "steer") {
        if (m.running?.promptId === d.target) m.running.steered.push(d.steerId);
        else if (!m.taken.has(d.target)) continue; // its turn has not begun
        m.taken.add(id);
        m.handled.add(i);
        continue;
      }
      if (m.running) continue; // prompts wait for the turn to end
      m.taken.add(id);
      m.handled.add(i);
      m.submitted.push(id);
      m.running = { promptId: id, text: d.text, steered: [] };
    }
  }

  /** The prompt the sheep works on now, if any. */
  running(agentId: string): Running | undefined {
    this.pump(agentId);
    return this.mate(agentId).running;
  }

  /** The sheep ends its turn: `re:<text>` (and the steers that got in); returns the prompt's id. */
  answerNext(agentId: string): string | undefined {
    this.pump(agentId);
    const m = this.mate(agentId);
    const r = m.running;
    if (!r) return undefined;
    m.running = undefined;
    this.world.answer(agentId, r.promptId, `re:${r.text}`, "completed", undefined, r.steered.length ? r.steered : undefined);
    this.pump(agentId);
    return r.promptId;
  }

  /** Prompt ids the sheep submitted to its pi, in order. */
  submitted(agentId: string): readonly string[] {
    this.pump(agentId);
    return this.mate(agentId).submitted;
  }
}
