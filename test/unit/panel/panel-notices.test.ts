/**
 * The page's two ways of telling a person a sheep waits (the `notify` setting's browser channel,
 * notices.js, and the page's own attention, attention.js) show one notification per sheep: both tag
 * it by the sheep, so one replaces the other instead of both showing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, it } from "node:test";
import { PAGE_DIR } from "../../../src/panel/page.ts";

const load = <T>(name: string) => import(pathToFileURL(join(PAGE_DIR, name)).href) as Promise<T>;
const shown: { title: string; tag?: string }[] = [];
const g = globalThis as unknown as { Notification?: unknown };

afterEach(() => {
  delete g.Notification;
  shown.length = 0;
});

it("a notice about a sheep carries that sheep's tag, the one the page's attention uses; one about no sheep its own id", async () => {
  g.Notification = class {
    static permission = "granted";
    constructor(title: string, o: { tag?: string }) {
      shown.push({ title, ...(o.tag !== undefined ? { tag: o.tag } : {}) });
    }
  };
  const { showNotice } = await load<{ showNotice: (d: unknown) => void }>("notices.js");
  const { sheepTag } = await load<{ sheepTag: (id: string) => string }>("attention.js");
  showNotice({ id: "n_1", title: "pi-shepherd: alpha asks", text: "North?", agentId: "a_0123456789" });
  showNotice({ id: "n_2", title: "pi-shepherd: host gpu lost", text: "" });
  assert.deepEqual(shown, [
    { title: "pi-shepherd: alpha asks", tag: sheepTag("a_0123456789") },
    { title: "pi-shepherd: host gpu lost", tag: "n_2" },
  ]);
  assert.equal(sheepTag("a_0123456789"), "pi-shepherd-sheep:a_0123456789");
});

it("another shepherd's sheep that starts to wait is told once, in the background only, and opens on this page through that shepherd", async () => {
  const doc = globalThis as unknown as { document?: { hidden: boolean } };
  const hadDocument = "document" in doc;
  const opened: { title: string; body?: string | undefined; onclick?: () => void }[] = [];
  g.Notification = class {
    static permission = "granted";
    onclick?: () => void;
    constructor(title: string, o: { body?: string; tag?: string }) {
      shown.push({ title, ...(o.tag !== undefined ? { tag: o.tag } : {}) });
      opened.push(Object.assign(this, { title, body: o.body }));
    }
    close() {}
  };
  const { notifySiblings, sheepTag } = await load<{ notifySiblings: (w: unknown[]) => void; sheepTag: (id: string) => string }>("attention.js");
  const beta = { shepherdId: "4242", agentId: "a_0123456789", label: "beta", why: "asks you a question" };
  try {
    doc.document = { hidden: false };
    notifySiblings([beta]);
    assert.deepEqual(shown, [], "a page in sight marks it and counts it; no notification");
    notifySiblings([]);
    doc.document.hidden = true;
    notifySiblings([beta]);
    notifySiblings([beta]);
    assert.deepEqual(shown, [{ title: "beta (pi 4242) asks you", tag: sheepTag("a_0123456789") }], "told once while it waits");
    assert.equal(opened[0]!.body, "beta (pi 4242) asks you a question");
    notifySiblings([{ ...beta, why: "blocked" }]);
    assert.equal(shown.length, 2, "a new reason is told again");
    const w = globalThis as unknown as { window?: unknown; location?: { hash: string } };
    w.window = { focus() {} };
    w.location = { hash: "" };
    opened[0]!.onclick!();
    assert.equal(w.location.hash, "#/shepherd/4242/sheep/a_0123456789", "it opens through its own shepherd's route");
    delete w.window;
    delete w.location;
  } finally {
    if (!hadDocument) delete doc.document;
  }
});
