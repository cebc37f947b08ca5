// Not on the e2e world: it runs `npm run demo` as a newcomer does, and the demo makes its own temp dir, tmux server and model.
/**
 * `npm run demo`, the first command README gives a newcomer, run as they run it: a real shepherd pi
 * and two real sheep on the scripted model. What it says must be true after it ends: two answers,
 * nothing left running, and no session file it calls kept that it then removed without saying so.
 */
import assert from "node:assert/strict";
import { execa } from "execa";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { node22, repoRoot } from "../support/rpc-shepherd.ts";

describe("npm run demo", { timeout: 180_000 }, () => {
  it("answers twice, leaves nothing running, and says what becomes of the session files it names", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, DEMO_PAUSE_MS: "0" };
    delete env.TMUX;
    delete env.TMUX_PANE;
    // SIGINT on a time-out: the demo's own handler then ends its tmux server, model and temp dir.
    const run = await execa(node22, ["--import", "tsx", join(repoRoot, "scripts", "demo.ts")], {
      cwd: repoRoot,
      env,
      extendEnv: false,
      stdin: "ignore",
      reject: false,
      timeout: 150_000,
      killSignal: "SIGINT",
    });
    assert.equal(run.exitCode, 0, `the demo failed:\n${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /\[completed\] Scout report:/);
    assert.match(run.stdout, /\[completed\] Worker done:/);
    assert.match(run.stdout, /Nothing left running/);
    const kept = [...run.stdout.matchAll(/session file is kept at (\S+?)\.?$/gm)].map((m) => m[1]!);
    assert.equal(kept.length, 2, "each close names where its session is");
    for (const path of kept) {
      if (existsSync(path)) continue;
      // Gone: then the demo said it removes them, after naming them and before it ended.
      const said = run.stdout.indexOf("the session files above with it");
      assert.ok(said > run.stdout.indexOf(path), `${path} was called kept and removed without a word:\n${run.stdout}`);
    }
  });
});
