/**
 * The terminal of a sheep on a host whose runtime is herdr (issue 34: "a remote sheep's pane through
 * its host's existing link"), in a real browser: a real pi shepherd here, a real pi sheep in a herdr
 * pane on the test's remote host (a network namespace with its own sshd; herdr there is the project's
 * fake, real tmux panes behind herdr's CLI), the scripted model, and the panel in Debian's chromium.
 * Our agent there polls the pane through that host's herdr and sends the screen over the link; keys
 * typed in the page reach the remote pi's editor and its answer shows.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { FAKE_HERDR_VERSIONS, nodeWithFakeHerdr } from "../support/fake-herdr.ts";
import { launchChromium, openPage, type PageTrouble, panelOn } from "../support/panel-browser.ts";
import { type RemoteWorld, remoteWorld } from "../support/remote-world.ts";
import type { Scene } from "../support/scene.ts";

/** The newest herdr the fake emulates: the poll is the same on every version (the unit tests run them all). */
const version = FAKE_HERDR_VERSIONS[FAKE_HERDR_VERSIONS.length - 1]!;

describe(`a sheep's terminal on a host whose runtime is herdr ${version}, in a real browser`, { timeout: 600_000 }, () => {
  let dir: string;
  let rw: RemoteWorld;
  let scene: Scene;
  let browser: Browser;
  let page: Page;
  let trouble: PageTrouble;
  let url: string;

  const rows = async () => (await page.locator(".term-screen .xterm-rows").textContent()) ?? "";
  const untilRows = async (what: string, ok: (text: string) => boolean) => {
    for (let i = 0; i < 300; i++) {
      if (ok(await rows())) return;
      await page.waitForTimeout(100);
    }
    assert.fail(`the terminal never showed ${what}; it shows:\n${await rows()}`);
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-remote-herdr-term-"));
    const node = await nodeWithFakeHerdr(dir, version);
    rw = await remoteWorld(`remote-herdr-term-${version}`, { host: { runtime: "herdr", node } });
    scene = rw.world.scene();
    const started = await scene.ok({ action: "start", agent: "echo", label: "far-herdr", host: "box" });
    const a = started.details.agent as { runtime: string; paneId: string };
    assert.equal(a.runtime, "herdr");
    assert.match(a.paneId, /^box\//);
    url = await panelOn(scene.shepherd);
    browser = await launchChromium();
    rw.world.defer(() => browser.close());
    ({ page, trouble } = await openPage(browser));
  });

  after(async () => {
    await rw?.world.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it("shows the remote herdr pane's pi, and keys typed in the page reach its editor and the answer shows", async () => {
    await page.goto(url);
    await page.locator(".sheep-link", { hasText: "far-herdr" }).click();
    await page.locator('.term-screen[data-state="live"]').waitFor();
    await untilRows("pi's screen", (t) => t.trim().length > 0);
    await page.locator(".term-screen").click();
    await page.locator("#term-typing").check();
    await page.keyboard.type("hello over the link");
    await untilRows("the typed prompt in pi's editor", (t) => t.includes("hello over the link"));
    await page.keyboard.press("Enter");
    await untilRows("the answer", (t) => t.includes("ECHO: hello over the link"));
    assert.ok(
      rw.world.model.log.some((l) => l.lastUserText === "hello over the link"),
      "the prompt typed in the page reached the remote sheep's model",
    );
    assert.deepEqual(trouble.errors, [], "no script error");
    assert.deepEqual(trouble.failed, [], "no request refused");
    assert.deepEqual(trouble.console, [], "nothing logged as an error");
  });
});
