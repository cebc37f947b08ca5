/**
 * A host whose runtime is herdr (issue 23, "Hosts on herdr"): herdr's CLI runs on that host, asked
 * by our agent there over the host's one ssh connection (herdr's own --machine forwards API calls,
 * not our files, so it is not the path for sheep). The remote's herdr is the project's fake (real
 * tmux panes behind herdr's CLI and socket API), at each version the herdr suites run on; its
 * state and tmux server live on the remote side, started there by our agent. A sandboxed sheep
 * there, which cannot tell that herdr its state, has it told by the shepherd over the link (issue 33).
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { FAKE_HERDR_VERSIONS, nodeWithFakeHerdr } from "../support/fake-herdr.ts";
import { assertNothingLeftRemote, type RemoteWorld, remoteSheepPid, remoteWorld } from "../support/remote-world.ts";
import { type Scene, untilLogged } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";

for (const version of FAKE_HERDR_VERSIONS) {
  describe(`a host whose runtime is herdr ${version}`, { timeout: 600_000 }, () => {
    let dir: string;
    let rw: RemoteWorld;
    let scene: Scene;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), "pi-shepherd-remote-herdr-"));
      // The node our agent runs under there: the remote's own environment finds the fake herdr first.
      const node = await nodeWithFakeHerdr(dir, version);
      rw = await remoteWorld(`remote-herdr-${version}`, { host: { runtime: "herdr", node } });
      scene = rw.world.scene();
    });

    after(async () => {
      await rw?.world.cleanup();
      // The fake herdr's tmux server on the remote side, if the agent started one and it outlived the host's end.
      await rm(dir, { recursive: true, force: true });
    });

    it("start, prompt, wait, read and close a sheep there: its pane is herdr's on that host", async () => {
      const started = await scene.ok({ action: "start", agent: "echo", label: "far-herdr", host: "box" });
      const a = started.details.agent as { agentId: string; paneId: string; runtime: string; host?: string };
      assert.equal(a.host, "box");
      assert.equal(a.runtime, "herdr", "the record names the host's multiplexer");
      assert.match(a.paneId, /^box\//);
      assert.match(started.text, /in herdr pane box\/\S+ on host box/);
      const pid = await remoteSheepPid(rw.remote, a.agentId);
      assert.ok((await rw.remote.pids()).includes(pid), "the sheep's pi runs on the remote host");

      const r = await scene.wait(await scene.prompt(a.agentId, directive({ reply: "herdr, far away", tag: "HERDR-FAR" })), 120);
      assert.deepEqual([r.status, r.text], ["completed", "herdr, far away"], r.error);
      const status = await scene.ok({ action: "status", agentId: a.agentId });
      assert.match(status.text, /herdr on box/);
      const screen = await scene.ok({ action: "read", target: a.agentId, source: "screen" });
      assert.match(screen.text, /herdr, far away/, "the screen is read through herdr there");

      await scene.ok({ action: "close", agentId: a.agentId });
      await assertNothingLeftRemote(rw);
    });

    it("a sandboxed sheep there: that host's herdr is told its state by the shepherd over the link, idle, working, idle", async () => {
      const started = await scene.ok({ action: "start", agent: "echo", label: "far-boxed", host: "box", sandbox: true });
      const { agentId, paneId, sandboxed } = started.details.agent as { agentId: string; paneId: string; sandboxed?: true };
      assert.equal(sandboxed, true);
      const pane = paneId.replace(/^box\//, "");
      // What the fake herdr there was told, from its calls log (its state dir is this test's).
      const told = async () => {
        const text = await readFile(join(dir, "herdr-state", "calls.jsonl"), "utf8").catch(() => "");
        return text
          .split("\n")
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { argv: string[] }).argv)
          .filter((a) => a[1] === "report-agent" && a[2] === pane)
          .map((a) => a.slice(3, 9).join(" "));
      };
      const until = async (want: string[]) => {
        const wanted = want.map((s) => `--source pi-shepherd --agent pi --state ${s}`);
        for (let i = 0; i < 600 && JSON.stringify(await told()) !== JSON.stringify(wanted); i++) await new Promise((done) => setTimeout(done, 50));
        assert.deepEqual(await told(), wanted);
      };
      await until(["idle"]);
      const promptId = await scene.prompt(agentId, directive({ reply: "boxed, far away", delayMs: 3000, tag: "HERDR-FAR-BOXED" }));
      await untilLogged(rw.world.model, "HERDR-FAR-BOXED");
      await until(["idle", "working"]);
      assert.equal((await scene.wait(promptId, 120)).status, "completed");
      await until(["idle", "working", "idle"]);
      await scene.ok({ action: "close", agentId });
      await assertNothingLeftRemote(rw);
    });
  });
}
