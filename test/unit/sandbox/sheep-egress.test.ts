/**
 * The shepherd's egress for its sandboxed sheep: a socket per sheep in a directory of its own (the
 * directory is what a sandbox binds), the policy from the sheep's own model, served once however
 * often asked (a start, then attach after a reload), and a start that could reach nothing refused.
 */
import assert from "node:assert/strict";
import { lstat, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { isShepherdError } from "../../../src/domain/errors.ts";
import { SheepEgress } from "../../../src/sandbox/egress/sheep-egress.ts";
import { EGRESS_SOCKET_NAME } from "../../../src/sandbox/policy.ts";
import { tempDir } from "../../support/egress-sockets.ts";

async function agentDir(t: Parameters<typeof tempDir>[0]): Promise<string> {
  const dir = await tempDir(t);
  await writeFile(
    join(dir, "models.json"),
    JSON.stringify({ providers: { scripted: { baseUrl: "http://127.0.0.1:4100/v1", api: "openai-completions", models: [{ id: "m1" }] } } }),
  );
  await writeFile(join(dir, "settings.json"), JSON.stringify({ defaultProvider: "scripted", defaultModel: "m1" }));
  return dir;
}

test("a sheep's socket is served once in its own directory, with its model's host allowed, and ends with close", async (t) => {
  const dir = await agentDir(t);
  const egress = new SheepEgress({ agentDir: dir, socketsDir: join(dir, "e"), allowNetwork: [] });
  t.after(() => egress.closeAll());
  const sheepDir = join(dir, "a_0123456789");
  await mkdir(sheepDir);
  const [one, two] = await Promise.all([
    egress.open({ agentId: "a_0123456789", logDir: sheepDir }),
    egress.open({ agentId: "a_0123456789", model: "scripted/m1", logDir: sheepDir }),
  ]);
  assert.equal(one, join(dir, "e", "a_0123456789"));
  assert.equal(two, one, "asked twice (a start, then attach), served once at the same place");
  const socket = await lstat(join(one, EGRESS_SOCKET_NAME));
  assert.ok(socket.isSocket());
  assert.equal((await lstat(one)).mode & 0o777, 0o700);
  assert.deepEqual(egress.counts("a_0123456789"), { allowed: 0, refused: 0 });
  await egress.close("a_0123456789");
  await assert.rejects(lstat(join(one, EGRESS_SOCKET_NAME)), /ENOENT/);
  assert.equal(egress.counts("a_0123456789"), undefined);
  // Served again after its close (a shepherd that reloaded), at the same place.
  assert.equal(await egress.open({ agentId: "a_0123456789", logDir: sheepDir }), one);
});

test("a sandboxed start whose model has no known host and no allowNetwork is refused: it would reach nothing", async (t) => {
  const dir = await agentDir(t);
  const none = new SheepEgress({ agentDir: dir, socketsDir: join(dir, "e"), allowNetwork: [] });
  t.after(() => none.closeAll());
  await assert.rejects(none.open({ agentId: "a_0123456789", model: "nobody/x", logDir: dir }), (e) => isShepherdError(e, "sandbox_unavailable"));
  // With an allowNetwork entry the sheep reaches at least that.
  const some = new SheepEgress({ agentDir: dir, socketsDir: join(dir, "f"), allowNetwork: ["models.corp.example"] });
  t.after(() => some.closeAll());
  assert.equal(await some.open({ agentId: "a_0123456789", model: "nobody/x", logDir: dir }), join(dir, "f", "a_0123456789"));
});
