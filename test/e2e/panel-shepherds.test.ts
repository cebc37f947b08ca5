/**
 * One page for all of a user's shepherds, on two real pi shepherds of one agent dir and Debian's
 * chromium: each registers its panel, and the page of either lists the other's sheep with their
 * shepherd, read through its own panel; a shepherd that quits leaves the list (its entry dropped
 * by its pid) without an error on the page. Only one holds the stable port; when it quits another
 * takes it over, with the kept token and sessions, so the address printed before keeps working.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { launchChromium, openPage, panelOn } from "../support/panel-browser.ts";
import type { Scene } from "../support/scene.ts";
import { directive } from "../support/scripted-model.ts";

describe("e2e: two shepherds in one page", () => {
  let world: E2eWorld;
  let browser: Browser;
  let a: Scene;
  let b: Scene;
  before(async () => {
    // Free ports: this file tests the list, not the stable port (which another run may hold).
    world = await e2eWorld("panel-shepherds", { agent: { shepherdSettings: { panel: { port: 0 } } } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await world?.cleanup();
  });

  it("the page of one lists the other shepherd's sheep with that shepherd; one that quits leaves the list", async () => {
    a = world.scene();
    b = world.scene();
    await a.start("alpha");
    const beta = (await b.start("beta")).agentId;
    const url = await panelOn(a.shepherd);
    await panelOn(b.shepherd);
    const entries = readdirSync(join(world.agentDir, "pi-shepherd", "panel", "shepherds"));
    assert.equal(entries.length, 2, `one entry per shepherd: ${entries}`);
    const { page, trouble } = await openPage(browser);
    await page.goto(url);
    await page.locator(".sheep-row .sheep-link", { hasText: "alpha" }).waitFor();
    const bPid = String(b.shepherd.proc.pid);
    const other = page.locator(`#shepherds [data-shepherd="${bPid}"]`);
    await other.locator(".sibling-row", { hasText: "beta" }).waitFor({ timeout: 20_000 });
    assert.match((await other.locator("h3").textContent()) ?? "", new RegExp(`^pi ${bPid} · .* · 1 sheep$`));
    assert.equal(await other.locator(".sibling-row td").nth(2).textContent(), `pi ${bPid}`);
    assert.equal(await page.locator("#shepherds .sibling-row", { hasText: "alpha" }).count(), 0, "its own sheep are not listed twice");
    assert.equal(await page.locator("#shepherds").isVisible(), true);
    // The other shepherd's sheep that asks is marked there and counted in this page's title.
    await b.prompt(
      beta,
      directive({ tool: { name: "shepherd_message", arguments: { kind: "question", text: "Which gate?", awaitReply: true, timeout: 300 } }, tag: "ASK" }),
    );
    await other.locator(".sibling-row.needs-you", { hasText: "beta" }).waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => document.title.startsWith("(1) "), undefined, { timeout: 30_000 });

    await b.ok({ action: "close", agentId: "beta" });
    await b.shepherd.stop();
    await page.reload();
    await page.locator(".sheep-row .sheep-link", { hasText: "alpha" }).waitFor();
    await page.locator("#shepherds").waitFor({ state: "hidden", timeout: 20_000 });
    assert.deepEqual(readdirSync(join(world.agentDir, "pi-shepherd", "panel", "shepherds")).length, 1, "the quit shepherd's entry is gone");
    assert.deepEqual(trouble.errors, []);
    assert.deepEqual(trouble.failed, []);
    assert.deepEqual(trouble.console, []);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen({ host: "127.0.0.1", port: 0 }, () => {
      const p = (probe.address() as AddressInfo).port;
      probe.close(() => resolve(p));
    });
  });
}

describe("e2e: the stable port taken over", () => {
  let world: E2eWorld;
  let browser: Browser;
  before(async () => {
    world = await e2eWorld("panel-takeover");
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await world?.cleanup();
  });

  it("the second shepherd says the first holds the stable port; when the first quits it takes the port, and the first's URL opens it", async () => {
    const stable = await freePort();
    const env = { ...world.env, PI_SHEPHERD_PANEL_STABLE_PORT: String(stable) };
    const first = world.shepherd({ env });
    const url = await panelOn(first);
    assert.equal(Number(new URL(url).port), stable);
    const second = world.shepherd({ env });
    const said = (await second.slash("/shepherd panel on")).map((n) => n.text).join("\n");
    assert.match(said, new RegExp(`Port ${stable} \\(the panel's stable port\\) is held by your shepherd pi ${first.proc.pid}`));
    const { page, trouble } = await openPage(browser);
    await page.goto(url);
    await page.locator("#conn", { hasText: "Live" }).waitFor();
    await page.locator(`#shepherds [data-shepherd="${second.proc.pid}"]`).waitFor();
    await first.stop();
    // The page's stream retries; the second shepherd takes the port within its retry, with the first's kept session.
    await page.locator("#conn[data-state=back]").waitFor({ timeout: 30_000 });
    const now = (await second.slash("/shepherd panel url")).map((n) => n.text).join("\n");
    assert.ok(now.includes(url), `the same address: ${now}`);
    await page.reload();
    await page.locator("#conn", { hasText: "Live" }).waitFor();
    assert.equal(await page.locator("#shepherds").isVisible(), false, "the one shepherd left is this page's own");
    assert.deepEqual(trouble.errors, []);
    await second.stop();
  });
});
