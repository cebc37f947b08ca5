/**
 * A remote sheep's live terminal in a real browser (issue 34): a real pi shepherd here, a real pi
 * sheep in the private tmux of the test's remote host (a network namespace with its own sshd,
 * reached through OpenSSH alone), on the scripted model, and the panel in Debian's chromium. The
 * terminal shows the remote pane's pi through the host's existing link, keys typed in the page
 * reach that pi's editor and its answer shows, a dropped link ends it (the agent there leaves no pipe)
 * and the page opens it again once the link is back, and once the page lets the terminal go nothing
 * of it is left there: no pipe on the pane, no FIFO directory.
 */
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import type { Browser, Page, Route } from "playwright-core";
import { launchChromium, openPage, type PageTrouble, panelOn } from "../support/panel-browser.ts";
import type { RemoteHost } from "../support/remote-host.ts";
import { assertNothingLeftRemote, type RemoteWorld, remoteWorld } from "../support/remote-world.ts";
import type { Scene } from "../support/scene.ts";

type Agent = { agentId: string; paneId: string; host?: string };

describe("a remote sheep's terminal in a real browser, through the host's link", { timeout: 600_000 }, () => {
  let rw: RemoteWorld;
  let remote: RemoteHost;
  let scene: Scene;
  let browser: Browser;
  let page: Page;
  let trouble: PageTrouble;
  let url: string;
  let far: Agent;
  /** The sheep's pane id on the host (the part after "box/"). */
  let pane: string;

  const tmux = async (args: string[]) => {
    const r = await remote.exec(["tmux", "-S", `${remote.agentDir}/pi-shepherd/tmux/default`, ...args]);
    assert.equal(r.exitCode, 0, String(r.stderr));
    return String(r.stdout);
  };
  const piped = async () => (await tmux(["display-message", "-p", "-t", pane, "#{pane_pipe}"])).trim() === "1";
  const fifoDirs = async () => (await readdir(remote.hostPath(remote.tmp))).filter((n) => n.startsWith("pi-shepherd-term-"));
  const rows = async () => (await page.locator(".term-screen .xterm-rows").textContent()) ?? "";
  const untilRows = async (what: string, ok: (text: string) => boolean) => {
    for (let i = 0; i < 300; i++) {
      if (ok(await rows())) return;
      await page.waitForTimeout(100);
    }
    assert.fail(`the terminal never showed ${what}; it shows:\n${await rows()}`);
  };
  const until = async (what: string, ok: () => Promise<boolean>, ms = 15_000) => {
    for (let i = 0; i < ms / 100; i++) {
      if (await ok()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`never: ${what}`);
  };

  before(async () => {
    rw = await remoteWorld("remote-terminal");
    ({ remote } = rw);
    scene = rw.world.scene();
    far = (await scene.ok({ action: "start", agent: "echo", label: "far", host: "box" })).details.agent as Agent;
    assert.match(far.paneId, /^box\/%\d+$/);
    pane = far.paneId.slice("box/".length);
    url = await panelOn(scene.shepherd);
    browser = await launchChromium();
    rw.world.defer(() => browser.close());
    ({ page, trouble } = await openPage(browser));
  });

  after(() => rw?.world.cleanup());

  it("shows the remote pane's pi live, its output carried over the link", async () => {
    await page.goto(url);
    await page.locator(".sheep-link", { hasText: "far" }).click();
    await page.locator('.term-screen[data-state="live"]').waitFor();
    await untilRows("pi's screen", (t) => t.trim().length > 0);
    assert.ok(await piped(), "the agent there pipes the pane's output");
    assert.equal((await fifoDirs()).length, 1, "one FIFO directory there, in the remote's TMPDIR");
  });

  it("keys typed in the page reach the remote pi's editor, and its answer shows in the terminal", async () => {
    await page.locator("#term-typing").check();
    await page.locator(".term-screen").click();
    await page.keyboard.type("hello over the link");
    await untilRows("the typed prompt in pi's editor", (t) => t.includes("hello over the link"));
    assert.match(await tmux(["capture-pane", "-p", "-t", pane]), /hello over the link/, "typed into the remote pane");
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

  it("the link dropped: the terminal ends, the agent there leaves no pipe, and the page opens it again once the link is back", async () => {
    const pipeOwner = async () => Number((await tmux(["display-message", "-p", "-t", pane, "#{@pi_shepherd_pipe}"])).trim());
    const old = await pipeOwner();
    assert.ok((await remote.pids()).includes(old), "the pipe is the agent's there");
    // The page's next ask answered as while the host is still away (502 [host_unreachable]): it asks again by itself.
    let refused = false;
    const awayOnce = async (route: Route) => {
      if (refused || route.request().method() !== "GET") return route.continue();
      refused = true;
      const body = { code: "host_unreachable", message: '[host_unreachable] host "box" unreachable: the test says so.' };
      await route.fulfill({ status: 502, contentType: "application/json", body: JSON.stringify(body) });
      await page.unroute("**/terminal", awayOnce);
    };
    await page.route("**/terminal", awayOnce);
    await remote.restartSshd({ dropConnections: true });
    // The agent there ends on its stdin's end, once it has taken its pipes down.
    await until("the old agent gone", async () => !(await remote.pids()).includes(old), 30_000);
    await until(
      "the page's terminal live again, on the new agent's pipe",
      async () => (await page.locator(".term-screen").getAttribute("data-state")) === "live" && (await piped()) && (await pipeOwner()) !== old,
      90_000,
    );
    // Live again after it was told the host is away: it asked again by itself (a page that gave up stays "ended").
    assert.ok(refused, "the page was told once that the host is away");
    assert.equal((await fifoDirs()).length, 1, "the old agent's FIFO directory is gone; the new one's is there");
    await page.locator(".term-screen").click();
    await page.keyboard.type("after the drop");
    await untilRows("keys typed after the link came back", (t) => t.includes("after the drop"));
  });

  it("once the page lets the terminal go, nothing of it is left on the host", async () => {
    await page.close();
    await until("the remote pane's pipe taken down", async () => !(await piped()));
    await until("the FIFO directory there removed", async () => (await fifoDirs()).length === 0);
    await scene.ok({ action: "close", agentId: far.agentId });
    await assertNothingLeftRemote(rw);
  });
});
