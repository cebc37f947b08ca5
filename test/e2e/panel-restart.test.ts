/**
 * A URL that lasts, on real pi shepherds and Debian's chromium: the panel on its fixed port keeps
 * its token and the page's session across a pi quit and a new pi's start (the panel's private
 * file), so the page open before reconnects by itself and the URL opened after works without a new
 * token; `off` forgets them, so the next pi prints a new token and the old one opens nothing; the
 * herd's totals (a closed sheep's spend among them) are the same after the restart.
 */
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { launchChromium, openPage, panelOn } from "../support/panel-browser.ts";
import { ask } from "../support/panel-world.ts";
import type { RpcShepherd } from "../support/rpc-shepherd.ts";
import { directive } from "../support/scripted-model.ts";

const portOf = (url: string) => Number(new URL(url).port);
const tokenOf = (url: string) => new URL(url).hash.replace(/^#token=/, "");

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen({ host: "127.0.0.1", port: 0 }, () => {
      const p = (probe.address() as AddressInfo).port;
      probe.close(() => resolve(p));
    });
  });
}

describe("e2e: the panel's URL across a pi restart", () => {
  let world: E2eWorld;
  let browser: Browser;
  let port: number;
  let shepherd: RpcShepherd;
  before(async () => {
    port = await freePort();
    world = await e2eWorld("panel-restart", { agent: { shepherdSettings: { panel: { port } } } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await world?.cleanup();
  });

  it("the page open before a restart reconnects by itself, and the URL opened after works without a new token", async () => {
    shepherd = world.shepherd();
    const url = await panelOn(shepherd);
    assert.equal(portOf(url), port);
    const file = join(world.agentDir, "pi-shepherd", "panel", "auth.json");
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const { page, trouble } = await openPage(browser);
    await page.goto(url);
    await page.locator("#conn", { hasText: "Live" }).waitFor();
    await shepherd.stop();
    await page.locator("#conn[data-state=lost]").waitFor({ timeout: 20_000 });

    shepherd = world.shepherd();
    const again = await panelOn(shepherd);
    assert.equal(again, url, "the same URL, token and all");
    // The old page's event stream retried and the new shepherd took its session: live again, no sign-in asked.
    await page.locator("#conn[data-state=back], #conn[data-state=live]").waitFor({ timeout: 30_000 });
    assert.equal(await page.locator("text=/signed out|token/i").count(), 0);
    // A reload of the tab (its session in sessionStorage, its cookie kept) and a new tab on the old URL both work.
    await page.reload();
    await page.locator("#conn", { hasText: "Live" }).waitFor();
    const fresh = await openPage(browser);
    await fresh.page.goto(url);
    await fresh.page.locator("#conn", { hasText: "Live" }).waitFor();
    assert.deepEqual(trouble.errors, []);
    assert.deepEqual(fresh.trouble.errors, []);
    assert.deepEqual(fresh.trouble.failed, []);
    await fresh.page.close();
    await page.close();
  });

  it("off forgets the kept token: the next pi's URL is new and the old token opens nothing", async () => {
    const old = tokenOf(await panelOn(shepherd));
    const off = (await shepherd.slash("/shepherd panel off")).map((n) => n.text).join("\n");
    assert.match(off, /Panel off/);
    await shepherd.stop();
    shepherd = world.shepherd();
    const url = await panelOn(shepherd);
    assert.notEqual(tokenOf(url), old);
    assert.equal((await ask(port, { path: "/api/v1/sheep", headers: { authorization: `Bearer ${old}` } })).status, 401);
    assert.equal((await ask(port, { path: "/api/v1/sheep", headers: { authorization: `Bearer ${tokenOf(url)}` } })).status, 200);
    await shepherd.stop();
  });

  it("the herd's totals survive the restart: a closed sheep's spend still counts after a new pi took the records over", async () => {
    type Totals = { input: number; output: number; prompts: number; today: { input: number; prompts: number } };
    const totals = async (url: string): Promise<Totals> => {
      const a = await ask(port, { path: "/api/v1/sheep", headers: { authorization: `Bearer ${tokenOf(url)}` } });
      assert.equal(a.status, 200, a.text);
      return (a.json() as { totals: Totals }).totals;
    };
    const first = world.scene();
    const alpha = await first.start("alpha");
    const p = await first.prompt(alpha.agentId, directive({ reply: "Counted", usage: { prompt: 1234, completion: 56 }, tag: "SPEND" }));
    assert.equal((await first.wait(p, 120)).status, "completed");
    await first.ok({ action: "close", agentId: alpha.agentId });
    const before = await totals(await panelOn(first.shepherd));
    assert.ok(before.input >= 1234 && before.prompts === 1 && before.today.prompts === 1, JSON.stringify(before));
    await first.shepherd.stop();
    // The new pi lets go of the dead shepherd's closed sheep (it does not adopt them): their spend came over with its tally.
    const second = world.scene();
    const after = await totals(await panelOn(second.shepherd));
    const spend = (t: Totals) => ({ input: t.input, output: t.output, prompts: t.prompts, today: t.today });
    assert.deepEqual(spend(after), spend(before));
    assert.equal((after as Totals & { closed: number }).closed, 0, "the closed sheep's record was let go of");
    await second.shepherd.stop();
  });
});
