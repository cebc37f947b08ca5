/**
 * What a `shepherd` call the model is still writing will start, read from its arguments so far
 * (pi parses a streaming tool call's JSON as it comes: a string still being written is there cut
 * short). Only values known to be whole count: a key followed by another, an element followed by
 * another, or the whole call once it ended. Nothing here runs the call: it only names sheep the
 * warm pool may boot ahead (src/core/lifecycle/warm-speculation.ts).
 */
import type { SpeculativeWant } from "../core/lifecycle/warm-speculation.ts";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The value of `key` if it is whole: another key came after it, or the object is whole. */
function whole(o: Obj, key: string, objectWhole: boolean): unknown {
  const keys = Object.keys(o);
  const i = keys.indexOf(key);
  if (i < 0 || (!objectWhole && i === keys.length - 1)) return undefined;
  return o[key];
}

const name = (v: unknown): string | undefined => (typeof v === "string" && v !== "" && v.length <= 200 ? v : undefined);

/**
 * A start the warm pool could serve: on this machine, in the shepherd's cwd, fresh and not
 * isolated. Any of those asked for (even before its value is whole) makes the task none of the
 * pool's: booting for it would only leave a sheep the call does not take.
 */
function poolServes(o: Obj): boolean {
  for (const k of ["host", "cwd", "resume"]) if (k in o) return false;
  if (o.isolate === true || o.sandbox === true) return false;
  return !("agentScope" in o) || o.agentScope === "user";
}

function task(o: unknown, isWhole: boolean): { agent: string; model?: string } | undefined {
  if (!isObj(o) || !poolServes(o)) return undefined;
  const agent = name(whole(o, "agent", isWhole));
  if (!agent) return undefined;
  const model = name(whole(o, "model", isWhole));
  return model ? { agent, model } : { agent };
}

/**
 * The sheep a call will start, by definition, as far as its arguments tell now: `start` one,
 * `delegate` one per task of its first wave (`maxParallel`), a chain its first step's. `complete`:
 * the call's arguments are all there.
 */
export function speculativeWants(args: unknown, o: { complete: boolean; maxParallel: number }): SpeculativeWant[] {
  if (!isObj(args)) return [];
  const action = whole(args, "action", o.complete);
  if (action !== "start" && action !== "delegate") return [];
  if (!poolServes(args)) return [];
  const found: { agent: string; model?: string }[] = [];
  const list = args.tasks ?? args.chain;
  if (action === "delegate" && Array.isArray(list)) {
    const listWhole = o.complete || Object.keys(args).indexOf(args.tasks !== undefined ? "tasks" : "chain") < Object.keys(args).length - 1;
    const wave = args.chain !== undefined ? 1 : Math.max(1, o.maxParallel);
    for (const [i, t] of list.slice(0, wave).entries()) {
      const one = task(t, listWhole || i < list.length - 1);
      if (one) found.push(one);
    }
  } else {
    const one = task(args, o.complete);
    if (one) found.push(one);
  }
  const wants = new Map<string, SpeculativeWant>();
  for (const f of found) {
    const key = `${f.agent}\u0000${f.model ?? ""}`;
    const w = wants.get(key);
    if (w) w.count++;
    else wants.set(key, { name: f.agent, count: 1, ...(f.model ? { model: f.model } : {}) });
  }
  return [...wants.values()];
}

/** A call's arguments past this are not followed: no call that starts sheep is that long. */
const MAX_ARGS_CHARS = 64 * 1024;
/** Calls followed at once; a model that never ends one cannot grow this. */
const MAX_CALLS = 32;

/**
 * Follows each `shepherd` call while the model writes it: the text of its arguments so far (pi's
 * `toolcall_delta` pieces) and what it asked the pool for last. Only a call still being written
 * boots anything: one whose arguments arrive whole (a model that does not stream them) runs at once
 * and starts its own sheep as before; booting them a moment earlier would gain nothing.
 */
export class StreamingCalls {
  private readonly calls = new Map<string, { text: string; asked?: string }>();

  /** The wants to give the pool now, or undefined: the same as asked already, none, or the arguments are whole. */
  next(callId: string, delta: string, wants: (complete: false) => SpeculativeWant[]): SpeculativeWant[] | undefined {
    let call = this.calls.get(callId);
    if (!call) {
      if (this.calls.size >= MAX_CALLS) this.calls.delete(this.calls.keys().next().value as string);
      call = { text: "" };
      this.calls.set(callId, call);
    }
    if (call.text.length + delta.length > MAX_ARGS_CHARS) return undefined;
    call.text += delta;
    if (parses(call.text)) return undefined;
    const now = wants(false);
    if (now.length === 0) return undefined;
    const key = JSON.stringify(now);
    if (call.asked === key) return undefined;
    call.asked = key;
    return now;
  }

  ended(callId: string): void {
    this.calls.delete(callId);
  }
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
