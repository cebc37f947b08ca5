import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { PaneCommand } from "../../../src/ports/runtime.ts";
import { TmuxRuntime } from "../../../src/runtimes/tmux/runtime.ts";
import { TmuxError } from "../../../src/runtimes/tmux/tmux-cli.ts";
import { privateSocketOnly, startPrivateTmux, type PrivateTmux } from "../../support/tmux-server.ts";

const reportExit = join(import.meta.dirname, "..", "..", "..", "src", "launch", "report-exit.sh");

/** A pane program; under report-exit.sh, writing to exitFile, where tmux cannot report its end. */
const run = (argv: string[], exitFile = "/nonexistent/exit.json"): PaneCommand => ({ argv, reporting: ["/bin/sh", reportExit, exitFile, ...argv] });
const idle = run(["sleep", "600"]);

// A deadline for polling, not a timing claim: a program starting in a pane on a loaded 2-core machine can take seconds.
const until = async (check: () => Promise<boolean>, ms = 30_000) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("condition not met in time");
};

describe("tmux runtime on a real private server", () => {
  let t: PrivateTmux;
  before(async () => {
    t = await startPrivateTmux();
  });
  after(async () => {
    await t.cleanup();
  });

  const focusState = async () =>
    t.tmux(["list-panes", "-a", "-F", "#{session_name}:#{window_index}.#{pane_index} #{pane_id} win_active=#{window_active} pane_active=#{pane_active}"]);
  const activeOf = async (session: string) => (await t.tmux(["display-message", "-p", "-t", session, "#{window_id} #{pane_id}"])).trim();

  it("outside tmux puts a tab in a detached session, says how to attach, and marks the pane", async () => {
    const rt = new TmuxRuntime({ socket: t.socket, env: { ...process.env, TMUX: undefined, TMUX_PANE: undefined } });
    const userActive = await activeOf("user");
    const pane = await rt.createPane({ agentId: "a_0000000001", placement: "tab", direction: "right", cwd: t.dir, label: "scout", command: idle });
    assert.match(pane.paneId, /^%\d+$/);
    assert.equal(pane.attachHint, `tmux -S '${t.socket}' attach -t 'pi-shepherd'`);
    assert.equal(
      (await t.tmux(["display-message", "-p", "-t", pane.paneId, "#{session_name} #{@pi_shepherd_agent} #{pane_current_path}"])).trim(),
      `pi-shepherd a_0000000001 ${t.dir}`,
    );
    const second = await rt.createPane({ agentId: "a_0000000002", placement: "tab", direction: "right", cwd: t.dir, label: "two", command: idle });
    assert.equal((await t.tmux(["display-message", "-p", "-t", second.paneId, "#{session_name} #{window_active}"])).trim(), "pi-shepherd 0");
    assert.equal(await activeOf("user"), userActive);
    await assert.rejects(
      rt.createPane({ agentId: "a_0000000003", placement: "pane", direction: "right", cwd: t.dir, label: "x", command: idle }),
      /^ShepherdError: \[invalid_params\] placement "pane" splits the shepherd's own pane/,
    );
  });

  it("inside tmux adds an unselected window to the shepherd's session and splits without taking focus", async () => {
    const rt = new TmuxRuntime({ socket: t.socket, env: t.insideEnv() });
    const before = await activeOf("user");
    const tab = await rt.createPane({ agentId: "a_0000000004", placement: "tab", direction: "right", cwd: t.dir, label: "tabbed", command: idle });
    assert.equal((await t.tmux(["display-message", "-p", "-t", tab.paneId, "#{session_name} #{window_active} #{window_name}"])).trim(), "user 0 tabbed");
    assert.equal(tab.attachHint, undefined);
    const split = await rt.createPane({ agentId: "a_0000000005", placement: "pane", direction: "down", cwd: t.dir, label: "split", command: idle });
    const [winOfSplit, winOfUser] = await Promise.all([
      t.tmux(["display-message", "-p", "-t", split.paneId, "#{window_id} #{pane_active}"]),
      t.tmux(["display-message", "-p", "-t", t.userPane, "#{window_id} #{pane_active}"]),
    ]);
    assert.equal(winOfSplit.split(" ")[0], winOfUser.split(" ")[0], "the split is in the shepherd's window");
    assert.equal(winOfSplit.trim().split(" ")[1], "0", "the new pane is not active");
    assert.equal(winOfUser.trim().split(" ")[1], "1", "the shepherd's pane stays active");
    assert.equal(await activeOf("user"), before, await focusState());
  });

  it("moves a sheep's pane into a split of the shepherd's window and out to a window of its own, only a pane with its mark", async () => {
    const rt = new TmuxRuntime({ socket: t.socket, env: t.insideEnv() });
    const before = await activeOf("user");
    const windowOf = async (pane: string) => (await t.tmux(["display-message", "-p", "-t", pane, "#{window_id}"])).trim();
    const tab = await rt.createPane({ agentId: "a_000000000m", placement: "tab", direction: "right", cwd: t.dir, label: "warm echo", command: idle });
    assert.notEqual(await windowOf(tab.paneId), await windowOf(t.userPane), "it waits in a window of its own");
    await rt.place({ paneId: tab.paneId, agentId: "a_000000000m" }, "pane", "right");
    assert.equal(await windowOf(tab.paneId), await windowOf(t.userPane), "a split of the shepherd's window");
    assert.equal(
      (await t.tmux(["display-message", "-p", "-t", tab.paneId, "#{@pi_shepherd_agent} #{pane_active}"])).trim(),
      "a_000000000m 0",
      "marked, not active",
    );
    assert.equal(await activeOf("user"), before, await focusState());
    await assert.rejects(
      rt.place({ paneId: tab.paneId, agentId: "a_000000000x" }, "tab", "right"),
      /^ShepherdError: \[runtime_error\] pane %\d+ is not sheep a_000000000x's; nothing was moved\./,
    );
    assert.equal(await windowOf(tab.paneId), await windowOf(t.userPane), "another sheep's id moves nothing");
    await rt.place({ paneId: tab.paneId, agentId: "a_000000000m" }, "tab", "right");
    assert.notEqual(await windowOf(tab.paneId), await windowOf(t.userPane), "out again, to a window of its own");
    assert.equal(await activeOf("user"), before, await focusState());
    await assert.rejects(
      new TmuxRuntime({ socket: t.socket, env: { ...process.env, TMUX: undefined, TMUX_PANE: undefined } }).place(
        { paneId: tab.paneId, agentId: "a_000000000m" },
        "pane",
        "down",
      ),
      /placement "pane" splits the shepherd's own pane/,
    );
    assert.equal(await rt.close(tab.paneId, "a_000000000m"), true);
  });

  it("a workspace is a new detached session", async () => {
    const rt = new TmuxRuntime({ socket: t.socket, env: t.insideEnv() });
    const ws = await rt.createPane({ agentId: "a_0000000006", placement: "workspace", direction: "right", cwd: t.dir, label: "big job", command: idle });
    const session = (await t.tmux(["display-message", "-p", "-t", ws.paneId, "#{session_name} #{session_attached}"])).trim();
    assert.equal(session, "pi-shepherd-big_job 0");
    assert.match(ws.attachHint!, /attach -t 'pi-shepherd-big_job'$/);
  });

  it("labels never reach a tmux format or a shell", async () => {
    const rt = new TmuxRuntime({ socket: t.socket, env: t.insideEnv() });
    const marker = join(t.dir, "label-marker");
    const label = `#(touch ${marker}) $(touch ${marker}) '; touch ${marker}`;
    const pane = await rt.createPane({ agentId: "a_0000000007", placement: "tab", direction: "right", cwd: t.dir, label, command: idle });
    await t.tmux(["refresh-client", "-S"]).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(existsSync(marker), false);
    const name = (await t.tmux(["display-message", "-p", "-t", pane.paneId, "#{window_name}"])).trim();
    assert.doesNotMatch(name, /[#$'();]/);
  });

  it("runs the command as the pane's own process, no shell: every word arrives as given", async () => {
    const rt = new TmuxRuntime({ socket: t.socket, env: t.insideEnv() });
    const out = join(t.dir, "argv-out");
    const marker = join(t.dir, "quote-marker");
    const words = [`it's "q" $(touch ${marker}) \`touch ${marker}\``, "ends in ;", "#{pane_id} #(touch x)", "$HOME", "\\;", " ünï "];
    const script = 'echo "$$" > "$1.pid"; shift; printf "%s\\n" "$@" > "$0"; exec sleep 600';
    const pane = await rt.createPane({
      agentId: "a_0000000008",
      placement: "tab",
      direction: "right",
      cwd: t.dir,
      label: "quote",
      command: run(["/bin/sh", "-c", script, out, out, ...words]),
    });
    await until(async () => existsSync(out) && (await readFile(out, "utf8")).split("\n").length > words.length);
    assert.deepEqual((await readFile(out, "utf8")).split("\n").slice(0, -1), words);
    assert.equal(existsSync(marker), false);
    const panePid = (await t.tmux(["display-message", "-p", "-t", pane.paneId, "#{pane_pid}"])).trim();
    assert.equal((await readFile(`${out}.pid`, "utf8")).trim(), panePid, "the program is the pane's process: no shell above it");
  });

  it("keeps a pane whose program ended, with its last words, and says how it ended: a code or a signal", async () => {
    const rt = new TmuxRuntime({ socket: t.socket, env: t.insideEnv() });
    const said = await rt.createPane({
      agentId: "a_000000000a",
      placement: "tab",
      direction: "right",
      cwd: t.dir,
      label: "said",
      command: run(["/bin/sh", "-c", "sleep 0.2; echo last words; exit 7"]),
    });
    const killed = await rt.createPane({ agentId: "a_000000000b", placement: "tab", direction: "right", cwd: t.dir, label: "killed", command: idle });
    const pid = Number((await t.tmux(["display-message", "-p", "-t", killed.paneId, "#{pane_pid}"])).trim());
    process.kill(pid, "SIGKILL");
    const refs = [
      { paneId: said.paneId, agentId: "a_000000000a" },
      { paneId: killed.paneId, agentId: "a_000000000b" },
    ];
    await until(async () => [...(await rt.liveness(refs)).values()].every((l) => l.state === "exited"));
    const live = await rt.liveness(refs);
    assert.deepEqual(live.get("a_000000000a"), { state: "exited", exit: { code: 7, signal: null } });
    assert.deepEqual(live.get("a_000000000b"), { state: "exited", exit: { code: null, signal: "SIGKILL" } });
    assert.match(await rt.read(said.paneId, 2), /^last words\nPane is dead \(status 7, /);
    // a dead pane is still ours only while it carries our mark
    await t.tmux(["set-option", "-p", "-t", killed.paneId, "@pi_shepherd_agent", "a_someoneelse"]);
    await assert.rejects(rt.close(killed.paneId, "a_000000000b"), /^ShepherdError: \[not_owned\]/);
    assert.deepEqual((await rt.liveness(refs)).get("a_000000000b"), { state: "gone" });
    await rt.close(said.paneId, "a_000000000a");
    assert.deepEqual((await rt.liveness(refs)).get("a_000000000a"), { state: "gone" });
    await t.tmux(["kill-pane", "-t", killed.paneId]);
  });

  it("names the signal every time, though tmux may miss a dead program's SIGCHLD", async () => {
    // tmux 3.3 can leave a killed program unreaped (dead, no status) until its next SIGCHLD.
    const rt = new TmuxRuntime({ socket: t.socket, env: t.insideEnv() });
    for (let i = 0; i < 6; i++) {
      const agentId = `a_00000race${i}`;
      const pane = await rt.createPane({ agentId, placement: "tab", direction: "right", cwd: t.dir, label: "race", command: idle });
      process.kill(Number((await t.tmux(["display-message", "-p", "-t", pane.paneId, "#{pane_pid}"])).trim()), "SIGKILL");
      const ref = [{ paneId: pane.paneId, agentId }];
      await until(async () => (await rt.liveness(ref)).get(agentId)?.state !== "alive");
      assert.deepEqual((await rt.liveness(ref)).get(agentId), { state: "exited", exit: { code: null, signal: "SIGKILL" } });
      await rt.close(pane.paneId, agentId);
    }
  });

  it("a server going away under a start (its last pane closed a moment before) is tried again, and the start succeeds", async () => {
    // The first new-window meets a dying server, as a start right after a delegate's close off its path did.
    const dying = join(t.dir, "tmux-dying");
    const once = join(t.dir, "dying-once");
    await writeFile(
      dying,
      `#!/bin/sh\nfor a in "$@"; do [ "$a" = new-window ] && [ ! -e '${once}' ] && { : > '${once}'; echo "no current target" >&2; exit 1; }; done\nexec tmux "$@"\n`,
      { mode: 0o755 },
    );
    const rt = new TmuxRuntime({
      socket: t.socket,
      env: { ...process.env, TMUX: undefined, TMUX_PANE: undefined },
      bin: dying,
      sessionName: "pi-shepherd-dying",
    });
    const pane = await rt.createPane({ agentId: "a_00000dying", placement: "tab", direction: "right", cwd: t.dir, label: "after", command: idle });
    assert.ok(existsSync(once), "the first try met the dying server");
    assert.equal((await t.tmux(["display-message", "-p", "-t", pane.paneId, "#{@pi_shepherd_agent}"])).trim(), "a_00000dying");
    await rt.close(pane.paneId, "a_00000dying");
  });

  it("on a tmux older than 3.3 (no #{pane_dead_signal}) the program runs under report-exit.sh, which names the signal", async () => {
    const oldTmux = join(t.dir, "tmux-3.2");
    await writeFile(oldTmux, '#!/bin/sh\nfor a in "$@"; do [ "$a" = -V ] && { echo "tmux 3.2a"; exit 0; }; done\nexec tmux "$@"\n', { mode: 0o755 });
    const rt = new TmuxRuntime({ socket: t.socket, env: t.insideEnv(), bin: oldTmux });
    const exitFile = join(t.dir, "old-exit.json");
    const pane = await rt.createPane({
      agentId: "a_00000old01",
      placement: "tab",
      direction: "right",
      cwd: t.dir,
      label: "old",
      command: run(["/bin/sh", "-c", "sleep 0.2; kill -9 $$"], exitFile),
    });
    await until(async () => existsSync(exitFile));
    assert.deepEqual({ ...JSON.parse(await readFile(exitFile, "utf8")), at: "" }, { code: null, signal: "SIGKILL", at: "" });
    const ref = [{ paneId: pane.paneId, agentId: "a_00000old01" }];
    await until(async () => (await rt.liveness(ref)).get("a_00000old01")?.state === "exited");
    assert.match(await rt.read(pane.paneId, 3), /\[pi-shepherd\] pi exited \(SIGKILL\)\.\nPane is dead/);
    await rt.close(pane.paneId, "a_00000old01");
  });

  it("tells alive from gone in one call, and closes only marked panes", async () => {
    const rt = new TmuxRuntime({ socket: t.socket, env: t.insideEnv() });
    const pane = await rt.createPane({ agentId: "a_0000000009", placement: "tab", direction: "right", cwd: t.dir, label: "live", command: idle });
    const live = await rt.liveness([
      { paneId: pane.paneId, agentId: "a_0000000009" },
      { paneId: t.userPane, agentId: "a_000000000u" },
      { paneId: "%9999", agentId: "a_000000000x" },
    ]);
    // the user's pane exists but carries no mark: it is nobody's sheep
    assert.deepEqual(
      [...live],
      [
        ["a_0000000009", { state: "alive" }],
        ["a_000000000u", { state: "gone" }],
        ["a_000000000x", { state: "gone" }],
      ],
    );
    // the same pane id asked for another agent is not alive: an id is not an identity
    assert.deepEqual((await rt.liveness([{ paneId: pane.paneId, agentId: "a_000000000y" }])).get("a_000000000y"), { state: "gone" });
    await assert.rejects(rt.close(t.userPane, "a_0000000009"), /^ShepherdError: \[not_owned\]/);
    assert.match(await t.tmux(["list-panes", "-a", "-F", "#{pane_id}"]), new RegExp(`^${t.userPane}$`, "m"));
    await rt.close(pane.paneId, "a_0000000009");
    assert.deepEqual((await rt.liveness([{ paneId: pane.paneId, agentId: "a_0000000009" }])).get("a_0000000009"), { state: "gone" });
    await rt.close(pane.paneId, "a_0000000009"); // already gone: fine
  });

  it("in the POSIX locale (an ssh session to a host without LANG) a live pane is alive and marked: tmux's tab-separated table survives", async () => {
    // A tmux server and client without a UTF-8 locale print a tab of a format as "_": every marked pane read as gone.
    const posix = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(LANG|LANGUAGE|LC_\w+|TMUX|TMUX_PANE)$/.test(k)));
    const own = await privateSocketOnly();
    try {
      const rt = new TmuxRuntime({ socket: own.socket, env: { ...posix, LC_ALL: "POSIX" } });
      const agentId = "a_00000posix";
      const pane = await rt.createPane({ agentId, placement: "tab", direction: "right", cwd: own.dir, label: "posix", command: idle });
      assert.deepEqual((await rt.liveness([{ paneId: pane.paneId, agentId }])).get(agentId), { state: "alive" });
      assert.ok((await rt.markedPanes()).some((p) => p.paneId === pane.paneId && p.agentId === agentId));
      assert.equal(await rt.close(pane.paneId, agentId), true);
    } finally {
      await own.cleanup();
    }
  });

  it("closes its own pane in one tmux process, and says it is gone; a pane with another mark takes the careful way and is refused", async () => {
    const log = join(t.dir, "tmux-calls.log");
    const bin = join(t.dir, "counting-tmux");
    // Each tmux process the runtime starts leaves its command (after -u -S <socket>) in the log, then runs tmux.
    await writeFile(bin, `#!/bin/sh\nprintf '%s\\n' "$4" >> '${log}'\nexec tmux "$@"\n`, { mode: 0o700 });
    const rt = new TmuxRuntime({ socket: t.socket, env: t.insideEnv(), bin });
    const pane = await rt.createPane({ agentId: "a_00000close", placement: "tab", direction: "right", cwd: t.dir, label: "c", command: idle });
    await writeFile(log, "");
    assert.equal(await rt.close(pane.paneId, "a_00000close"), true, "known to be gone");
    assert.deepEqual((await readFile(log, "utf8")).trim().split("\n"), ["if-shell"], "one tmux process");
    assert.doesNotMatch(await t.tmux(["list-panes", "-a", "-F", "#{pane_id}"]), new RegExp(`^${pane.paneId}$`, "m"));
    const other = await rt.createPane({ agentId: "a_00000other", placement: "tab", direction: "right", cwd: t.dir, label: "o", command: idle });
    await assert.rejects(rt.close(other.paneId, "a_00000close"), /^ShepherdError: \[not_owned\]/);
    assert.match(await t.tmux(["list-panes", "-a", "-F", "#{pane_id}"]), new RegExp(`^${other.paneId}$`, "m"), "the other sheep's pane stays");
    await rt.close(other.paneId, "a_00000other");
  });

  it("a server that is not running means every pane is gone", async () => {
    const rt = new TmuxRuntime({ socket: join(t.dir, "no-such-socket"), env: process.env });
    assert.deepEqual((await rt.liveness([{ paneId: "%1", agentId: "a_0000000001" }])).get("a_0000000001"), { state: "gone" });
    await assert.rejects(rt.read("%1", 5), /^ShepherdError: \[runtime_unavailable\]/);
  });

  it("a client that cannot connect is not a server that is gone: liveness throws, never says gone", async () => {
    // "error connecting to S (Not a directory)": the same family as EAGAIN, EMFILE and EACCES,
    // which root cannot provoke with file modes
    const blocker = join(t.dir, "a-file");
    await writeFile(blocker, "");
    const rt = new TmuxRuntime({ socket: join(blocker, "sock"), env: process.env });
    await assert.rejects(
      rt.liveness([{ paneId: "%1", agentId: "a_0000000001" }]),
      /^ShepherdError: \[runtime_error\] could not list panes: .*error connecting to/,
    );
    await assert.rejects(rt.close("%1", "a_0000000001"), /^ShepherdError: \[runtime_error\]/);
  });

  it("reads tmux's own words for a missing or refusing server as no server, and nothing else", () => {
    const err = (stderr: string) => new TmuxError(["list-panes"], stderr, 1);
    assert.equal(err("error connecting to /tmp/s (No such file or directory)\n").noServer, true);
    assert.equal(err("no server running on /tmp/s\n").noServer, true);
    for (const transient of ["Resource temporarily unavailable", "Too many open files", "Permission denied"]) {
      assert.equal(err(`error connecting to /tmp/s (${transient})\n`).noServer, false, transient);
    }
    assert.equal(err("server exited unexpectedly\n").noServer, false);
  });

  it("the user's own pane survived everything", async () => {
    assert.equal((await t.tmux(["display-message", "-p", "-t", t.userPane, "#{pane_id}"])).trim(), t.userPane);
  });
});

describe("tmux runtime: a server of its own gets the keys pi asks for", () => {
  it("sets extended-keys on a server it started for its sheep, and leaves a person's running server alone", async () => {
    const own = await privateSocketOnly();
    const theirs = await startPrivateTmux();
    try {
      const outside = { ...process.env, TMUX: undefined, TMUX_PANE: undefined };
      const rt = new TmuxRuntime({ socket: own.socket, env: outside });
      await rt.createPane({ agentId: "a_0000000011", placement: "tab", direction: "right", cwd: own.dir, label: "one", command: idle });
      assert.equal((await own.tmux(["show-options", "-sv", "extended-keys"])).trim(), "on", "pi's tmux warning has nothing to warn about");
      const before = (await theirs.tmux(["show-options", "-sv", "extended-keys"])).trim();
      await new TmuxRuntime({ socket: theirs.socket, env: outside }).createPane({
        agentId: "a_0000000012",
        placement: "tab",
        direction: "right",
        cwd: theirs.dir,
        label: "two",
        command: idle,
      });
      await new TmuxRuntime({ socket: theirs.socket, env: theirs.insideEnv() }).createPane({
        agentId: "a_0000000013",
        placement: "tab",
        direction: "right",
        cwd: theirs.dir,
        label: "three",
        command: idle,
      });
      assert.equal((await theirs.tmux(["show-options", "-sv", "extended-keys"])).trim(), before, "a server that was already running keeps its options");
    } finally {
      await own.cleanup();
      await theirs.cleanup();
    }
  });
});
