/**
 * Reading a sheep's conversation from the tail of its pi session file: entries shaped as pi 1.6
 * writes them (session format v3), and files that are damaged, branched or huge.
 */
import assert from "node:assert/strict";
import { appendFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { readSessionTail } from "../../../src/protocol/session-log.ts";
import { turnsText } from "../../../src/texts/format.ts";

let n = 0;
const id = () => (++n).toString(16).padStart(8, "0");

/** Lines of a session as pi writes them; each entry's parent is the one before unless told. */
class Session {
  readonly lines: string[] = [JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })];
  last: string | null = null;

  entry(e: Record<string, unknown>, parentId: string | null = this.last): string {
    const entryId = id();
    this.lines.push(JSON.stringify({ ...e, id: entryId, parentId, timestamp: "2026-01-01T00:00:01.000Z" }));
    this.last = entryId;
    return entryId;
  }

  user(text: string, parentId?: string | null) {
    return this.entry({ type: "message", message: { role: "user", content: [{ type: "text", text }], timestamp: 1 } }, parentId);
  }

  assistant(content: unknown[], extra: Record<string, unknown> = {}) {
    return this.entry({ type: "message", message: { role: "assistant", content, stopReason: "stop", usage: {}, timestamp: 2, ...extra } });
  }

  toolResult(toolCallId: string, isError: boolean) {
    return this.entry({
      type: "message",
      message: { role: "toolResult", toolCallId, toolName: "bash", content: [{ type: "text", text: "out" }], isError, timestamp: 3 },
    });
  }

  get text() {
    return `${this.lines.join("\n")}\n`;
  }
}

describe("a sheep's conversation from its session file", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-session-"));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("gives the last turns: the prompts, the answers, each tool call on one line", async () => {
    const s = new Session();
    s.entry({ type: "model_change", provider: "p", modelId: "m" });
    s.entry({ type: "message", message: { role: "system", content: "", sections: { preamble: "…" } } });
    s.user("first question");
    s.assistant([{ type: "text", text: "first answer" }]);
    s.user("second question\nwith two lines");
    s.assistant([
      { type: "thinking", thinking: "never shown" },
      { type: "toolCall", id: "c1", name: "bash", arguments: { command: "ls -la" } },
      { type: "toolCall", id: "c2", name: "read", arguments: { path: "src/x.ts" } },
    ]);
    s.toolResult("c1", true);
    s.toolResult("c2", false);
    s.assistant([{ type: "text", text: "second answer\nline two" }]);
    s.user("third");
    s.assistant([], { stopReason: "error", errorMessage: "500 boom" });
    const path = join(dir, "plain.jsonl");
    await writeFile(path, s.text);
    const tail = await readSessionTail(path, 2);
    assert.equal(tail!.earlier, true);
    assert.equal(
      turnsText(tail!.turns),
      [
        "> second question",
        "> with two lines",
        '· bash {"command":"ls -la"} (failed)',
        '· read {"path":"src/x.ts"}',
        "second answer",
        "line two",
        "",
        "> third",
        "! error: 500 boom",
      ].join("\n"),
    );
    const all = await readSessionTail(path, 10);
    assert.equal(all!.turns.length, 3);
    assert.equal(all!.earlier, false);
    assert.equal(await readSessionTail(join(dir, "missing.jsonl"), 3), undefined);
  });

  it("skips corrupt and half-written lines, and never passes on terminal escape sequences", async () => {
    const s = new Session();
    s.user("q1");
    s.assistant([{ type: "text", text: "a1 \u001b[31mred\u001b[0m \u001b]0;title\u0007 bell\u0007" }]);
    s.lines.push("{not json", '{"type":"message","message":"not an object"}', "[1,2]", "null");
    s.user("q2");
    s.assistant([{ type: "text", text: 42 }, { type: "toolCall", name: 7 }, null, "x"]);
    const path = join(dir, "damaged.jsonl");
    await writeFile(path, `${s.text}{"type":"message","id":"zz","parentId":"${s.last}","message":{"role":"assistant","content":[{"type":"te`);
    const tail = await readSessionTail(path, 5);
    assert.equal(turnsText(tail!.turns), "> q1\na1 red  bell\n\n> q2");
  });

  it("shows the branch pi is on, not one abandoned with /tree", async () => {
    const s = new Session();
    s.user("q1");
    const a1 = s.assistant([{ type: "text", text: "a1" }]);
    s.user("abandoned question");
    s.assistant([{ type: "text", text: "abandoned answer" }]);
    // /tree back to q1's answer: the next prompt's parent is that answer, not the last line.
    s.user("q2", a1);
    s.assistant([{ type: "text", text: "a2" }]);
    const path = join(dir, "branched.jsonl");
    await writeFile(path, s.text);
    assert.equal(turnsText((await readSessionTail(path, 5))!.turns), "> q1\na1\n\n> q2\na2");
  });

  it("reads only a bounded tail of a huge file", async () => {
    const s = new Session();
    s.user("the very first question");
    s.assistant([{ type: "text", text: "first" }]);
    const path = join(dir, "huge.jsonl");
    await writeFile(path, s.text);
    // 12 MB of tool chatter in one turn: more than any tail the reader will take.
    const filler = JSON.stringify({ type: "custom", customType: "noise", data: "x".repeat(1000) });
    const block = `${Array.from({ length: 1000 }, () => filler).join("\n")}\n`;
    for (let i = 0; i < 12; i++) await appendFile(path, block);
    const t = new Session();
    t.last = null;
    t.lines.length = 0;
    t.user("late question", null);
    t.assistant([{ type: "text", text: "late answer" }]);
    await appendFile(path, t.text);
    const tail = await readSessionTail(path, 3);
    assert.equal(turnsText(tail!.turns), "> late question\nlate answer", "the first turn lies beyond the tail and is not read");
    assert.equal(tail!.earlier, true);
  });

  it("one turn larger than the tail: what the tail holds of it, marked cut, and more is earlier (issue 31, item 3)", async () => {
    const s = new Session();
    s.user("write a novel");
    s.assistant([{ type: "text", text: "n".repeat(9 * 1024 * 1024) }]);
    s.assistant([{ type: "toolCall", id: "c9", name: "bash", arguments: { command: "wc -c novel" } }]);
    s.assistant([{ type: "text", text: "done" }]);
    const path = join(dir, "one-huge-turn.jsonl");
    await writeFile(path, s.text);
    const tail = await readSessionTail(path, 3);
    assert.equal(tail!.earlier, true);
    assert.deepEqual(tail!.turns, [
      {
        cut: true,
        lines: [
          { kind: "tool", text: 'bash {"command":"wc -c novel"}' },
          { kind: "answer", text: "done" },
        ],
      },
    ]);
    assert.match(turnsText(tail!.turns), /^… \(this turn began earlier/);
    // Nothing but the one huge answer after its prompt: still a turn that says more is earlier.
    const t = new Session();
    t.user("write a novel");
    t.assistant([{ type: "text", text: "n".repeat(9 * 1024 * 1024) }]);
    const only = join(dir, "only-huge.jsonl");
    await writeFile(only, t.text);
    const bare = await readSessionTail(only, 3);
    assert.deepEqual(bare, { turns: [{ cut: true, lines: [] }], earlier: true });
  });
});
