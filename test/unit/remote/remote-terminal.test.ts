/**
 * A remote sheep's terminal through its host's link, without ssh: the real agent bundle over pipes,
 * its private tmux server holding a marked pane (a shell), driven through RemoteRuntime's watch and
 * sendKeys as the panel drives it. Output arrives as bounded chunks, keys reach the pane only when
 * it carries the sheep's mark, an unwatch and the link's end leave no pipe on the pane and no FIFO
 * directory, and the caps refuse what is over them.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { execa } from "execa";
import { isShepherdError, ShepherdError } from "../../../src/domain/errors.ts";
import type { PaneRef, PaneSink, Runtime } from "../../../src/ports/runtime.ts";
import type { RemoteEvent } from "../../../src/remote/rpc/call.ts";
import { RpcClient } from "../../../src/remote/rpc/client.ts";
import { remotePorts } from "../../../src/remote/rpc/ports.ts";
import { MAX_REMOTE_WATCHES, MAX_TERM_CHUNK_BYTES, MAX_TERM_KEY_BYTES } from "../../../src/remote/rpc/terminal-event.ts";
import { MARK } from "../../../src/runtimes/tmux/pane-table.ts";
import { writeAgentDir } from "../../support/agent-dir.ts";
import { initAgent, type LocalAgent, spawnLocalAgent, testInit } from "../../support/local-agent.ts";

const code = (c: string) => (e: unknown) => isShepherdError(e, c as never);

interface Sink extends PaneSink {
  chunks: Buffer[];
  text(): string;
  ended?: string;
}

function sink(): Sink {
  const s: Sink = {
    chunks: [],
    text: () => Buffer.concat(s.chunks).toString("utf8"),
    output: (c) => {
      s.chunks.push(c);
    },
    end: (why) => {
      s.ended = why;
    },
  };
  return s;
}

async function until(what: string, ok: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) assert.fail(`never: ${what}`);
    await sleep(50);
  }
}

describe("a remote pane's terminal through the agent's link", { timeout: 120_000 }, () => {
  let dir: string;
  let tmp: string;
  let agent: LocalAgent;
  let socket: string;
  let runtime: Runtime;
  let pane: PaneRef;
  const agentId = "a_0123456789";

  const tmux = async (args: string[]) => String((await execa("tmux", ["-S", socket, ...args], { stdin: "ignore" })).stdout);
  const piped = async () => (await tmux(["display-message", "-p", "-t", pane.paneId, "#{pane_pipe}"])).trim() === "1";
  const fifoDirs = async () => (await readdir(tmp)).filter((n) => n.startsWith("pi-shepherd-term-"));

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-remote-term-"));
    // The agent's own temporary directory: its FIFO directories are counted there.
    tmp = join(dir, "tmp");
    await mkdir(tmp, { mode: 0o700 });
    const agentDir = await writeAgentDir("http://127.0.0.1:9", join(dir, "agent"));
    agent = await spawnLocalAgent({ env: { ...process.env, TMPDIR: tmp } });
    const answer = await initAgent(agent, testInit(agentDir));
    socket = answer.tmuxSocket!;
    await tmux(["-f", "/dev/null", "new-session", "-d", "-s", "keeper", "-x", "120", "-y", "30", "env", "PS1=$ ", "sh"]);
    const paneId = (await tmux(["display-message", "-p", "-t", "keeper", "#{pane_id}"])).trim();
    await tmux(["set-option", "-p", "-t", paneId, MARK, agentId]);
    pane = { paneId, agentId };
    ({ runtime } = remotePorts(agent.client, { host: "test-host", runtime: "tmux" }));
  });

  after(async () => {
    await agent?.close();
    await execa("tmux", ["-S", socket, "kill-server"], { reject: false, stdin: "ignore" });
    await rm(dir, { recursive: true, force: true });
  });

  it("answers the pane's screen, then its output in chunks of at most the cap; typed keys reach the pane", async () => {
    const s = sink();
    const watch = await runtime.watch!(pane, s);
    assert.equal(watch.screen.cols, 120);
    assert.equal(watch.screen.rows, 30);
    assert.ok(await piped(), "the agent's tmux pipes the pane's output");
    await runtime.sendKeys!(pane, "head -c 100000 /dev/zero | tr '\\0' x; echo; echo end-of-$((6*7))\r");
    await until("the pane's output through the link", () => s.text().includes("end-of-42"));
    assert.ok((s.text().match(/x/g) ?? []).length >= 100_000, "every byte of the output came");
    assert.ok(s.chunks.length > 3, "100 kB came as several chunks");
    assert.ok(
      s.chunks.every((c) => c.length <= MAX_TERM_CHUNK_BYTES),
      `no chunk over ${MAX_TERM_CHUNK_BYTES} bytes (largest ${Math.max(...s.chunks.map((c) => c.length))})`,
    );
    assert.match(await tmux(["capture-pane", "-p", "-t", pane.paneId]), /end-of-42/);
    watch.close();
    await until("the pipe taken down after the unwatch", async () => !(await piped()));
    await until("no FIFO directory left", async () => (await fifoDirs()).length === 0);
    const after = s.chunks.length;
    await tmux(["send-keys", "-t", pane.paneId, "echo later\r"]);
    await sleep(300);
    assert.equal(s.chunks.length, after, "nothing reaches a closed watch");
    assert.equal(s.ended, undefined, "a watch its page closed is not told it ended");
  });

  it("refuses a pane that does not carry the sheep's mark, for the watch and the keys", async () => {
    const other = { paneId: pane.paneId, agentId: "a_9999999999" };
    await assert.rejects(runtime.watch!(other, sink()), code("not_owned"));
    await assert.rejects(runtime.sendKeys!(other, "echo nope\r"), code("not_owned"));
    assert.doesNotMatch(await tmux(["capture-pane", "-p", "-t", pane.paneId]), /nope/);
    assert.ok(!(await piped()));
  });

  it("caps: keys over the byte cap refused here and there; at most MAX_REMOTE_WATCHES watches", async () => {
    const big = "é".repeat(MAX_TERM_KEY_BYTES / 2 + 1);
    await assert.rejects(runtime.sendKeys!(pane, big), code("invalid_params"));
    await assert.rejects(agent.client.call("term.keys", [pane, big]), (e: unknown) => code("invalid_params")(e) && /bytes of keys/.test(String(e)));
    await assert.rejects(agent.client.call("term.watch", [pane, 0]), code("invalid_params"));
    await assert.rejects(agent.client.call("term.watch", [{ paneId: pane.paneId, agentId: "" }, 5000]), code("invalid_params"));
    const ids = Array.from({ length: MAX_REMOTE_WATCHES }, (_, i) => 1000 + i);
    for (const id of ids) await agent.client.call("term.watch", [pane, id]);
    await assert.rejects(agent.client.call("term.watch", [pane, 2000]), (e: unknown) => code("runtime_unavailable")(e) && /terminals are open/.test(String(e)));
    await assert.rejects(agent.client.call("term.watch", [pane, 1000]), code("invalid_params"), "a watch id in use");
    for (const id of ids) await agent.client.call("term.unwatch", [id]);
    await agent.client.call("term.unwatch", [1000]);
    await until("the pipe taken down after the last unwatch", async () => !(await piped()));
  });

  it("the client drops a term event that is over the cap or not base64, and passes one that fits", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const client = new RpcClient({ input, output, host: "h" });
    const got: RemoteEvent[] = [];
    client.onEvent((e) => got.push(e));
    const line = (o: object) => input.write(`${JSON.stringify(o)}\n`);
    line({ ev: "term-output", watch: 1, data: Buffer.alloc(MAX_TERM_CHUNK_BYTES + 3).toString("base64") });
    line({ ev: "term-output", watch: 1, data: "not base64!" });
    line({ ev: "term-output", watch: -1, data: "eA==" });
    line({ ev: "term-end", watch: 1, why: "w".repeat(301) });
    line({ ev: "term-output", watch: 2, data: Buffer.alloc(MAX_TERM_CHUNK_BYTES).toString("base64") });
    line({ ev: "term-end", watch: 2, why: "gone\x1b[31m" });
    await sleep(20);
    assert.equal(got.length, 2);
    assert.deepEqual(got[0], { ev: "term-output", watch: 2, data: Buffer.alloc(MAX_TERM_CHUNK_BYTES) });
    assert.deepEqual(got[1], { ev: "term-end", watch: 2, why: "gone" });
    client.close();
  });

  it("a silent host delays no other host's terminal: its watch fails at the call's deadline, and is let go there", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const sent: string[] = [];
    output.on("data", (c: Buffer) => sent.push(...c.toString("utf8").split("\n").filter(Boolean)));
    const silent = new RpcClient({ input, output, host: "quiet", deadlineMs: () => 1000 });
    const { runtime: quiet } = remotePorts(silent, { host: "quiet", runtime: "tmux" });
    const started = Date.now();
    const lost = quiet.watch!(pane, sink()).then(
      () => assert.fail("a silent host answered"),
      (e: unknown) => e,
    );
    const s = sink();
    const watch = await runtime.watch!(pane, s);
    assert.ok(Date.now() - started < 1000, "the other host's terminal opened while the silent one waited");
    watch.close();
    const e = await lost;
    assert.ok(isShepherdError(e, "host_unreachable"), String(e));
    assert.match(String(e), /did not answer term\.watch within 1 s/);
    const asked = sent.map((l) => JSON.parse(l) as { m: string; p: unknown[] });
    assert.equal(asked[0]?.m, "term.watch");
    const id = asked[0]!.p[1];
    assert.ok(
      asked.some((r) => r.m === "term.unwatch" && r.p[0] === id),
      "a watch lost on its way is let go there",
    );
    silent.close();
    await until("the pipe taken down", async () => !(await piped()));
  });

  it("a host whose runtime is herdr is asked like a tmux one: the agent there watches with its herdr", async () => {
    const calls: string[] = [];
    const fake = {
      call: async (m: string) => {
        calls.push(m);
        throw new ShepherdError("runtime_unavailable", "as the agent there answers");
      },
      onEvent: () => () => undefined,
      onReconnect: () => () => undefined,
    };
    const { runtime: herdr } = remotePorts(fake, { host: "h", runtime: "herdr" });
    await assert.rejects(herdr.watch!(pane, sink()), code("runtime_unavailable"));
    await assert.rejects(herdr.sendKeys!(pane, "x"), code("runtime_unavailable"));
    assert.deepEqual(calls, ["term.watch", "term.keys"]);
  });

  it("the link's end ends the watch here and leaves nothing running there", async () => {
    const s = sink();
    await runtime.watch!(pane, s);
    assert.ok(await piped());
    assert.equal((await fifoDirs()).length, 1);
    await agent.close();
    await until("the watch told it ended", () => s.ended !== undefined);
    assert.match(s.ended!, /link to host "test-host" went down/);
    assert.ok(!(await piped()), "no pipe-pane left on the pane");
    assert.deepEqual(await fifoDirs(), [], "no FIFO directory left");
  });
});
