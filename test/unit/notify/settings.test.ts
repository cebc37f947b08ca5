/** The `notify` setting: hostile values refused with a clear reason, user-only, and read as written. */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { channelId, MAX_CHANNELS, notifyProblem } from "../../../src/notify/settings.ts";
import { loadSettings, userSettingsPath } from "../../../src/settings.ts";

describe("the notify setting", () => {
  it("takes every channel type, several at once, each with its events", () => {
    assert.equal(
      notifyProblem({
        channels: [
          { type: "desktop", events: ["blocked", "question"] },
          { type: "webhook", url: "https://hooks.example/T1", format: "slack" },
          { type: "ntfy", url: "http://127.0.0.1:8080/herd", events: ["failed", "host", "budget", "answer"] },
          { type: "terminal" },
          { type: "browser" },
        ],
      }),
      undefined,
    );
    assert.equal(notifyProblem({}), undefined);
  });

  const HOSTILE: [unknown, RegExp][] = [
    [[], /an object/],
    [{ channels: {} }, /a list of channels/],
    [{ chanels: [] }, /unknown key "chanels"/],
    [{ channels: [{ type: "sms" }] }, /"type" must be one of desktop, webhook, ntfy, terminal, browser/],
    [{ channels: [{ type: "webhook" }] }, /"url" must be a URL/],
    [{ channels: [{ type: "webhook", url: "file:///etc/passwd" }] }, /http or https, not file:/],
    [{ channels: [{ type: "ntfy", url: "http://x/\nHost: evil" }] }, /without spaces or control characters/],
    [{ channels: [{ type: "webhook", url: "https://user:secret@hooks.example/" }] }, /without user:password@/],
    [{ channels: [{ type: "webhook", url: `https://x/${"a".repeat(3000)}` }] }, /at most 2048 characters/],
    [{ channels: [{ type: "desktop", url: "http://x/" }] }, /takes no "url"/],
    [{ channels: [{ type: "ntfy", url: "http://x/", format: "slack" }] }, /takes no "format"/],
    [{ channels: [{ type: "webhook", url: "http://x/", format: "xml" }] }, /"format" must be "json" or "slack"/],
    [{ channels: [{ type: "terminal", events: ["everything"] }] }, /unknown event "everything"/],
    [{ channels: [{ type: "terminal", events: [] }] }, /non-empty list/],
    [{ channels: [{ type: "terminal", events: ["host", "host"] }] }, /named twice/],
    [{ channels: [{ type: "terminal", command: "rm -rf ~" }] }, /unknown key "command"/],
    [{ channels: Array.from({ length: MAX_CHANNELS + 1 }, () => ({ type: "terminal" })) }, /at most 16 channels/],
  ];
  for (const [value, why] of HOSTILE) {
    it(`refuses ${JSON.stringify(value).slice(0, 70)}`, () => {
      const problem = notifyProblem(value);
      assert.ok(problem, "refused");
      assert.match(problem, why);
    });
  }

  it("is the user's alone: a trusted project's file does not set it; a bad value is said with its reason and the default kept", async () => {
    const root = mkdtempSync(join(tmpdir(), "pi-shepherd-notify-settings-"));
    try {
      const agentDir = join(root, "agent");
      const cwd = join(root, "repo");
      mkdirSync(join(cwd, ".pi"), { recursive: true });
      mkdirSync(join(agentDir, "pi-shepherd"), { recursive: true });
      writeFileSync(join(cwd, ".pi", "shepherd.json"), JSON.stringify({ notify: { channels: [{ type: "webhook", url: "https://attacker.example/" }] } }));
      const project = await loadSettings(agentDir, cwd, { projectTrusted: true });
      assert.deepEqual(project.settings.notify, { channels: [] });
      assert.ok(project.problems.some((p) => p.includes('"notify" can only be set in the user\'s settings')));

      writeFileSync(userSettingsPath(agentDir), JSON.stringify({ notify: { channels: [{ type: "webhook", url: "ftp://x/" }] } }));
      const bad = await loadSettings(agentDir, join(root, "elsewhere"));
      assert.deepEqual(bad.settings.notify, { channels: [] });
      assert.ok(
        bad.problems.some((p) => /"notify" must be .*: channel 1 \(webhook\): "url" must be http or https, not ftp:; kept/.test(p)),
        bad.problems.join("\n"),
      );

      const good = { channels: [{ type: "terminal" }, { type: "webhook", url: "http://127.0.0.1:9/hook" }] };
      writeFileSync(userSettingsPath(agentDir), JSON.stringify({ notify: good }));
      const ok = await loadSettings(agentDir, join(root, "elsewhere"));
      assert.deepEqual(ok.settings.notify, good);
      assert.deepEqual(ok.problems, []);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("names a channel by place, type and a hash of its URL, never the URL itself", () => {
    const id = channelId({ type: "webhook", url: "https://hooks.example/secret-path" }, 1);
    assert.match(id, /^1-webhook-[0-9a-f]{8}$/);
    assert.notEqual(id, channelId({ type: "webhook", url: "https://hooks.example/other" }, 1));
  });
});
