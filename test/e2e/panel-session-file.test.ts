/**
 * Issue 31, item 10, in pi's interactive screen: `/shepherd panel on` and `/shepherd panel url` in
 * a real pi shepherd's TUI (a private tmux server, read with capture-pane) draw the panel's URL
 * with its token once, while pi's session files (and every other file under the agent dir and the
 * project but the panel's own 0600 ones under pi-shepherd/panel/) never hold the token: the transcript entry is kept with the token redacted, and a later
 * drawing of it (Ctrl+O) shows it redacted. Before, the whole URL was a custom entry of the
 * session file (0644), written again at each `/shepherd panel url`.
 */
import assert from "node:assert/strict";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import type { TuiShepherd } from "../support/tui-shepherd.ts";

/** Every regular file under dir, however deep. */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

describe("the panel's token never reaches pi's session file", { timeout: 300_000 }, () => {
  let world: E2eWorld | undefined;
  let tui: TuiShepherd;

  before(async () => {
    world = await e2eWorld("panel-session-file");
    tui = await world.tui({ width: 200, height: 50 });
    await tui.until(/scripted-model/);
  });
  after(() => world?.cleanup());

  it("/shepherd panel on and url draw the token once; the session files hold it redacted; Ctrl+O redraws it redacted", async () => {
    await tui.type("/shepherd panel on");
    const on = /Panel on: http:\/\/127\.0\.0\.1:(\d+)\/#token=([A-Za-z0-9_-]{20,})/.exec(
      await tui.until(/Panel on: http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]{20,}/),
    );
    assert.ok(on);
    const token = on[2]!;
    await tui.type("/shepherd panel url");
    const count = (s: string) => s.split(token).length - 1;
    await tui.until((s) => count(s) >= 2, 30_000);

    // pi writes its session file once there is a conversation, with every entry before it.
    await tui.type("hello there");
    await tui.until(/ECHO: hello there/, 60_000);
    // What pi wrote for the transcript: both answers, each with the token redacted.
    const sessions = (await filesUnder(world!.agentDir)).filter((f) => f.endsWith(".jsonl"));
    assert.ok(sessions.length > 0, "pi wrote a session file");
    const written = (await Promise.all(sessions.map((f) => readFile(f, "utf8")))).join("\n");
    assert.equal(written.split("#token=… (shown once; /shepherd panel url shows it again)").length - 1, 2, written);
    // The panel's own private files (its kept auth, its registry entry) are the only ones that may hold it, 0600 in a 0700 directory.
    const own = join(world!.agentDir, "pi-shepherd", "panel");
    assert.equal((await stat(own)).mode & 0o777, 0o700);
    for (const f of [...(await filesUnder(world!.agentDir)), ...(await filesUnder(world!.cwd))]) {
      if ((await stat(f)).size > 64 * 1024 * 1024) continue;
      if (!(await readFile(f)).includes(token)) continue;
      assert.ok(f.startsWith(`${own}/`), `${f} holds the panel's token`);
      assert.equal((await stat(f)).mode & 0o777, 0o600, `${f} holds the token and is not 0600`);
    }

    // Any later drawing of those entries (here Ctrl+O's) shows them redacted.
    await tui.keys("C-o");
    const redrawn = await tui.until((s) => count(s) === 0 && /#token=… \(shown once/.test(s), 30_000);
    assert.match(redrawn, /Panel on: http:\/\/127\.0\.0\.1:\d+\/#token=… \(shown once; \/shepherd panel url shows it again\)/);
    await tui.keys("C-o");
  });
});
