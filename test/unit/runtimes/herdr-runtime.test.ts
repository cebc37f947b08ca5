/**
 * Contract tests of the herdr adapter against the fake herdr (herdr's CLI, with real panes backed by
 * tmux on a private socket), once for each herdr version of FAKE_HERDR_VERSIONS (0.7.5, 0.8.2 and
 * 0.9.x). Each test gets its own fake and cleans it up.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { access, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { type ErrorCode, isShepherdError } from "../../../src/domain/errors.ts";
import { HerdrRuntime, herdrServerAnswers } from "../../../src/runtimes/herdr/index.ts";
import { shellLine } from "../../../src/runtimes/shell-line.ts";
import { createFakeHerdr, FAKE_HERDR_VERSIONS, type FakeHerdr } from "../../support/fake-herdr.ts";

let fake: FakeHerdr;
let tmp: string;
/** The herdr version the current tests run on. */
let herdrVersion: string;
/** What the adapter asks first: the binary's version, then the server's, past the protocol guard. */
const PROBE = [["--version"], ["status", "server", "--json"]];
/** Before 0.9.0 an empty `recent` read is read again from `visible` (#3444). */
const recentReadsFixed = () => !/^0\.[0-8]\./.test(herdrVersion);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `probe` gives a value; bounded by attempts, not asserted on time. */
async function eventually<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await sleep(20);
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** A user's herdr session with pi running in pane w1:p1, which the UI has focused. */
async function insideHerdr(): Promise<{ env: NodeJS.ProcessEnv; ownPane: string }> {
  const r = await fake.herdr(["workspace", "create", "--cwd", tmp, "--label", "user", "--focus"]);
  assert.equal(r.exitCode, 0, r.stderr);
  const root = (JSON.parse(r.stdout) as { result: { root_pane: { pane_id: string; tab_id: string; workspace_id: string } } }).result.root_pane;
  await fake.clearCalls();
  const env = {
    ...fake.env,
    HERDR_ENV: "1",
    HERDR_SOCKET_PATH: path.join(fake.stateDir, "herdr.sock"),
    HERDR_WORKSPACE_ID: root.workspace_id,
    HERDR_TAB_ID: root.tab_id,
    HERDR_PANE_ID: root.pane_id,
  };
  return { env, ownPane: root.pane_id };
}

async function argvs(): Promise<string[][]> {
  return (await fake.calls()).map((c) => c.argv);
}

/** Asserts the no-focus rules over everything the adapter ran. */
async function assertNeverFocused(): Promise<void> {
  for (const argv of await argvs()) {
    assert.ok(!argv.includes("--focus"), `--focus in ${JSON.stringify(argv)}`);
    // herdr takes --json only on a few commands, `status` among them; control commands refuse it.
    if (argv[0] !== "status") assert.ok(!argv.includes("--json"), `--json in ${JSON.stringify(argv)}`);
    const creates = ["workspace create", "tab create", "pane split"].includes(argv.slice(0, 2).join(" "));
    if (creates) assert.equal(argv.at(-1), "--no-focus", `no --no-focus in ${JSON.stringify(argv)}`);
  }
}

interface PaneView {
  pane_id: string;
  workspace_id: string;
  tab_id: string;
  focused: boolean;
  label?: string;
}

async function panes(): Promise<PaneView[]> {
  const r = await fake.herdr(["pane", "list"]);
  assert.equal(r.exitCode, 0, r.stderr);
  return (JSON.parse(r.stdout) as { result: { panes: PaneView[] } }).result.panes;
}

async function rejectsWith(p: Promise<unknown>, code: ErrorCode, pattern?: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(isShepherdError(e, code), `expected [${code}], got ${String(e)}`);
    assert.ok(e.message.startsWith(`[${code}] `), e.message);
    if (pattern) assert.match(e.message, pattern);
    return true;
  });
}

const req = (over: Partial<Parameters<HerdrRuntime["createPane"]>[0]> = {}) => ({
  agentId: "a_test000001",
  placement: "tab" as const,
  direction: "right" as const,
  cwd: tmp,
  label: "docs writer",
  // herdr types into the pane's shell, so the reporting form is what runs
  command: { argv: ["false"], reporting: ["true"] },
  ...over,
});

/** The `pane run` that starts a pane's program. */
const ran = (paneId: string) => ["pane", "run", paneId, "'true'"];

for (const version of FAKE_HERDR_VERSIONS) {
  describe(`on herdr ${version}`, () => {
    beforeEach(async () => {
      herdrVersion = version;
      fake = await createFakeHerdr({ version });
      tmp = await mkdtemp(path.join(os.tmpdir(), "herdr-rt-"));
    });

    afterEach(async () => {
      await fake.cleanup();
      await rm(tmp, { recursive: true, force: true });
    });

    describe("herdr runtime: version", () => {
      it("probes `herdr --version` and `status server --json` once across operations", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        const { paneId } = await rt.createPane(req());
        await rt.liveness([{ paneId, agentId: "a_test000001" }]);
        await rt.read(paneId, 5);
        await rt.runLauncher(paneId, ["true"]);
        assert.equal((await argvs()).filter((a) => a[0] === "--version").length, 1);
        assert.equal((await argvs()).filter((a) => a[0] === "status").length, 1);
        assert.deepEqual((await argvs()).slice(0, 2), PROBE);
      });

      it("refuses herdr 0.7.4 with [runtime_unavailable] naming the found and required versions, and creates nothing", async () => {
        const rt = new HerdrRuntime({ env: { ...fake.env, FAKE_HERDR_VERSION: "0.7.4" } });
        await rejectsWith(rt.createPane(req()), "runtime_unavailable", /herdr 0\.7\.4 found .*needs herdr 0\.7\.5 or newer \(0\.9\.4 recommended\)/);
        await rejectsWith(rt.liveness([{ paneId: "w1:p1", agentId: "a_test000001" }]), "runtime_unavailable", /0\.7\.4/);
        assert.deepEqual(await argvs(), [["--version"], ["--version"]]);
      });

      for (const version of ["0.7.5", "0.8.0-preview.1a2b", "0.10.0", "1.0.0"]) {
        it(`accepts herdr ${version}`, async () => {
          const rt = new HerdrRuntime({ env: { ...fake.env, FAKE_HERDR_VERSION: version } });
          assert.deepEqual(await rt.liveness([{ paneId: "w9:p9", agentId: "a_test000001" }]), new Map([["a_test000001", { state: "gone" }]]));
        });
      }

      it("refuses a version it cannot read", async () => {
        const rt = new HerdrRuntime({ env: { ...fake.env, FAKE_HERDR_VERSION: "banana" } });
        await rejectsWith(rt.liveness([{ paneId: "w1:p1", agentId: "a_test000001" }]), "runtime_unavailable", /could not read the herdr version/);
      });
    });

    describe("herdr runtime: protocol", () => {
      /** A server of the other generation: 0.9.x (22) against 0.7.5 (17) or 0.8.2 (20), 0.8.2 against 0.9.x. */
      const other = () => (recentReadsFixed() ? "0.8.2" : "0.9.4");
      const protocol = (v: string) => ({ "0.7.5": 17, "0.8.2": 20, "0.9.4": 22 })[v] ?? 22;
      const both = () =>
        new RegExp(
          `herdr on PATH \\(".*herdr"\\) is herdr ${herdrVersion.replaceAll(".", "\\.")} \\(protocol ${protocol(herdrVersion)}\\), but the running herdr server is herdr ${other().replaceAll(".", "\\.")} \\(protocol ${protocol(other())}\\)`,
        );
      const fix = () => (protocol(herdrVersion) < protocol(other()) ? /Upgrade herdr to 0\.9\.4 .*the server can keep running/ : /herdr server stop/);

      it("with a server of another protocol, every call fails [runtime_unavailable] naming both versions and the fix, and nothing is made", async () => {
        await fake.setServerVersion(other());
        const rt = new HerdrRuntime({ env: fake.env });
        await rejectsWith(rt.createPane(req()), "runtime_unavailable", both());
        await rejectsWith(rt.createPane(req()), "runtime_unavailable", fix());
        await rejectsWith(rt.liveness([{ paneId: "w1:p1", agentId: "a_test000001" }]), "runtime_unavailable", both());
        await rejectsWith(rt.markedPanes(), "runtime_unavailable", both());
        await rejectsWith(rt.read("w1:p1", 5), "runtime_unavailable", both());
        await rejectsWith(rt.close("w1:p1", "a_test000001"), "runtime_unavailable", both());
        await rejectsWith(rt.agentStatus("w1:p1"), "runtime_unavailable", both());
        // Found by the probe, which herdr's protocol guard does not stop: no command reached the server.
        assert.ok(
          (await argvs()).every((a) => a[0] === "--version" || a[0] === "status"),
          JSON.stringify(await argvs()),
        );
        assert.equal(await herdrServerAnswers({ env: fake.env }), false);
      });

      it("a server replaced by one of another protocol: the next call fails naming both versions, and once it matches again calls work", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const { paneId } = await rt.createPane(req());
        await fake.setServerVersion(other());
        await rejectsWith(rt.liveness([{ paneId, agentId: "a_test000001" }]), "runtime_unavailable", both());
        await rejectsWith(rt.liveness([{ paneId, agentId: "a_test000001" }]), "runtime_unavailable", fix());
        await fake.setServerVersion(undefined);
        assert.deepEqual((await rt.liveness([{ paneId, agentId: "a_test000001" }])).get("a_test000001"), { state: "alive" });
      });
    });

    describe("herdr runtime: a server of its own", () => {
      it("outside herdr with no server, the first start runs `herdr server` in a session of its own and uses it; nothing stops it", async () => {
        await fake.setDown(true);
        const rt = new HerdrRuntime({ env: fake.env });
        const { paneId } = await rt.createPane(req());
        assert.ok(await fake.serverPid(), "a server process runs");
        assert.ok((await argvs()).some((a) => a.length === 1 && a[0] === "server"));
        const status = JSON.parse((await fake.herdr(["status", "server", "--json"])).stdout) as {
          running: boolean;
          capabilities: { detached_server_daemon: boolean };
        };
        assert.deepEqual([status.running, status.capabilities.detached_server_daemon], [true, true], "herdr's own test: getsid(0) == getpid()");
        assert.deepEqual((await rt.liveness([{ paneId, agentId: "a_test000001" }])).get("a_test000001"), { state: "alive" });
        await rt.close(paneId, "a_test000001");
        assert.ok(await fake.serverPid(), "closing its last sheep leaves the server");
        assert.ok(!(await argvs()).some((a) => a[0] === "server" && a[1] === "stop"));
      });

      it("a server it started survives the shepherd's terminal closing (SIGHUP to its process group), with the sheep's pane", async () => {
        await fake.setDown(true);
        const script = path.join(tmp, "shepherd.mts");
        const runtime = path.join(import.meta.dirname, "..", "..", "..", "src", "runtimes", "herdr", "index.ts");
        await writeFile(
          script,
          `import { HerdrRuntime } from ${JSON.stringify(runtime)};\n` +
            `const rt = new HerdrRuntime({ env: process.env });\n` +
            `const { paneId } = await rt.createPane({ agentId: "a_test000001", placement: "tab", direction: "right", cwd: ${JSON.stringify(tmp)}, label: "x", command: { argv: ["true"], reporting: ["true"] } });\n` +
            `process.stdout.write(paneId + "\\n");\nsetInterval(() => undefined, 1000);\n`,
        );
        // The shepherd leads a process group as a terminal's foreground job does: closing the terminal
        // sends SIGHUP to all of it.
        const shepherd = spawn(process.execPath, ["--import", "tsx", script], {
          cwd: path.join(import.meta.dirname, "..", "..", ".."),
          env: fake.env,
          detached: true,
          stdio: ["ignore", "pipe", "pipe"],
        });
        try {
          const paneId = await new Promise<string>((resolve, reject) => {
            let out = "";
            shepherd.stdout.on("data", (d: Buffer) => {
              out += String(d);
              if (out.includes("\n")) resolve(out.trim());
            });
            let err = "";
            shepherd.stderr.on("data", (d: Buffer) => {
              err += String(d);
            });
            shepherd.on("exit", (code) => reject(new Error(`the shepherd script ended (${code}) before it made a pane: ${err.slice(0, 2000)}`)));
          });
          const server = await fake.serverPid();
          assert.ok(server, "the shepherd started a server");
          const ended = new Promise((r) => shepherd.once("exit", r));
          process.kill(-shepherd.pid!, "SIGHUP");
          await ended;
          assert.equal(await fake.serverPid(), server, "the server still runs");
          assert.ok(
            (await panes()).some((p) => p.pane_id === paneId),
            "and so does the sheep's pane",
          );
        } finally {
          if (shepherd.exitCode === null && shepherd.signalCode === null) process.kill(shepherd.pid!, "SIGKILL");
        }
      });
    });

    describe("herdr runtime: which executable", () => {
      it("uses PI_SHEPHERD_HERDR_BIN when herdr is not on PATH", async () => {
        const rt = new HerdrRuntime({ env: { ...fake.env, PATH: process.env.PATH, PI_SHEPHERD_HERDR_BIN: fake.bin } });
        assert.deepEqual((await rt.liveness([{ paneId: "w9:p9", agentId: "a_test000001" }])).get("a_test000001"), { state: "gone" });
      });

      it("prefers the bin option over PI_SHEPHERD_HERDR_BIN", async () => {
        const rt = new HerdrRuntime({ env: { ...fake.env, PI_SHEPHERD_HERDR_BIN: path.join(tmp, "nope") }, bin: fake.bin });
        assert.deepEqual((await rt.liveness([{ paneId: "w9:p9", agentId: "a_test000001" }])).get("a_test000001"), { state: "gone" });
      });

      it("reports a missing executable as [runtime_unavailable] with how to install herdr", async () => {
        const rt = new HerdrRuntime({ env: fake.env, bin: path.join(tmp, "no-herdr-here") });
        await rejectsWith(rt.createPane(req()), "runtime_unavailable", /was not found\. Install herdr \(https:\/\/herdr\.dev/);
      });
    });

    describe("herdr runtime: placement", () => {
      it("tab inside herdr: `tab create` in the caller's workspace, unfocused, then labels the pane", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const created = await rt.createPane(req());
        assert.deepEqual(created, { paneId: "w1:p2" });
        assert.deepEqual(await argvs(), [
          ...PROBE,
          ["tab", "create", "--workspace", "w1", "--cwd", tmp, "--label", "docs writer", "--no-focus"],
          ["pane", "rename", "w1:p2", "docs writer [a_test000001]"],
          ran("w1:p2"),
        ]);
        assert.ok((await fake.calls()).every((c) => c.callerPaneId === "w1:p1"));
        const all = await panes();
        assert.deepEqual(
          all.map((p) => [p.pane_id, p.focused, p.label]),
          [
            ["w1:p1", true, undefined],
            ["w1:p2", false, "docs writer [a_test000001]"],
          ],
        );
        await assertNeverFocused();
      });

      it("tab outside herdr: creates one workspace of its own, then adds tabs to it, and a new one once it is closed", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        const first = await rt.createPane(req({ agentId: "a_one" }));
        const second = await rt.createPane(req({ agentId: "a_two", label: "second" }));
        assert.equal(first.paneId, "w1:p1");
        assert.equal(second.paneId, "w1:p2");
        assert.match(first.attachHint ?? "", /run `herdr` and open workspace w1 \(pane w1:p1\)/);
        assert.deepEqual(await argvs(), [
          ...PROBE,
          ["workspace", "create", "--cwd", tmp, "--label", "pi-shepherd", "--no-focus"],
          ["pane", "rename", "w1:p1", "docs writer [a_one]"],
          ran("w1:p1"),
          ["tab", "create", "--workspace", "w1", "--cwd", tmp, "--label", "second", "--no-focus"],
          ["pane", "rename", "w1:p2", "second [a_two]"],
          ran("w1:p2"),
        ]);

        await rt.close(first.paneId, "a_one");
        await rt.close(second.paneId, "a_two");
        assert.deepEqual(await panes(), []);
        await fake.clearCalls();
        const third = await rt.createPane(req({ agentId: "a_three" }));
        assert.equal(third.paneId, "w2:p1");
        assert.deepEqual(await argvs(), [
          ["tab", "create", "--workspace", "w1", "--cwd", tmp, "--label", "docs writer", "--no-focus"],
          ["workspace", "create", "--cwd", tmp, "--label", "pi-shepherd", "--no-focus"],
          ["pane", "rename", "w2:p1", "docs writer [a_three]"],
          ran("w2:p1"),
        ]);
        await assertNeverFocused();
      });

      it("tab outside herdr: concurrent starts share one workspace", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        const created = await Promise.all([1, 2, 3].map((n) => rt.createPane(req({ agentId: `a_${n}` }))));
        assert.deepEqual(new Set(created.map((c) => c.paneId.split(":")[0])), new Set(["w1"]));
        assert.equal((await argvs()).filter((a) => a[0] === "workspace").length, 1);
      });

      for (const direction of ["right", "down"] as const) {
        it(`pane ${direction}: splits the calling pane by id even when the UI focuses another pane`, async () => {
          const { env } = await insideHerdr();
          // The user moved to another workspace; a split without a target would land there.
          assert.equal((await fake.herdr(["workspace", "create", "--cwd", tmp, "--focus"])).exitCode, 0);
          await fake.clearCalls();
          const rt = new HerdrRuntime({ env });
          const { paneId } = await rt.createPane(req({ placement: "pane", direction }));
          assert.equal(paneId, "w1:p2");
          assert.deepEqual((await argvs()).slice(2), [
            ["pane", "split", "--pane", "w1:p1", "--direction", direction, "--cwd", tmp, "--no-focus"],
            ["pane", "rename", "w1:p2", "docs writer [a_test000001]"],
            ran("w1:p2"),
          ]);
          const made = (await panes()).find((p) => p.pane_id === paneId);
          assert.deepEqual([made?.tab_id, made?.focused], ["w1:t1", false]);
          await assertNeverFocused();
        });
      }

      it("pane without HERDR_PANE_ID: [invalid_params], and nothing is split", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        await rejectsWith(rt.createPane(req({ placement: "pane" })), "invalid_params", /HERDR_PANE_ID is not set.*placement "tab" or "workspace"/);
        assert.ok(!(await argvs()).some((a) => a[0] === "pane" && a[1] === "split"));
      });

      it("workspace: `workspace create` with the label, unfocused", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const { paneId } = await rt.createPane(req({ placement: "workspace", label: "solo" }));
        assert.equal(paneId, "w2:p1");
        assert.deepEqual((await argvs()).slice(2), [
          ["workspace", "create", "--cwd", tmp, "--label", "solo", "--no-focus"],
          ["pane", "rename", "w2:p1", "solo [a_test000001]"],
          ran("w2:p1"),
        ]);
        await assertNeverFocused();
      });

      it("passes labels as one dash-free line, so they can never act as options or help requests", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        await rt.createPane(req({ label: "--help\n-h  $(rm -rf ~)" }));
        await rt.createPane(req({ label: "-h", agentId: "a_x" }));
        await rt.createPane(req({ label: " --- ", agentId: "a_y" }));
        const calls = await argvs();
        for (const argv of calls) {
          assert.ok(!argv.includes("--help") && !argv.includes("-h"), JSON.stringify(argv));
        }
        assert.deepEqual(calls[2]?.slice(6, 8), ["--label", "help -h $(rm -rf ~)"]);
        assert.deepEqual(calls[3], ["pane", "rename", "w1:p2", "help -h $(rm -rf ~) [a_test000001]"]);
        assert.deepEqual(calls[5]?.slice(6, 8), ["--label", "h"]);
        assert.deepEqual(calls[8]?.slice(6, 8), ["--label", "a_y"]);
        assert.deepEqual(calls[9], ["pane", "rename", "w1:p4", "sheep [a_y]"]);
      });

      it("gives the cwd to herdr as an absolute path", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        await rt.createPane(req({ cwd: "." }));
        assert.equal((await argvs())[2]?.[5], process.cwd());
      });

      it("closes the new pane again when it cannot be labelled", async () => {
        const { env } = await insideHerdr();
        await fake.inject({ command: "pane rename", code: "internal_error", message: "boom" });
        const rt = new HerdrRuntime({ env });
        await rejectsWith(rt.createPane(req()), "runtime_error", /herdr pane rename failed: internal_error: boom/);
        assert.deepEqual((await argvs()).at(-1), ["pane", "close", "w1:p2"]);
        assert.deepEqual(
          (await panes()).map((p) => p.pane_id),
          ["w1:p1"],
        );
      });
    });

    describe("herdr runtime: runLauncher", () => {
      it("types one single-quoted line with `pane run`, and the shell runs exactly that argv", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const { paneId } = await rt.createPane(req());
        const target = path.join(tmp, `it's $HOME \`id\` "q" ; *.txt`);
        const argv = ["touch", target];
        await rt.runLauncher(paneId, argv);
        const expected = `'touch' '${target.replaceAll("'", `'\\''`)}'`;
        assert.equal(shellLine(argv), expected);
        assert.deepEqual((await argvs()).at(-1), ["pane", "run", paneId, expected]);
        await eventually(
          () =>
            access(target).then(
              () => true,
              () => undefined,
            ),
          "the launcher's file",
        );
      });

      it("refuses control characters and empty argv without typing anything", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const { paneId } = await rt.createPane(req());
        await fake.clearCalls();
        await rejectsWith(rt.runLauncher(paneId, ["echo", "a\nb"]), "invalid_params", /control character/);
        await rejectsWith(rt.runLauncher(paneId, []), "invalid_params", /empty/);
        assert.ok(!(await argvs()).some((a) => a[1] === "run"));
      });

      it("reports a pane that is gone as [pane_gone]", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        await rejectsWith(rt.runLauncher("w1:p7", ["true"]), "pane_gone", /herdr pane run failed: pane_not_found: .*start a new agent/);
      });
    });

    describe("herdr runtime: the pane's program", () => {
      it("types the reporting command into the new pane's shell, so report-exit.sh tells how pi ended; the shell and pane stay", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const exitFile = path.join(tmp, "exit.json");
        const reportExit = path.join(import.meta.dirname, "..", "..", "..", "src", "launch", "report-exit.sh");
        const pi = ["/bin/sh", "-c", "sleep 0.2; echo pi says bye; kill -9 $$"];
        const { paneId } = await rt.createPane(req({ command: { argv: pi, reporting: ["/bin/sh", reportExit, exitFile, ...pi] } }));
        assert.deepEqual((await argvs()).at(-1), ["pane", "run", paneId, shellLine(["/bin/sh", reportExit, exitFile, ...pi])]);
        const report = await eventually(
          () =>
            import("node:fs/promises").then((fs) =>
              fs.readFile(exitFile, "utf8").then(
                (t) => JSON.parse(t) as { code: unknown; signal: unknown },
                () => undefined,
              ),
            ),
          "exit.json",
        );
        assert.deepEqual([report.code, report.signal], [null, "SIGKILL"]);
        assert.deepEqual((await rt.liveness([{ paneId, agentId: "a_test000001" }])).get("a_test000001"), { state: "alive" }, "the shell lives on");
        assert.match(await rt.read(paneId, 10), /pi says bye[\s\S]*\[pi-shepherd\] pi exited \(SIGKILL\)/);
      });

      it("closes the new pane again when its program cannot be started", async () => {
        const { env } = await insideHerdr();
        await fake.inject({ command: "pane run", code: "internal_error", message: "boom" });
        const rt = new HerdrRuntime({ env });
        await rejectsWith(rt.createPane(req()), "runtime_error", /herdr pane run failed: internal_error: boom/);
        assert.deepEqual((await argvs()).at(-1), ["pane", "close", "w1:p2"]);
        assert.deepEqual(
          (await panes()).map((p) => p.pane_id),
          ["w1:p1"],
        );
      });
    });

    describe("herdr runtime: liveness with real panes", () => {
      it("answers many panes with one `pane list`, and sees a pane whose process died as gone", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const a = await rt.createPane(req({ agentId: "a_a" }));
        const b = await rt.createPane(req({ agentId: "a_b" }));
        await fake.clearCalls();
        assert.deepEqual(
          await rt.liveness([
            { paneId: a.paneId, agentId: "a_a" },
            { paneId: b.paneId, agentId: "a_b" },
          ]),
          new Map([
            ["a_a", { state: "alive" }],
            ["a_b", { state: "alive" }],
          ]),
        );
        assert.deepEqual(await argvs(), [["pane", "list"]]);

        await fake.tmux(["kill-pane", "-t", await fake.tmuxPaneOf(b.paneId)]);
        await fake.clearCalls();
        assert.deepEqual(
          await rt.liveness([
            { paneId: a.paneId, agentId: "a_a" },
            { paneId: b.paneId, agentId: "a_b" },
            { paneId: "w9:p9", agentId: "a_c" },
          ]),
          new Map([
            ["a_a", { state: "alive" }],
            ["a_b", { state: "gone" }],
            ["a_c", { state: "gone" }],
          ]),
        );
        assert.deepEqual(await argvs(), [
          ["pane", "list"],
          ["pane", "get", b.paneId],
          ["pane", "get", "w9:p9"],
        ]);
      });

      it("asks nothing for an empty list", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        assert.deepEqual(await rt.liveness([]), new Map());
        assert.deepEqual(await argvs(), []);
      });

      it("throws, never reports gone, when the server is down", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const { paneId } = await rt.createPane(req());
        await fake.setDown(true);
        await rejectsWith(
          rt.liveness([{ paneId, agentId: "a_test000001" }]),
          "runtime_unavailable",
          /server_not_running: no herdr server is running at .*herdr\.sock/,
        );
        await fake.setDown(false);
        assert.deepEqual((await rt.liveness([{ paneId, agentId: "a_test000001" }])).get("a_test000001"), { state: "alive" });
      });

      it("throws when `pane list` fails for another reason", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        await fake.inject({ command: "pane list", code: "internal_error", message: "app did not answer" });
        await rejectsWith(rt.liveness([{ paneId: "w1:p1", agentId: "a_test000001" }]), "runtime_error", /internal_error: app did not answer/);
      });

      it("throws when confirming a missing pane with `pane get` fails for another reason", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        await fake.inject({ command: "pane get", code: "timeout", message: "timed out" });
        await rejectsWith(rt.liveness([{ paneId: "w1:p1", agentId: "a_test000001" }]), "runtime_error", /herdr pane get failed: timeout/);
      });
    });

    describe("herdr runtime: read", () => {
      it("reads recent unwrapped lines of the real pane", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const { paneId } = await rt.createPane(req());
        await rt.runLauncher(paneId, ["printf", "line-%s\\n", "one", "two", "three"]);
        const text = await eventually(async () => {
          const t = await rt.read(paneId, 3);
          return /line-three/.test(t) ? t : undefined;
        }, "printf output");
        assert.ok(text.split("\n").length <= 3, text);
        assert.match(text, /line-two\nline-three/);
        const reads = (await argvs()).filter((a) => a[1] === "read");
        const recent = ["pane", "read", paneId, "--source", "recent-unwrapped", "--lines", "3"];
        if (recentReadsFixed()) assert.deepEqual(reads.at(-1), recent);
        // Before 0.9.0 the recent read came back empty (the output fits the viewport): `visible` it is.
        else assert.deepEqual(reads.slice(-2), [recent, ["pane", "read", paneId, "--source", "visible", "--lines", "3"]]);
      });

      it("reads `visible` only when a recent read before 0.9.0 came back empty", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const { paneId } = await rt.createPane(req());
        // Enough output to scroll: the recent read has history and is not empty on any version.
        await rt.runLauncher(paneId, ["seq", "1", "200"]);
        await eventually(async () => (/^200$/m.test(await rt.read(paneId, 5)) ? true : undefined), "seq output");
        await fake.clearCalls();
        assert.match(await rt.read(paneId, 5), /198\n199\n200/);
        assert.deepEqual(await argvs(), [["pane", "read", paneId, "--source", "recent-unwrapped", "--lines", "5"]]);
      });

      it("refuses a line count below one", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        await rejectsWith(rt.read("w1:p1", 0), "invalid_params");
        await rejectsWith(rt.read("w1:p1", Number.NaN), "invalid_params");
      });

      it("refuses a pane id that would read as an option", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        await rejectsWith(rt.read("--help", 5), "invalid_params", /not a herdr pane id/);
      });
    });

    describe("herdr runtime: close", () => {
      it("checks the mark with `pane get`, then `pane close`", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const { paneId } = await rt.createPane(req());
        await fake.clearCalls();
        await rt.close(paneId, "a_test000001");
        assert.deepEqual(await argvs(), [
          ["pane", "get", paneId],
          ["pane", "close", paneId],
        ]);
        assert.deepEqual((await rt.liveness([{ paneId, agentId: "a_test000001" }])).get("a_test000001"), { state: "gone" });
      });

      it("is fine with a pane that is already gone", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const { paneId } = await rt.createPane(req());
        await fake.tmux(["kill-pane", "-t", await fake.tmuxPaneOf(paneId)]);
        await fake.clearCalls();
        await rt.close(paneId, "a_test000001");
        assert.deepEqual(await argvs(), [["pane", "get", paneId]]);
      });

      it("is fine when the pane disappears between the check and the close", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const { paneId } = await rt.createPane(req());
        await fake.inject({ command: "pane close", code: "pane_not_found", message: `pane ${paneId} not found` });
        await rt.close(paneId, "a_test000001");
      });

      it("refuses with [not_owned] a pane without this agent's mark, and leaves it open", async () => {
        const { env, ownPane } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const { paneId } = await rt.createPane(req());
        await rejectsWith(rt.close(ownPane, "a_test000001"), "not_owned", /closes only panes it created/);
        await rejectsWith(rt.close(paneId, "a_someoneelse"), "not_owned");
        assert.ok(!(await argvs()).some((a) => a[1] === "close"));
        // the user's pane carries no mark, so it is never "alive" as a sheep; it must still be there
        assert.deepEqual(
          await rt.liveness([
            { paneId: ownPane, agentId: "a_test000001" },
            { paneId, agentId: "a_test000002" },
          ]),
          new Map([
            ["a_test000001", { state: "gone" }],
            ["a_test000002", { state: "gone" }],
          ]),
        );
        assert.ok(await fake.tmuxPaneOf(ownPane));
        assert.deepEqual((await rt.liveness([{ paneId, agentId: "a_test000001" }])).get("a_test000001"), { state: "alive" });
      });
    });

    describe("herdr runtime: agentStatus", () => {
      it("is undefined for a plain shell and herdr's status once an agent is known", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const { paneId } = await rt.createPane(req());
        assert.equal(await rt.agentStatus(paneId), undefined);
        const r = await fake.herdr(["pane", "report-agent", paneId, "--source", "test", "--agent", "pi", "--state", "working"]);
        assert.deepEqual([r.exitCode, r.stdout], [0, ""]);
        assert.equal(await rt.agentStatus(paneId), "working");
        assert.deepEqual((await argvs()).at(-1), ["agent", "get", paneId]);
      });

      it("is undefined for a pane that is gone, and throws when the server is down", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        assert.equal(await rt.agentStatus("w9:p9"), undefined);
        await fake.setDown(true);
        await rejectsWith(rt.agentStatus("w9:p9"), "runtime_unavailable");
      });
    });

    describe("herdr runtime: reportState", () => {
      it("tells herdr a sandboxed sheep's state as the sheep would (`pane report-agent`, its source, a rising seq), and herdr shows it", async () => {
        const { env } = await insideHerdr();
        const rt = new HerdrRuntime({ env });
        const { paneId } = await rt.createPane(req());
        await fake.clearCalls();
        await rt.reportState(paneId, "working");
        assert.equal(await rt.agentStatus(paneId), "working");
        await rt.reportState(paneId, "blocked");
        assert.equal(await rt.agentStatus(paneId), "blocked");
        await rt.reportState(paneId, "idle");
        assert.equal(await rt.agentStatus(paneId), "idle");
        const reports = (await argvs()).filter((a) => a[1] === "report-agent");
        assert.deepEqual(
          reports.map((a) => a.slice(0, 9)),
          ["working", "blocked", "idle"].map((s) => ["pane", "report-agent", paneId, "--source", "pi-shepherd", "--agent", "pi", "--state", s]),
        );
        const seqs = reports.map((a) => Number(a[a.indexOf("--seq") + 1]));
        assert.ok(
          seqs.every((n, i) => Number.isInteger(n) && (i === 0 || n > seqs[i - 1]!)),
          JSON.stringify(seqs),
        );
      });

      it("throws when herdr cannot take it, and refuses a pane id that would be an option", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        await fake.setDown(true);
        await rejectsWith(rt.reportState("w1:p1", "idle"), "runtime_unavailable");
        await fake.setDown(false);
        await rejectsWith(rt.reportState("--help", "idle"), "invalid_params");
      });
    });

    describe("herdr runtime: error mapping", () => {
      const table: Array<[string, ErrorCode, RegExp]> = [
        ["server_not_running", "runtime_unavailable", /Start herdr \(run `herdr`.*PI_SHEPHERD_RUNTIME=tmux/],
        ["server_unavailable", "runtime_unavailable", /herdr server stop/],
        ["protocol_mismatch", "runtime_unavailable", /does not match the running server: point PI_SHEPHERD_HERDR_BIN/],
        ["pane_not_found", "pane_gone", /start a new agent/],
        ["workspace_not_found", "runtime_error", /placement "workspace"/],
        ["tab_not_found", "runtime_error", /tab no longer exists/],
        ["pane_split_failed", "runtime_error", /placement "tab" or "workspace"/],
        ["pane_send_failed", "runtime_error", /still runs a shell/],
        ["confirmation_required", "runtime_error", /answer it there/],
        ["internal_error", "runtime_error", /HERDR_LOG=herdr=debug/],
        ["timeout", "runtime_error", /retry/],
        ["something_new", "runtime_error", /Retry/],
      ];
      for (const [herdrCode, ours, next] of table) {
        it(`${herdrCode} -> [${ours}] with a next step`, async () => {
          const rt = new HerdrRuntime({ env: fake.env });
          await fake.inject({ command: "pane read", code: herdrCode, message: "said herdr" });
          await rejectsWith(rt.read("w1:p1", 5), ours, new RegExp(`herdr pane read failed: ${herdrCode}: said herdr\\. `));
          await rejectsWith(rt.read("w1:p1", 5), ours, next);
        });
      }

      it("a real server_not_running envelope (0.8.0) on a create inside herdr, whose server is the user's to start", async () => {
        const { env } = await insideHerdr();
        await fake.setDown(true);
        const rt = new HerdrRuntime({ env });
        await rejectsWith(rt.createPane(req()), "runtime_unavailable", /herdr tab create failed: server_not_running: no herdr server is running/);
        assert.ok(!(await argvs()).some((a) => a[0] === "server"), "no server started inside herdr");
      });

      it("a real workspace_not_found when the caller's workspace is gone", async () => {
        const rt = new HerdrRuntime({ env: { ...fake.env, HERDR_ENV: "1", HERDR_WORKSPACE_ID: "w9", HERDR_PANE_ID: "w9:p1" } });
        await rejectsWith(rt.createPane(req()), "runtime_error", /herdr tab create failed: workspace_not_found: .*placement "workspace"/);
      });

      it("a usage error (exit 2) is [runtime_error] pointing at the herdr version", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        await fake.inject({ command: "pane list", stderr: "error: unknown option: --pane\n", exit: 2 });
        await rejectsWith(
          rt.liveness([{ paneId: "w1:p1", agentId: "a_test000001" }]),
          "runtime_error",
          /herdr pane list rejected its arguments: error: unknown option: --pane\. .*0\.7\.5 to 0\.9\.x/,
        );
      });

      it("a pre-0.8.0 raw connection error is [runtime_unavailable]", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        await fake.inject({ stderr: 'Error: Os { code: 111, kind: ConnectionRefused, message: "Connection refused" }\n', exit: 1 });
        await rejectsWith(rt.liveness([{ paneId: "w1:p1", agentId: "a_test000001" }]), "runtime_unavailable", /could not reach the herdr server.*Start herdr/);
      });

      it("another failure without an envelope is [runtime_error] quoting herdr", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        await fake.inject({ command: "pane list", stderr: "thread 'main' panicked\n", exit: 101 });
        await rejectsWith(rt.liveness([{ paneId: "w1:p1", agentId: "a_test000001" }]), "runtime_error", /herdr pane list failed: thread 'main' panicked\./);
      });

      it("never puts user text (labels) into error messages", async () => {
        const rt = new HerdrRuntime({ env: fake.env });
        await fake.inject({ command: "workspace create", stderr: "weird\n", exit: 3 });
        await assert.rejects(rt.createPane(req({ label: "SECRET-LABEL" })), (e: unknown) => {
          assert.ok(isShepherdError(e));
          assert.doesNotMatch(e.message, /SECRET-LABEL/);
          return true;
        });
      });
    });

    describe("herdrServerAnswers", () => {
      it("is true when a 0.7.5+ server answers and false otherwise", async () => {
        assert.equal(await herdrServerAnswers({ env: fake.env }), true);
        assert.equal(await herdrServerAnswers({ env: { ...fake.env, PATH: process.env.PATH, PI_SHEPHERD_HERDR_BIN: fake.bin } }), true);
        assert.equal(await herdrServerAnswers({ env: { ...fake.env, FAKE_HERDR_VERSION: "0.7.4" } }), false);
        assert.equal(await herdrServerAnswers({ env: fake.env, bin: path.join(tmp, "missing") }), false);
        await fake.inject({ command: "pane list", code: "protocol_mismatch", message: "protocol 17 != 19" });
        assert.equal(await herdrServerAnswers({ env: fake.env }), false);
        await fake.inject(undefined);
        await fake.setDown(true);
        assert.equal(await herdrServerAnswers({ env: fake.env }), false);
      });
    });

    describe("fake herdr: the contract it reproduces", () => {
      it("refuses --json on control commands and --current without HERDR_PANE_ID with exit 2 and plain text", async () => {
        for (const args of [
          ["pane", "list", "--json"],
          ["tab", "create", "--json"],
          ["agent", "get", "w1:p1", "--json"],
        ]) {
          const r = await fake.herdr(args);
          assert.deepEqual([r.exitCode, r.stdout, r.stderr.trim()], [2, "", "error: unknown option: --json"]);
        }
        const r = await fake.herdr(["pane", "split", "--current", "--direction", "right"]);
        assert.deepEqual([r.exitCode, r.stderr.trim()], [2, "error: --current requires HERDR_PANE_ID"]);
        // #2900: from 0.8.1 `pane current --current` without HERDR_PANE_ID takes the focused pane instead.
        await fake.herdr(["workspace", "create", "--cwd", tmp, "--focus"]);
        const current = await fake.herdr(["pane", "current", "--current"]);
        if (/^0\.(7\.|8\.0)/.test(herdrVersion)) assert.equal(current.exitCode, 2);
        else assert.match(current.stdout, /"type":"pane_current","pane":\{"pane_id":"w1:p1"/);
      });

      it("prints help with exit 0 for -h anywhere before --", async () => {
        const r = await fake.herdr(["pane", "split", "--direction", "right", "-h"]);
        assert.equal(r.exitCode, 0);
        assert.match(r.stdout, /usage/);
      });

      it("never reuses ids, and closing the last pane closes its tab and workspace", async () => {
        const ws = JSON.parse((await fake.herdr(["workspace", "create", "--cwd", tmp])).stdout) as { result: { root_pane: { pane_id: string } } };
        assert.equal(ws.result.root_pane.pane_id, "w1:p1");
        const split = await fake.herdr(["pane", "split", "w1:p1", "--direction", "down"]);
        assert.match(split.stdout, /^\{"id":"cli:pane:split","result":\{"type":"pane_info","pane":\{"pane_id":"w1:p2",.*"focused":false/);
        assert.equal((await fake.herdr(["pane", "close", "w1:p2"])).stdout, '{"id":"cli:pane:close","result":{"type":"ok"}}\n');
        const again = await fake.herdr(["pane", "split", "--pane", "w1:p1", "--direction", "right"]);
        assert.match(again.stdout, /"pane_id":"w1:p3"/);
        assert.equal((await fake.herdr(["pane", "close", "w1:p3"])).exitCode, 0);
        assert.equal((await fake.herdr(["pane", "close", "w1:p1"])).exitCode, 0);
        const tab = await fake.herdr(["tab", "get", "w1:t1"]);
        assert.deepEqual([tab.exitCode, tab.stdout], [1, ""]);
        assert.deepEqual(JSON.parse(tab.stderr), { id: "cli:tab:get", error: { code: "tab_not_found", message: "tab w1:t1 not found" } });
        assert.match((await fake.herdr(["workspace", "list"])).stdout, /"workspaces":\[\]/);
        assert.match((await fake.herdr(["workspace", "create"])).stdout, /"workspace_id":"w2"/);
      });

      it("is silent on `pane run` success, reports its errors as cli:request, and reads without a trailing newline", async () => {
        await fake.herdr(["workspace", "create", "--cwd", tmp]);
        const run = await fake.herdr(["pane", "run", "w1:p1", "echo", "fake-ok"]);
        assert.deepEqual([run.exitCode, run.stdout, run.stderr], [0, "", ""]);
        const bad = await fake.herdr(["pane", "run", "w1:p9", "echo"]);
        assert.equal(bad.exitCode, 1);
        assert.equal(JSON.parse(bad.stderr).id, "cli:request");
        const text = await eventually(async () => {
          const r = await fake.herdr(["pane", "read", "w1:p1", "--source", "visible", "--lines", "2"]);
          return r.stdout.split("\n").includes("fake-ok") ? r.stdout : undefined;
        }, "echo output");
        assert.ok(!text.endsWith("\n"));
        const misordered = await fake.herdr(["pane", "read", "--lines", "2", "w1:p1"]);
        assert.equal(misordered.exitCode, 2);
      });

      it("keeps concurrent calls consistent", async () => {
        await fake.herdr(["workspace", "create", "--cwd", tmp]);
        const results = await Promise.all([1, 2, 3, 4, 5].map(() => fake.herdr(["tab", "create", "--workspace", "w1", "--no-focus"])));
        const ids = results.map((r) => (JSON.parse(r.stdout) as { result: { root_pane: { pane_id: string } } }).result.root_pane.pane_id);
        assert.deepEqual(new Set(ids).size, 5);
        assert.equal((await panes()).length, 6);
        assert.equal((await fake.tmux(["list-panes", "-a", "-F", "#{pane_id}"])).split("\n").length, 6);
      });

      it("reports its version and protocol past the protocol guard, which refuses every other command in both directions", async () => {
        const own = { "0.7.5": 17, "0.8.2": 20, "0.9.4": 22 }[herdrVersion] ?? 22;
        const status = JSON.parse((await fake.herdr(["status", "server", "--json"])).stdout) as Record<string, unknown>;
        assert.deepEqual([status.status, status.version, status.protocol, status.compatible], ["running", herdrVersion, own, true]);
        for (const [server, protocol] of [
          ["0.7.5", 17],
          ["0.8.2", 20],
          ["0.9.4", 22],
        ] as const) {
          await fake.setServerVersion(server);
          const s = JSON.parse((await fake.herdr(["status", "server", "--json"])).stdout) as Record<string, unknown>;
          assert.deepEqual([s.version, s.protocol, s.compatible], [server, protocol, protocol === own]);
          const r = await fake.herdr(["pane", "list"]);
          if (protocol === own) assert.equal(r.exitCode, 0, r.stderr);
          else {
            const e = (JSON.parse(r.stderr) as { error: { code: string; message: string } }).error;
            assert.deepEqual([r.exitCode, e.code], [1, "protocol_mismatch"]);
            assert.match(
              e.message,
              own > protocol ? /is newer than server protocol.*restart the Herdr server/ : /is older than server protocol.*upgrade the Herdr client/,
            );
          }
        }
        await fake.setDown(true);
        const down = JSON.parse((await fake.herdr(["status", "server", "--json"])).stdout) as Record<string, unknown>;
        assert.deepEqual([down.status, down.running, down.version, down.protocol, down.compatible], ["not_running", false, null, null, null]);
      });

      it("a server started with `herdr server` stops on SIGHUP before 0.9.4, with its panes, and always on SIGTERM", async () => {
        await fake.setDown(true);
        const server = spawn(fake.bin, ["server"], { env: fake.env, stdio: "ignore" });
        try {
          const pid = await eventually(() => fake.serverPid(), "the server's pid");
          await fake.herdr(["workspace", "create", "--cwd", tmp]);
          const exited = new Promise((r) => server.once("exit", r));
          process.kill(pid, "SIGHUP");
          if (/^0\.([0-8]\.|9\.[0-3]$)/.test(herdrVersion)) {
            await exited;
            assert.equal((await fake.herdr(["pane", "list"])).exitCode, 1, "server_not_running");
            assert.equal((await fake.tmux(["list-panes", "-a"]).catch(() => "")).trim(), "", "its panes ended with it");
          } else {
            assert.equal((await fake.herdr(["pane", "list"])).exitCode, 0);
            process.kill(pid, "SIGTERM");
            await exited;
            assert.equal((await fake.herdr(["pane", "list"])).exitCode, 1);
          }
        } finally {
          if (server.exitCode === null && server.signalCode === null) server.kill("SIGKILL");
        }
      });

      it("empty `recent` reads before 0.9.0 while the output fits the viewport (#3444); `visible` has it", async () => {
        await fake.herdr(["workspace", "create", "--cwd", tmp]);
        await fake.herdr(["pane", "run", "w1:p1", "echo", "fits"]);
        await eventually(async () => ((await fake.herdr(["pane", "read", "w1:p1", "--source", "visible"])).stdout.includes("fits") ? true : undefined), "echo");
        const recent = (await fake.herdr(["pane", "read", "w1:p1", "--source", "recent"])).stdout;
        if (recentReadsFixed()) assert.match(recent, /fits/);
        else assert.equal(recent, "");
      });

      it("names its own binary in HERDR_BIN_PATH from 0.8.1, and `agent prompt` types into a pane whose agent is not blocked", async () => {
        await fake.herdr(["workspace", "create", "--cwd", tmp]);
        const out = path.join(tmp, "bin-path");
        await fake.herdr(["pane", "run", "w1:p1", `printf '%s' "\${HERDR_BIN_PATH-unset}" > ${out}`]);
        const bin = await eventually(() => readFile(out, "utf8").catch(() => undefined), "the pane's HERDR_BIN_PATH");
        assert.equal(bin, /^0\.(7\.|8\.0)/.test(herdrVersion) ? "unset" : fake.bin);
        assert.equal((await fake.herdr(["agent", "prompt", "w1:p1", "hi"])).exitCode, 1, "agent_not_found: a plain shell");
        await fake.herdr(["pane", "report-agent", "w1:p1", "--source", "t", "--agent", "pi", "--state", "idle"]);
        const r = await fake.herdr(["agent", "prompt", "w1:p1", "echo prompted"]);
        assert.match(r.stdout, /"type":"agent_prompted"/);
        assert.equal((await fake.herdr(["agent", "prompt", "w1:p1", "x", "--timeout", "5"])).exitCode, 2, "--timeout without --wait");
      });

      it("saved machines from 0.9.0 and --machine from 0.9.1: 32-hex ids, ids of their own, HERDR_PANE_ID ignored, and what it cannot forward refused", async () => {
        const list = await fake.herdr(["machine", "list", "--json"]);
        if (/^0\.[0-8]\./.test(herdrVersion)) {
          assert.deepEqual([list.exitCode, list.stderr.trim()], [2, "error: unknown command: machine"]);
          assert.equal((await fake.herdr(["--machine", "box", "pane", "list"])).exitCode, 2);
          return;
        }
        assert.deepEqual(JSON.parse(list.stdout), []);
        const added = await fake.herdr(["machine", "add", "me@box", "--label", "box"]);
        const id = /Saved SSH machine ([0-9a-f]{32})\. Remote server is ready\./.exec(added.stdout)?.[1];
        assert.ok(id, added.stdout);
        assert.equal((await fake.herdr(["machine", "disable", "box"])).exitCode, 1, "labels are not ids");
        const profiles = JSON.parse((await fake.herdr(["machine", "list", "--json"])).stdout) as { id: string; label: string; enabled: boolean }[];
        assert.deepEqual(
          profiles.map((p) => [p.id, p.label, p.enabled]),
          [[id, "box", true]],
        );
        await fake.herdr(["workspace", "create", "--cwd", tmp]);
        const remote = await fake.herdr(["--machine", "box", "workspace", "create", "--cwd", "/"], { HERDR_PANE_ID: "w1:p1" });
        assert.match(remote.stdout, /"root_pane":\{"pane_id":"w1:p1"/, "w1:p1 exists on the machine too, unrelated to Local's");
        assert.equal((await fake.herdr([`--machine=${id}`, "pane", "list"])).stdout.match(/"pane_id"/g)?.length, 1);
        const local = JSON.parse((await fake.herdr(["pane", "list"])).stdout) as { result: { panes: unknown[] } };
        assert.equal(local.result.panes.length, 1);
        // HERDR_PANE_ID names a Local pane: under --machine it is ignored, so --current has nothing.
        const current = await fake.herdr(["--machine", "box", "pane", "split", "--current", "--direction", "right"], { HERDR_PANE_ID: "w1:p1" });
        assert.equal(current.exitCode, 2);
        for (const args of [
          ["--machine", "box", "machine", "list"],
          ["--machine", "box", "status"],
          ["--machine", "nope", "pane", "list"],
          ["--machine", "-x", "pane", "list"],
          ["--machine", "box", "--session", "s", "pane", "list"],
        ]) {
          const r = await fake.herdr(args);
          assert.equal(r.exitCode, 2, `${JSON.stringify(args)}: ${r.stderr}`);
        }
        assert.match((await fake.herdr(["--machine", "box", "status"])).stderr, /is not an API-backed machine command/);
        const status = await fake.herdr(["--machine", "box", "status", "server", "--json"]);
        assert.match(status.stdout, /"status":"running"/, "status server is forwarded");
        await fake.herdr(["machine", "disable", id]);
        assert.equal((await fake.herdr(["--machine", "box", "pane", "list"])).exitCode, 2, "a disabled machine");
      });

      it("records argv and the caller's HERDR_PANE_ID", async () => {
        await fake.herdr(["pane", "list"], { HERDR_PANE_ID: "w1:p1" });
        const [call] = await fake.calls();
        assert.deepEqual([call?.argv, call?.callerPaneId], [["pane", "list"], "w1:p1"]);
        assert.match(call?.ts ?? "", /^\d{4}-\d\d-\d\dT/);
      });
    });
  });
}
