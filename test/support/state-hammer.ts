/**
 * A separate process that contends for one state directory, so the lock is tested between real
 * processes (a lock inside one process proves nothing about another).
 *
 *   state-hammer.ts <dir> hammer <n> <rounds>   as owner H<n>: save 1..rounds records, checking
 *                                               after each save that nobody's records went missing
 *   state-hammer.ts <dir> hold <ms>             take the store's lock, print "locked", hold it for
 *                                               <ms>, and report whether state.json changed meanwhile
 *
 * Prints one JSON line with the outcome on stdout.
 */
import { parseAgentId } from "../../src/domain/ids.ts";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { AgentRecord } from "../../src/ports/types.ts";
import { FileStateStore } from "../../src/stores/state-store.ts";

const [dir, mode, a1, a2] = process.argv.slice(2);
if (!dir || !mode) throw new Error("usage: state-hammer.ts <dir> hammer <n> <rounds> | hold <ms>");
const store = new FileStateStore(dir);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function record(n: number, i: number): AgentRecord {
  return {
    // Well-formed (a_ + 10 of [0-9a-z]) so validation keeps it: owner digit, then the round.
    agentId: parseAgentId(`a_h${n}${String(i).padStart(8, "0")}`),
    agent: "echo",
    label: `h${n}-${i}`,
    runtime: "tmux",
    paneId: `%${i}`,
    cwd: "/",
    sessionPath: "/s.jsonl",
    createdAt: new Date().toISOString(),
    owner: `H${n}`,
    state: "idle",
  };
}

async function hammer(n: number, rounds: number) {
  const owner = `H${n}`;
  const seen = new Map<string, number>();
  const lost: string[] = [];
  let failedSaves = 0;
  for (let i = 1; i <= rounds; i++) {
    const agents = Array.from({ length: i }, (_, k) => record(n, k + 1));
    try {
      await store.save(owner, { agents, prompts: [] });
    } catch {
      failedSaves++;
      continue;
    }
    const { state } = await store.load();
    const counts = new Map<string, number>();
    for (const a of state.agents) counts.set(a.owner, (counts.get(a.owner) ?? 0) + 1);
    if (counts.get(owner) !== i) lost.push(`round ${i}: own records ${counts.get(owner) ?? 0}, expected ${i}`);
    // Every owner only ever adds records: fewer than seen before means a write dropped them.
    for (const [o, c] of seen) if ((counts.get(o) ?? 0) < c) lost.push(`round ${i}: ${o} went from ${c} to ${counts.get(o) ?? 0}`);
    for (const [o, c] of counts) seen.set(o, Math.max(c, seen.get(o) ?? 0));
    await sleep(5);
  }
  return { owner, failedSaves, lost };
}

async function hold(ms: number) {
  const file = join(dir!, "state.json");
  const snapshot = () => readFile(file, "utf8").catch(() => "<missing>");
  // The store's own lock, reached past `private` so the same script exercises any version of it.
  const lockable = store as unknown as { withLock<T>(fn: () => Promise<T>): Promise<T> };
  return lockable.withLock(async () => {
    const before = await snapshot();
    process.stdout.write("locked\n");
    await sleep(ms);
    const after = await snapshot();
    return { held: ms, changedWhileHeld: before !== after };
  });
}

const outcome = mode === "hammer" ? await hammer(Number(a1), Number(a2)) : await hold(Number(a1));
process.stdout.write(JSON.stringify(outcome) + "\n");
