/**
 * The desktop channel against a real notification daemon: Debian's notify-send (libnotify-bin) talks
 * to python3-dbusmock's notification_daemon template on a private D-Bus session bus this test starts
 * (dbus), found through DBUS_SESSION_BUS_ADDRESS in the env the channel is given, as the shepherd
 * gives it its own env. The daemon logs each Notify call; exactly one arrives, with the notice's
 * title as the summary and its text as the body. `.ci/run` installs the three packages.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { execa } from "execa";
import { makeChannels } from "../../../src/notify/channels/make.ts";
import { buildNotice } from "../../../src/notify/notice.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Debian's python, where python3-dbusmock is installed (a PATH python may be another one).
const PYTHON = "/usr/bin/python3";

function need(what: string, ok: boolean, pkg: string): void {
  if (!ok) throw new Error(`${what} is missing: apt-get install -y ${pkg} (.ci/run installs it)`);
}

async function until(what: string, fn: () => Promise<boolean> | boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(100);
  }
}

describe("the desktop channel with a real notification daemon on a private D-Bus session", { timeout: 60_000 }, () => {
  let dir: string;
  let bus: ChildProcess | undefined;
  let daemon: ChildProcess | undefined;
  let env: NodeJS.ProcessEnv;
  const log = () => (existsSync(join(dir, "calls.log")) ? readFileSync(join(dir, "calls.log"), "utf8") : "");

  before(async () => {
    need("notify-send", existsSync("/usr/bin/notify-send"), "libnotify-bin");
    need("dbus-daemon", existsSync("/usr/bin/dbus-daemon"), "dbus");
    need("gdbus", existsSync("/usr/bin/gdbus"), "libglib2.0-bin");
    const mock = await execa(PYTHON, ["-c", "import dbusmock"], { reject: false, timeout: 10_000 });
    need("python3-dbusmock", mock.exitCode === 0, "python3-dbusmock");

    dir = mkdtempSync(join(tmpdir(), "pi-shepherd-dbus-"));
    const address = `unix:path=${join(dir, "bus")}`;
    bus = spawn("dbus-daemon", ["--session", "--nofork", `--address=${address}`, "--print-address=1"], { stdio: ["ignore", "pipe", "ignore"] });
    let printed = "";
    bus.stdout!.on("data", (c: Buffer) => (printed += c.toString()));
    await until("the private bus's address", () => printed.includes("\n"), 10_000);
    env = { ...process.env, DBUS_SESSION_BUS_ADDRESS: printed.split("\n")[0]!.trim() };
    // Never the user's own session bus: the one this test started.
    assert.match(env.DBUS_SESSION_BUS_ADDRESS!, new RegExp(`^unix:path=${dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/bus,`));

    daemon = spawn(PYTHON, ["-m", "dbusmock", "--template", "notification_daemon", "-l", join(dir, "calls.log")], {
      env,
      stdio: "ignore",
    });
    const owned = async () => {
      const r = await execa(
        "gdbus",
        [
          "call",
          "--session",
          "--dest",
          "org.freedesktop.DBus",
          "--object-path",
          "/org/freedesktop/DBus",
          "--method",
          "org.freedesktop.DBus.NameHasOwner",
          "org.freedesktop.Notifications",
        ],
        { env, reject: false, timeout: 5_000 },
      );
      return r.stdout.includes("true");
    };
    await until("the notification daemon on the private bus", owned, 20_000);
  });

  after(async () => {
    for (const p of [daemon, bus]) {
      if (p?.pid !== undefined && p.exitCode === null && p.signalCode === null) {
        const ended = new Promise((r) => p.once("exit", r));
        p.kill("SIGTERM");
        await ended;
      }
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("one notice is one Notify call, its title the summary and its text the body", async () => {
    const notice = buildNotice("n_1", [
      {
        kind: "question",
        key: "question:m_7",
        agentId: "a_1",
        label: "scout",
        host: "local",
        text: "North or south pasture?",
        at: Date.parse("2026-01-01T00:00:00Z"),
        messageId: "m_7",
      },
    ]);
    const [desktop] = makeChannels([{ type: "desktop" }], {}, env);
    await desktop!.send(notice);
    await until("the daemon's log of the call", () => /\bNotify\b/.test(log()), 10_000);
    await sleep(500);
    const calls = log()
      .split("\n")
      .filter((l) => /^\d+\.\d+ Notify /.test(l));
    assert.equal(calls.length, 1, `exactly one Notify: ${log()}`);
    // Notify(app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout)
    const expected = `Notify "pi-shepherd" 0 "" "${notice.title}" "${notice.text}" [] {"urgency": 2`;
    assert.ok(log().includes(expected), `the call names the app, the summary and the body, critical for a question:\n${log()}\nwanted: ${expected}`);
    assert.match(notice.title, /^pi-shepherd: scout \(a_1\) on local asks a question$/);
    assert.match(notice.text, /North or south pasture\?/);
  });
});
