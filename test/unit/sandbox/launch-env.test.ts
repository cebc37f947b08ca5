/**
 * The pane's bubblewrap sets the CA settings node reads only while it starts, as the shepherd has
 * them: the launcher's node then equals the spec's and runs pi in its own process, not a second node.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { sandboxedPaneArgv } from "../../../src/sandbox/launch.ts";

test("a sandboxed pane sets the shepherd's startup-only CA settings inside, and no other variable of its env", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-launch-env-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const env = { HOME: dir, NODE_EXTRA_CA_CERTS: "/etc/ca.pem", SSL_CERT_DIR: "/etc/certs", NODE_OPTIONS: "--inspect", GITHUB_TOKEN: "secret" };
  const argv = sandboxedPaneArgv({
    bwrap: "/usr/bin/bwrap",
    config: { settings: { default: "on" }, bwrap: async () => "/usr/bin/bwrap" },
    env,
    agentDir: join(dir, "agent"),
    stateDir: join(dir, "agent", "pi-shepherd"),
    sheepDir: join(dir, "agent", "pi-shepherd", "sheep", "a_1"),
    sessionFile: join(dir, "agent", "pi-shepherd", "sheep", "a_1", "session.jsonl"),
    worktreesDir: join(dir, "agent", "pi-shepherd", "worktrees"),
    cwd: dir,
    argv: ["/node", "/launcher.mjs", "/spec.json"],
  }).join(" ");
  assert.match(argv, /--setenv NODE_EXTRA_CA_CERTS \/etc\/ca\.pem/);
  assert.match(argv, /--setenv SSL_CERT_DIR \/etc\/certs/);
  assert.doesNotMatch(argv, /SSL_CERT_FILE|NODE_OPTIONS|--inspect|GITHUB_TOKEN|secret/);
});
