/**
 * The outbox and the notifier (issue 35, notifications): written before sent, retried with backoff,
 * expired after a day, one notice per sheep within the window, a channel's rate limit with its
 * "N more" line, a sheep's words printable and cut, pending notices sent by the next shepherd,
 * and one sender among two shepherds. A fake clock and an in-memory channel; the outbox is real files.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { HerdEvent, HerdEventKind } from "../../../src/ports/events.ts";
import { FileSenderLock, type SenderLock } from "../../../src/notify/lock.ts";
import type { Notice } from "../../../src/notify/notice.ts";
import { BACKOFF_FIRST_MS, type Channel, COALESCE_MS, IDLE_LOOK_MS, Notifier, RATE_NOTICES, RATE_WINDOW_MS } from "../../../src/notify/notifier.ts";
import { EXPIRY_MS, entryId, Outbox } from "../../../src/notify/outbox.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");

class MemoryChannel implements Channel {
  readonly type = "webhook" as const;
  readonly got: Notice[] = [];
  failing = false;
  tries = 0;
  onSend: ((n: Notice) => void) | undefined;
  constructor(
    readonly id = "0-webhook-00000000",
    private readonly kinds?: HerdEventKind[],
  ) {}
  wants(kind: HerdEventKind): boolean {
    return !this.kinds || this.kinds.includes(kind);
  }
  async send(n: Notice): Promise<void> {
    this.tries++;
    this.onSend?.(n);
    if (this.failing) throw new Error("receiver down");
    this.got.push(n);
  }
}

const heldLock: SenderLock = { take: async () => true, release: async () => undefined };

let dir: string;
let now: number;
let n = 0;

function ev(agentId: string, o: Partial<HerdEvent> = {}): HerdEvent {
  n++;
  return {
    kind: "question",
    key: `question:m_${n}`,
    agentId,
    label: `sheep-${agentId}`,
    host: "local",
    text: `question ${n}`,
    at: now,
    messageId: `m_${n}`,
    ...o,
  };
}

function notifier(ch: Channel[], lock: SenderLock = heldLock): Notifier {
  return new Notifier({ outbox: new Outbox(join(dir, "outbox")), channels: ch, lock, now: () => now, link: () => "http://127.0.0.1:4000/" });
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pi-shepherd-notify-"));
  now = T0;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the outbox", () => {
  it("is written before a notice is sent, private, and names no channel's URL", async () => {
    const ch = new MemoryChannel();
    const seen: string[][] = [];
    ch.onSend = () => seen.push(readdirSync(join(dir, "outbox")).filter((f) => f.endsWith(".json")));
    const nf = notifier([ch]);
    const e = ev("a_1");
    nf.publish(e);
    const file = join(dir, "outbox", `${entryId(e.key)}.json`);
    assert.ok(existsSync(file), "on disk as soon as published");
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, "outbox")).mode & 0o777, 0o700);
    now += COALESCE_MS;
    await nf.tick();
    assert.equal(ch.got.length, 1);
    assert.deepEqual(seen, [[`${entryId(e.key)}.json`]]);
  });

  it("sends each key once: the same event published again, or after it went out, is no second notice", async () => {
    const ch = new MemoryChannel();
    const nf = notifier([ch]);
    const e = ev("a_1");
    nf.publish(e);
    nf.publish({ ...e, at: now + 1 });
    now += COALESCE_MS;
    await nf.tick();
    assert.equal(ch.got.length, 1, "the first went out");
    nf.publish({ ...e, at: now });
    now += COALESCE_MS;
    await nf.tick();
    assert.equal(ch.got.length, 1);
    assert.equal(ch.got[0]!.text.split("\n").filter((l) => l.startsWith("- ")).length, 1);
    // What went out keeps no text, only the key's mark.
    const kept = JSON.parse(readFileSync(join(dir, "outbox", `${entryId(e.key)}.json`), "utf8"));
    assert.equal(kept.event.text, "");
  });

  it("coalesces one sheep's events within the window into one notice, others in their own", async () => {
    const ch = new MemoryChannel();
    const nf = notifier([ch]);
    nf.publish(ev("a_1"));
    now += 2_000;
    nf.publish(ev("a_1", { kind: "blocked", key: "blocked:a_1", text: "waits on a dialog: Allow?" }));
    nf.publish(ev("a_2"));
    now += 2_000;
    await nf.tick();
    assert.equal(ch.got.length, 0, "nothing before the window of the first event ends");
    now = T0 + COALESCE_MS;
    await nf.tick();
    assert.equal(ch.got.length, 1, "a_1's window ended; a_2's not yet");
    assert.equal(ch.got[0]!.agentId, "a_1");
    assert.match(ch.got[0]!.title, /asks a question, waits on a dialog/);
    now = T0 + 2_000 + COALESCE_MS;
    await nf.tick();
    assert.deepEqual(
      ch.got.map((x) => x.agentId),
      ["a_1", "a_2"],
    );
  });

  it("retries a failing channel with backoff, with the same notice id, and sends once when it is back", async () => {
    const ch = new MemoryChannel();
    ch.failing = true;
    const nf = notifier([ch]);
    nf.publish(ev("a_1"));
    now += COALESCE_MS;
    await nf.tick();
    assert.equal(ch.tries, 1);
    now += BACKOFF_FIRST_MS - 1;
    await nf.tick();
    assert.equal(ch.tries, 1, "not before the backoff");
    now += 1;
    await nf.tick();
    assert.equal(ch.tries, 2);
    now += BACKOFF_FIRST_MS;
    await nf.tick();
    assert.equal(ch.tries, 2, "the second wait is twice the first");
    ch.failing = false;
    const ids = new Set<string>();
    ch.onSend = (x) => ids.add(x.id);
    now += BACKOFF_FIRST_MS;
    await nf.tick();
    now += RATE_WINDOW_MS;
    await nf.tick();
    assert.equal(ch.got.length, 1);
    assert.equal(ids.size, 1);
  });

  it("drops an entry that could not go out in EXPIRY_MS (24 h)", async () => {
    assert.equal(EXPIRY_MS, 24 * 3_600_000);
    const ch = new MemoryChannel();
    ch.failing = true;
    const nf = notifier([ch]);
    const e = ev("a_1");
    nf.publish(e);
    now += EXPIRY_MS - 1;
    await nf.tick();
    assert.ok(existsSync(join(dir, "outbox", `${entryId(e.key)}.json`)));
    now += 1;
    await nf.tick();
    assert.ok(!existsSync(join(dir, "outbox", `${entryId(e.key)}.json`)));
    ch.failing = false;
    const tries = ch.tries;
    now += RATE_WINDOW_MS;
    await nf.tick();
    assert.equal(ch.tries, tries, "nothing left to send");
  });

  it("holds a channel to its rate limit, the last notice of the window saying how many more", async () => {
    const ch = new MemoryChannel();
    const nf = notifier([ch]);
    const sheep = RATE_NOTICES + 4;
    for (let i = 0; i < sheep; i++) nf.publish(ev(`a_${i}`));
    now += COALESCE_MS;
    await nf.tick();
    assert.equal(ch.got.length, RATE_NOTICES);
    assert.match(ch.got.at(-1)!.text, /4 more \(of 4 sheep or hosts\), held by the rate limit/);
    now += RATE_WINDOW_MS;
    await nf.tick();
    assert.equal(ch.got.length, RATE_NOTICES, "what the line counted is not sent again");
  });

  it("40 events of one sheep in a minute arrive as a handful of notices", async () => {
    const ch = new MemoryChannel();
    const nf = notifier([ch]);
    for (let i = 0; i < 40; i++) {
      nf.publish(ev("a_1"));
      now += 1_500;
      await nf.tick();
    }
    now += COALESCE_MS;
    await nf.tick();
    assert.ok(ch.got.length <= RATE_NOTICES, `${ch.got.length} notices`);
    const told = ch.got.reduce((k, x) => k + x.text.split("\n").filter((l) => l.startsWith("- ")).length, 0);
    assert.ok(told >= 8, "every notice lists what it coalesced");
  });

  it("cuts a sheep's words and makes them printable", async () => {
    const ch = new MemoryChannel();
    const nf = notifier([ch]);
    nf.publish(ev("a_1", { label: "evil\u001b]0;title\u0007", text: `\u001b[2J\u001b]8;;http://x\u0007click\u202e${"x".repeat(5000)}` }));
    now += COALESCE_MS;
    await nf.tick();
    const got = ch.got[0]!;
    for (const s of [got.title, got.text, got.label ?? ""]) assert.doesNotMatch(s, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    const line = got.text.split("\n")[0]!;
    assert.ok(line.length <= 320, `${line.length} characters`);
    assert.match(line, /…$/);
  });

  it("names the sheep, its host, what it needs and how to act", async () => {
    const ch = new MemoryChannel();
    const nf = notifier([ch]);
    nf.publish(ev("a_7", { host: "build", text: "Which branch?", messageId: "m_abc" }));
    now += COALESCE_MS;
    await nf.tick();
    const got = ch.got[0]!;
    assert.match(got.title, /sheep-a_7 \(a_7\) on build asks a question/);
    assert.match(got.text, /Which branch\?/);
    assert.match(got.text, /Act: \/shepherd reply a_7 m_abc <your answer>/);
    assert.match(got.text, /Panel: http:\/\/127\.0\.0\.1:4000\//);
  });

  it("sends only to channels that want the event", async () => {
    const q = new MemoryChannel("0-webhook-00000000", ["question"]);
    const f = new MemoryChannel("1-webhook-00000000", ["failed"]);
    const nf = notifier([q, f]);
    nf.publish(ev("a_1", { kind: "failed", key: "failed:p_1", text: "pi ended" }));
    now += COALESCE_MS;
    await nf.tick();
    assert.equal(q.got.length, 0);
    assert.equal(f.got.length, 1);
  });

  it("a shepherd that quit or crashed leaves its pending notices for the next one", async () => {
    const first = notifier([new MemoryChannel()]);
    first.publish(ev("a_1"));
    // first never sends: it was killed before its window ended
    const ch = new MemoryChannel();
    now += COALESCE_MS;
    await notifier([ch]).tick();
    assert.equal(ch.got.length, 1);
  });

  it("reads a quiet outbox every IDLE_LOOK_MS, not every tick; another shepherd's event goes out after that look", async () => {
    const ch = new MemoryChannel();
    const nf = notifier([ch]);
    await nf.tick(); // nothing pending: quiet
    // Another shepherd (no lock) writes an event that is due at once.
    now = T0 + 1_000;
    notifier([new MemoryChannel()], { take: async () => false, release: async () => undefined }).publish(ev("a_9", { at: T0 - COALESCE_MS }));
    now = T0 + IDLE_LOOK_MS - 1;
    await nf.tick();
    assert.equal(ch.got.length, 0, "not looked at again yet");
    now = T0 + IDLE_LOOK_MS;
    await nf.tick();
    assert.deepEqual(
      ch.got.map((x) => x.agentId),
      ["a_9"],
    );
  });

  it("removes a file in the outbox that is not a well-formed entry", async () => {
    const nf = notifier([new MemoryChannel()]);
    nf.publish(ev("a_1"));
    const bad = join(dir, "outbox", `${"0".repeat(32)}.json`);
    writeFileSync(bad, JSON.stringify({ v: 1, id: "0".repeat(32), event: { kind: "rm -rf" }, channels: {} }));
    assert.equal(new Outbox(join(dir, "outbox")).all().length, 1);
    assert.ok(!existsSync(bad));
  });
});

describe("two shepherds", () => {
  it("only the holder of the sender lock sends; the other's events go out through it, and it takes over once let go", async () => {
    const lockA = new FileSenderLock(dir);
    const lockB = new FileSenderLock(dir);
    const a = new MemoryChannel();
    const b = new MemoryChannel();
    const nfA = notifier([a], lockA);
    const nfB = notifier([b], lockB);
    try {
      await nfA.tick(); // A holds the lock
      nfA.publish(ev("a_1"));
      nfB.publish(ev("a_2"));
      nfB.publish({ ...ev("a_3"), key: "question:shared" });
      nfA.publish({ ...ev("a_3"), key: "question:shared" });
      now += COALESCE_MS;
      await nfB.tick();
      await nfA.tick();
      assert.equal(b.got.length, 0, "B holds no lock: it sends nothing");
      assert.deepEqual(a.got.map((x) => x.agentId).sort(), ["a_1", "a_2", "a_3"]);
      await nfA.stop();
      nfB.publish(ev("a_4"));
      now += COALESCE_MS;
      await nfB.tick();
      assert.deepEqual(
        b.got.map((x) => x.agentId),
        ["a_4"],
      );
    } finally {
      await nfA.stop();
      await nfB.stop();
    }
  });
});
