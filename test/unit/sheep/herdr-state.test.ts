/**
 * The sheep extension in a herdr pane tells herdr its own state (src/sheep/herdr-state.ts), on each
 * herdr version of FAKE_HERDR_VERSIONS: without herdr's pi integration through `pane report-agent`,
 * which the fake records and turns into the agent status herdr shows (and from 0.8.1 the
 * `agent_blocked` refusal of `agent prompt`); with the integration only as `herdr:blocked` events on
 * pi's bus, for what it cannot see itself; outside a herdr pane not at all.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import sheep from "../../../extensions/sheep.ts";
import { ensurePrivateDir, writeJsonAtomic } from "../../../src/protocol/files.ts";
import { sheepLayout, type SheepLayout } from "../../../src/protocol/layout.ts";
import type { InboxPrompt, StatusReport } from "../../../src/protocol/messages.ts";
import { createFakeHerdr, FAKE_HERDR_VERSIONS, type FakeHerdr } from "../../support/fake-herdr.ts";

type Handler = (event: unknown, ctx?: unknown) => unknown;

/** The part of pi's extension API the sheep uses, with a way to fire what pi would. */
class FakePi {
  readonly handlers = new Map<string, Handler[]>();
  readonly bus = new Map<string, Handler[]>();
  readonly emitted: { channel: string; data: unknown }[] = [];
  readonly ctx = { sessionManager: { getSessionFile: () => undefined }, isIdle: () => true };
  readonly events = {
    on: (channel: string, h: Handler) => void this.bus.set(channel, [...(this.bus.get(channel) ?? []), h]),
    emit: (channel: string, data: unknown) => {
      this.emitted.push({ channel, data });
      for (const h of this.bus.get(channel) ?? []) h(data);
    },
  };
  on(name: string, h: Handler) {
    this.handlers.set(name, [...(this.handlers.get(name) ?? []), h]);
  }
  registerTool() {}
  registerCommand() {}
  sendUserMessage() {}
  async fire(name: string, event: Record<string, unknown> = {}) {
    for (const h of this.handlers.get(name) ?? []) await h({ type: name, ...event }, this.ctx);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const VARS = [
  "PI_SHEPHERD_SHEEP_DIR",
  "PI_CODING_AGENT_DIR",
  "PI_SHEPHERD_HERDR_BIN",
  "HERDR_ENV",
  "HERDR_PANE_ID",
  "HERDR_SOCKET_PATH",
  "TMUX",
  "TMUX_PANE",
  "PATH",
  "FAKE_HERDR_STATE_DIR",
  "FAKE_HERDR_TMUX_SOCKET",
  "FAKE_HERDR_VERSION",
];

for (const version of FAKE_HERDR_VERSIONS) {
  describe(`the sheep's state in herdr, on herdr ${version}`, () => {
    let dir: string;
    let agentDir: string;
    let layout: SheepLayout;
    let fake: FakeHerdr;
    let pane: string;
    let pi: FakePi | undefined;
    const saved = Object.fromEntries(VARS.map((k) => [k, process.env[k]]));

    /** Starts the sheep extension as pi would in the pane `pane` (or with `extra` changing that). */
    const startSheep = async (extra: Record<string, string | undefined> = {}) => {
      const env: Record<string, string | undefined> = {
        PATH: fake.env.PATH,
        FAKE_HERDR_STATE_DIR: fake.env.FAKE_HERDR_STATE_DIR,
        FAKE_HERDR_TMUX_SOCKET: fake.env.FAKE_HERDR_TMUX_SOCKET,
        FAKE_HERDR_VERSION: version,
        PI_SHEPHERD_SHEEP_DIR: dir,
        PI_CODING_AGENT_DIR: agentDir,
        PI_SHEPHERD_HERDR_BIN: fake.bin,
        HERDR_ENV: "1",
        HERDR_PANE_ID: pane,
        HERDR_SOCKET_PATH: join(fake.stateDir, "herdr.sock"),
        TMUX: undefined,
        TMUX_PANE: undefined,
        ...extra,
      };
      for (const [k, v] of Object.entries(env)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      pi = new FakePi();
      sheep(pi as never);
      await pi.fire("session_start", { reason: "startup" });
      return pi;
    };
    const reports = async () => (await fake.calls()).filter((c) => c.argv[0] === "pane" && c.argv[1] === "report-agent").map((c) => c.argv);
    const states = async () => (await reports()).map((a) => [a[a.indexOf("--state") + 1], a.includes("--message") ? a[a.indexOf("--message") + 1] : undefined]);
    const until = async (what: string, ok: () => Promise<boolean>) => {
      for (let i = 0; i < 300 && !(await ok()); i++) await sleep(20);
      assert.ok(await ok(), what);
    };
    const herdrStatus = async () => {
      const r = await fake.herdr(["agent", "get", pane]);
      return r.exitCode === 0 ? (JSON.parse(r.stdout) as { result: { agent: { agent_status: string } } }).result.agent.agent_status : undefined;
    };
    const status = async () => JSON.parse(await readFile(layout.status, "utf8")) as StatusReport;
    const prompt = (id: string) =>
      writeJsonAtomic(layout.inboxFile("0000000000000001", id), { promptId: id, text: "go", submittedAt: new Date().toISOString() } satisfies InboxPrompt);

    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), "pi-shepherd-herdr-state-"));
      agentDir = join(dir, "agent");
      await mkdir(agentDir);
      layout = sheepLayout(join(dir, "sheep"));
      dir = layout.dir;
      await ensurePrivateDir(layout.inbox);
      await ensurePrivateDir(layout.outbox);
      fake = await createFakeHerdr({ version });
      const ws = await fake.herdr(["workspace", "create", "--cwd", agentDir]);
      pane = (JSON.parse(ws.stdout) as { result: { root_pane: { pane_id: string } } }).result.root_pane.pane_id;
      await fake.clearCalls();
    });

    afterEach(async () => {
      await pi?.fire("session_shutdown", { reason: "quit" });
      pi = undefined;
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await fake.cleanup();
      await rm(join(agentDir, ".."), { recursive: true, force: true });
    });

    it("without herdr's pi integration: reports idle, working, blocked (pi's dialog, with its title) and idle with `pane report-agent`, and herdr shows it", async () => {
      const p = await startSheep();
      await until("idle reported", async () => (await herdrStatus()) === "idle");
      await prompt("p_0000000001");
      await until("working reported", async () => (await herdrStatus()) === "working");
      await p.fire("ui_prompt_start", { reason: "ui_prompt", kind: "confirm", title: "Delete the barn?" });
      await until("blocked reported", async () => (await herdrStatus()) === "blocked");
      // herdr's own facade now sees what the sheep's status says: from 0.8.1 it refuses to type into it.
      const refused = await fake.herdr(["agent", "prompt", pane, "hello"]);
      if (/^0\.(7\.|8\.0)/.test(version)) assert.equal(refused.exitCode, 0, refused.stderr);
      else assert.deepEqual([refused.exitCode, (JSON.parse(refused.stderr) as { error: { code: string } }).error.code], [1, "agent_blocked"]);
      await p.fire("ui_prompt_end", { reason: "ui_prompt", kind: "confirm" });
      await until("working again", async () => (await herdrStatus()) === "working");
      await p.fire("message_end", { message: { role: "assistant", content: [{ type: "text", text: "ok" }], stopReason: "stop" } });
      await p.fire("agent_settled");
      await until("idle again", async () => (await herdrStatus()) === "idle");
      assert.deepEqual(await states(), [
        ["idle", undefined],
        ["working", undefined],
        ["blocked", "Delete the barn?"],
        ["working", undefined],
        ["idle", undefined],
      ]);
      const all = await reports();
      assert.ok(
        all.every((a) => a[2] === pane && a.slice(3, 7).join(" ") === "--source pi-shepherd --agent pi"),
        JSON.stringify(all),
      );
      const seqs = all.map((a) => Number(a[a.indexOf("--seq") + 1]));
      assert.ok(
        seqs.every((s, i) => i === 0 || s > seqs[i - 1]!),
        `--seq rises strictly: ${seqs}`,
      );
      assert.deepEqual(p.emitted, [], "nothing on pi's bus without the integration");
      assert.equal((await status()).state, "idle", "the sheep's own status is unchanged by all this");
    });

    it("a label that would read as an option goes to herdr as one dash-free line", async () => {
      const p = await startSheep();
      await p.fire("ui_prompt_start", { reason: "ui_prompt", kind: "input", title: "--help\n-h now" });
      await until("blocked reported", async () => (await herdrStatus()) === "blocked");
      assert.deepEqual((await states()).at(-1), ["blocked", "help -h now"]);
    });

    it("with herdr's pi integration installed: no report-agent; pi's dialogs go to it as herdr:blocked, another extension's not twice, and the sheep counts each once", async () => {
      await mkdir(join(agentDir, "extensions"));
      await writeFile(join(agentDir, "extensions", "herdr-agent-state.ts"), "// herdr's pi integration\n");
      const p = await startSheep();
      await prompt("p_0000000001");
      await until("working", async () => (await status()).state === "working");
      await p.fire("ui_prompt_start", { reason: "ui_prompt", kind: "confirm", title: "Delete the barn?" });
      assert.equal((await status()).blocked, "Delete the barn?");
      await p.fire("ui_prompt_end", { reason: "ui_prompt", kind: "confirm" });
      assert.equal((await status()).blocked, undefined, "our own event did not count as another extension's block");
      // Another extension's block: the integration hears it from that extension, not again from us.
      p.events.emit("herdr:blocked", { active: true, label: "gate" });
      assert.equal((await status()).blocked, "gate");
      p.events.emit("herdr:blocked", { active: false });
      assert.equal((await status()).blocked, undefined);
      assert.deepEqual(p.emitted, [
        { channel: "herdr:blocked", data: { active: true, label: "Delete the barn?" } },
        { channel: "herdr:blocked", data: { active: false } },
        { channel: "herdr:blocked", data: { active: true, label: "gate" } },
        { channel: "herdr:blocked", data: { active: false } },
      ]);
      await sleep(100);
      assert.deepEqual(await reports(), []);
    });

    for (const [what, extra] of [
      ["outside herdr", { HERDR_ENV: undefined, HERDR_PANE_ID: undefined }],
      ["in a tmux pane that inherited herdr's variables", { TMUX: "/tmp/tmux-0/default,1,0", TMUX_PANE: "%1" }],
    ] as const) {
      it(`tells herdr nothing ${what}`, async () => {
        const p = await startSheep(extra);
        await p.fire("ui_prompt_start", { reason: "ui_prompt", kind: "confirm", title: "x" });
        await sleep(100);
        assert.deepEqual(await reports(), []);
        assert.deepEqual(p.emitted, []);
        assert.equal((await status()).blocked, "x");
      });
    }
  });
}
