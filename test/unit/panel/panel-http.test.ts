/**
 * The panel's HTTP side on real sockets (127.0.0.1) over a real shepherd core on the in-memory
 * multiplexer: who may ask (token, cookie, host, origin), what a change needs (JSON), which ids
 * pass, and that every change is the tool's own command with the core's codes.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { contentSecurityPolicy } from "../../../src/panel/page.ts";

/** A page answer's policy with its nonce (new in every answer) written as N. */
const policyOf = (header: unknown) => String(header).replace(/'nonce-[A-Za-z0-9+/]{22}=='/, "'nonce-N'");
const CONTENT_SECURITY_POLICY = contentSecurityPolicy("N");
import { parseTarget } from "../../../src/panel/server.ts";
import { MemoryWorkspace } from "../../support/memory-workspace.ts";
import { ask, type PanelWorld, panelWorld } from "../../support/panel-world.ts";
import { parsePromptId } from "../../../src/domain/ids.ts";

const JSON_TYPE = { "content-type": "application/json" };

/** Every route that needs the token, with a method and a body where it takes one. */
function routes(id: string): { method: string; path: string; body?: object }[] {
  return [
    { method: "GET", path: "/metrics" },
    { method: "GET", path: "/api/v1/sheep" },
    { method: "GET", path: "/api/v1/agents" },
    { method: "GET", path: `/api/v1/sheep/${id}` },
    { method: "GET", path: `/api/v1/sheep/${id}/conversation?turns=2` },
    { method: "GET", path: `/api/v1/sheep/${id}/screen` },
    { method: "GET", path: `/api/v1/sheep/${id}/egress` },
    { method: "GET", path: `/api/v1/sheep/${id}/messages` },
    { method: "GET", path: `/api/v1/sheep/${id}/diff` },
    { method: "GET", path: "/api/v1/events" },
    { method: "POST", path: "/api/v1/session", body: {} },
    { method: "POST", path: `/api/v1/sheep/${id}/prompt`, body: { message: "hi" } },
    { method: "POST", path: `/api/v1/sheep/${id}/reply`, body: { messageId: "m_0000000000", text: "x" } },
    { method: "POST", path: `/api/v1/sheep/${id}/interrupt`, body: {} },
    { method: "POST", path: `/api/v1/sheep/${id}/close`, body: {} },
    { method: "POST", path: "/api/v1/start", body: { agent: "scout" } },
  ];
}

describe("panel HTTP: who may ask", () => {
  let w: PanelWorld;
  let id: string;
  before(async () => {
    w = await panelWorld();
    id = (await w.start("one")).agentId;
  });
  after(() => w.close());

  it("every route but /healthz and the page answers 401 without the token, with a wrong one, or a wrong cookie, and nothing runs", async () => {
    const wrong = [
      {},
      { authorization: "Bearer wrong-token" },
      { authorization: `Bearer ${w.token}x` },
      { authorization: `Basic ${Buffer.from(`x:${w.token}`).toString("base64")}` },
      { cookie: `pi_shepherd_panel_${w.port}=forged` },
    ];
    for (const r of routes(id)) {
      for (const headers of wrong) {
        const a = await ask(w.port, { method: r.method, path: r.path, headers: { ...JSON_TYPE, ...headers }, ...(r.body ? { body: r.body } : {}) });
        assert.equal(a.status, 401, `${r.method} ${r.path} ${JSON.stringify(headers)}: ${a.text}`);
        assert.deepEqual(Object.keys(a.json() as object), ["code", "message"]);
        assert.equal((a.json() as { code: string }).code, "unauthorized");
        assert.match((a.json() as { message: string }).message, /^\[unauthorized\] /);
      }
    }
    assert.equal(w.shepherd.registry.agents.get(id)?.state, "idle", "no prompt or close went through");
    assert.equal(w.shepherd.registry.agents.size, 1, "no start went through");
    const health = await ask(w.port, { path: "/healthz" });
    assert.equal(health.status, 200);
    assert.deepEqual(health.json(), { ok: true, sheep: 1 });
  });

  it("/favicon.ico answers without the token: the page's small icon, no 401 for a browser to log (issue 31, item 24)", async () => {
    for (const path of ["/favicon.ico", "/assets/favicon.svg"]) {
      const icon = await ask(w.port, { path });
      assert.equal(icon.status, 200, `${path}: ${icon.text}`);
      assert.equal(icon.headers["content-type"], "image/svg+xml");
      assert.match(icon.text, /^<svg [^>]*viewBox="0 0 32 32"/);
      assert.ok(icon.text.length < 2048, "a small icon");
      assert.doesNotMatch(icon.text, /<script|\son[a-z]+=|href=/i, "an image that runs and links nothing");
    }
  });

  it("/api/v1/agents lists the agent definitions a start may name (the start form's choices), with the token only", async () => {
    const s = await w.session();
    const r = await ask(w.port, { path: "/api/v1/agents", headers: s.headers });
    assert.equal(r.status, 200, r.text);
    const { agents } = r.json() as { agents: { name: string; description: string; source: string }[] };
    assert.deepEqual(
      agents.map((a) => [a.name, a.source]).sort(),
      [["scout", "bundled"]],
      "the bundled scout; the repository's helper is not read without trust",
    );
    assert.deepEqual(Object.keys(agents[0]!).sort(), ["description", "name", "source"], "no path of the user's disk");
    assert.equal((await ask(w.port, { path: "/api/v1/agents?x=1", headers: s.headers })).status, 400);
  });

  it("the token buys a session: an HttpOnly SameSite=Strict cookie and a key; the two together answer, either alone is 401, and neither buys another session", async () => {
    const s = await w.session();
    assert.match(s.setCookie, new RegExp(`^pi_shepherd_panel_${w.port}=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=/$`));
    assert.match(s.key, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(s.key, s.cookie.slice(s.cookie.indexOf("=") + 1), "the key is not the cookie's value");
    const list = await ask(w.port, { path: "/api/v1/sheep", headers: s.headers });
    assert.equal(list.status, 200, list.text);
    // A browser sends 127.0.0.1's cookies to every port: a server on another port (a sheep's dev
    // server) that got the cookie has it without the key, and an <img> or a form cannot send a header.
    for (const headers of [{ cookie: s.cookie }, { cookie: s.cookie, "x-pi-shepherd-session": `${s.key}x` }, { "x-pi-shepherd-session": s.key }]) {
      for (const r of routes(id)) {
        const a = await ask(w.port, {
          method: r.method,
          path: r.path,
          headers: { ...JSON_TYPE, ...headers, origin: `http://127.0.0.1:${w.port}` },
          ...(r.body ? { body: r.body } : {}),
        });
        assert.equal(a.status, 401, `${r.method} ${r.path} with ${Object.keys(headers).join(" and ")}: ${a.text}`);
      }
    }
    const other = await w.session();
    assert.equal(
      (await ask(w.port, { path: "/api/v1/sheep", headers: { ...s.headers, "x-pi-shepherd-session": other.key } })).status,
      401,
      "one session's key does not open another's cookie",
    );
    const again = await ask(w.port, { method: "POST", path: "/api/v1/session", headers: { ...s.headers, ...JSON_TYPE } });
    assert.equal(again.status, 401, "a session is not the token");
    // A change by session needs the page's Origin: a browser always sends it, so its absence is no page of ours.
    const { origin: _origin, ...noOriginHeaders } = s.headers;
    const noOrigin = await ask(w.port, {
      method: "POST",
      path: `/api/v1/sheep/${id}/prompt`,
      headers: { ...noOriginHeaders, ...JSON_TYPE },
      body: { message: "x" },
    });
    assert.equal(noOrigin.status, 403, noOrigin.text);
    assert.equal((noOrigin.json() as { code: string }).code, "bad_origin");
    assert.equal(w.shepherd.registry.agents.get(id)?.state, "idle");
    assert.equal(w.shepherd.registry.agents.size, 1, "no start went through");
  });

  it("two shepherds' panels on one machine name their cookies apart, so a browser keeps a session with each", async () => {
    const other = await panelWorld();
    try {
      const mine = await w.session();
      const theirs = await other.session();
      const name = (c: string) => c.slice(0, c.indexOf("="));
      assert.notEqual(name(mine.cookie), name(theirs.cookie), "a browser keeps cookies by host, not port: one name would overwrite the other's");
      // A browser sends every cookie of 127.0.0.1 to both: each panel takes its own.
      const jar = `${mine.cookie}; ${theirs.cookie}`;
      assert.equal((await ask(w.port, { path: "/api/v1/sheep", headers: { ...mine.headers, cookie: jar } })).status, 200);
      assert.equal((await ask(other.port, { path: "/api/v1/sheep", headers: { ...theirs.headers, cookie: jar } })).status, 200);
      const crossed = `${name(theirs.cookie)}=${mine.cookie.slice(mine.cookie.indexOf("=") + 1)}`;
      assert.equal((await ask(other.port, { path: "/api/v1/sheep", headers: { ...mine.headers, cookie: crossed } })).status, 401);
    } finally {
      await other.close();
    }
  });

  it("a cross-origin request is 403 [bad_origin], with the token or the cookie, and changes nothing", async () => {
    for (const origin of ["http://evil.example", `http://127.0.0.1:${w.port + 1}`, "null", `https://127.0.0.1:${w.port}`]) {
      const post = await ask(w.port, {
        method: "POST",
        path: `/api/v1/sheep/${id}/prompt`,
        headers: { ...w.authed(JSON_TYPE), origin },
        body: { message: "x" },
      });
      assert.equal(post.status, 403, `${origin}: ${post.text}`);
      assert.equal((post.json() as { code: string }).code, "bad_origin");
      const get = await ask(w.port, { path: "/api/v1/sheep", headers: { ...w.authed(), origin } });
      assert.equal(get.status, 403, origin);
    }
    const site = await ask(w.port, { path: "/api/v1/sheep", headers: { authorization: `Bearer ${w.token}`, "sec-fetch-site": "cross-site" } });
    assert.equal(site.status, 403);
    assert.equal(w.shepherd.registry.agents.get(id)?.state, "idle");
  });

  it("a Host of another name (DNS rebinding) or port is refused 421 [bad_host] before anything, /healthz and the page too", async () => {
    for (const host of ["evil.example", `evil.example:${w.port}`, `127.0.0.1:${w.port + 1}`, "127.0.0.1", `127.0.0.1.nip.io:${w.port}`, `[::1]:${w.port}`]) {
      for (const path of ["/healthz", "/", "/api/v1/sheep"]) {
        const a = await ask(w.port, { path, host, headers: w.authed() });
        assert.equal(a.status, 421, `${host} ${path}: ${a.text}`);
        assert.equal((a.json() as { code: string }).code, "bad_host");
      }
    }
    assert.equal((await ask(w.port, { path: "/healthz", host: `localhost:${w.port}` })).status, 200);
  });

  it("a POST that is not JSON is 415 (text/plain, a form, none); a body that is no object is 400; nothing runs", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", undefined]) {
      const a = await ask(w.port, {
        method: "POST",
        path: `/api/v1/sheep/${id}/prompt`,
        headers: { ...w.authed(), ...(type ? { "content-type": type } : {}) },
        body: JSON.stringify({ message: "x" }),
      });
      assert.equal(a.status, 415, `${type}: ${a.text}`);
      assert.equal((a.json() as { code: string }).code, "unsupported_media_type");
    }
    for (const body of ["{not json", "[1,2]", '"text"', "null"]) {
      const a = await ask(w.port, { method: "POST", path: `/api/v1/sheep/${id}/prompt`, headers: w.authed(JSON_TYPE), body });
      assert.equal(a.status, 400, `${body}: ${a.text}`);
      assert.equal((a.json() as { code: string }).code, "invalid_params");
    }
    assert.equal(w.shepherd.registry.agents.get(id)?.state, "idle");
  });

  it("ids with /, .., %2e%2e, %2f or anything but an agent id are 400 before any lookup", async () => {
    const bad = [
      "/api/v1/sheep/..",
      "/api/v1/sheep/%2e%2e",
      "/api/v1/sheep/%2E%2E/prompt",
      "/api/v1/sheep/.",
      `/api/v1/sheep/${id}%2f..`,
      "/api/v1/sheep/a%2Fb",
      "/api/v1/sheep/a%5Cb",
      `/api/v1/sheep/${id}/../../metrics`,
      "/api/v1/sheep/one",
      "/api/v1/sheep/a_UPPERCASE0",
      "/api/v1/sheep/p_0000000000",
      "/api/v1/sheep/%zz",
      "/api/v1/sheep//prompt",
    ];
    for (const path of bad) {
      for (const method of ["GET", "POST"]) {
        const a = await ask(w.port, { method, path, headers: w.authed(JSON_TYPE), ...(method === "POST" ? { body: { message: "x" } } : {}) });
        assert.equal(a.status, 400, `${method} ${path}: ${a.text}`);
        assert.equal((a.json() as { code: string }).code, "invalid_params");
      }
    }
    const diff = await ask(w.port, { path: `/api/v1/sheep/${id}/diff?promptId=../x`, headers: w.authed() });
    assert.equal(diff.status, 400, diff.text);
    assert.deepEqual(
      w.audited.filter((e) => e.action === "prompt"),
      [],
    );
    assert.throws(() => parseTarget("/a/%2e%2e/b"), /\[invalid_params\]/);
    assert.deepEqual(parseTarget("/api/v1/sheep/").segments, ["api", "v1", "sheep"]);
  });

  it("an unknown route is 404 [not_found], a wrong method 405, both as {code, message}", async () => {
    const a = await ask(w.port, { path: "/api/v1/nothing", headers: w.authed() });
    assert.equal(a.status, 404);
    assert.equal((a.json() as { code: string }).code, "not_found");
    const m = await ask(w.port, { method: "DELETE", path: `/api/v1/sheep/${id}`, headers: w.authed() });
    assert.equal(m.status, 405);
    assert.equal((m.json() as { code: string }).code, "method_not_allowed");
    const g = await ask(w.port, { method: "GET", path: `/api/v1/sheep/${id}/prompt`, headers: w.authed() });
    assert.equal(g.status, 405);
    // Allow names what the route takes, as its message does; HEAD is GET without the body.
    assert.equal(m.headers.allow, "GET, HEAD");
    for (const path of ["/api/v1/sheep", `/api/v1/sheep/${id}`, `/api/v1/sheep/${id}/screen`, "/metrics"]) {
      const head = await ask(w.port, { method: "HEAD", path, headers: w.authed() });
      assert.equal(head.status, 200, `HEAD ${path}: ${head.text}`);
      assert.equal(head.text, "", "no body");
    }
    assert.equal(g.headers.allow, "POST");
    assert.equal((await ask(w.port, { method: "GET", path: "/api/v1/session", headers: w.authed() })).headers.allow, "POST");
    assert.equal((await ask(w.port, { method: "POST", path: "/healthz", headers: JSON_TYPE, body: {} })).headers.allow, "GET, HEAD");
  });

  it("what Object.prototype holds is no route: toString, constructor, __proto__ … are 404, and no path that is not a route becomes a label of /metrics", async () => {
    for (const name of ["toString", "constructor", "valueOf", "__proto__", "hasOwnProperty", "nothing-here"]) {
      for (const method of ["GET", "POST"]) {
        const a = await ask(w.port, { method, path: `/api/v1/sheep/${id}/${name}`, headers: w.authed(JSON_TYPE), ...(method === "POST" ? { body: {} } : {}) });
        assert.equal(a.status, 404, `${method} ${name}: ${a.text}`);
        assert.equal((a.json() as { code: string }).code, "not_found");
      }
    }
    const metrics = (await ask(w.port, { path: "/metrics", headers: w.authed() })).text;
    const routes = [...metrics.matchAll(/^pi_shepherd_panel_requests_total\{route="([^"]*)"\}/gm)].map((m) => m[1]);
    assert.ok(routes.length > 0, metrics);
    for (const r of routes)
      assert.doesNotMatch(r!, /toString|constructor|valueOf|__proto__|hasOwnProperty|nothing-here/, `a label for a path that is no route: ${r}`);
  });
});

describe("panel HTTP: the tool's commands with the core's codes", () => {
  let w: PanelWorld;
  before(async () => {
    w = await panelWorld({ settings: { agentScope: "both" }, projectTrusted: true });
  });
  after(() => w.close());

  const post = (path: string, body: object) => ask(w.port, { method: "POST", path, headers: w.authed(JSON_TYPE), body });
  const get = (path: string) => ask(w.port, { path, headers: w.authed() });

  it("start, prompt, steer, reply, messages, screen, conversation and close run as the tool's own actions", async () => {
    const started = await post("/api/v1/start", { agent: "scout", label: "api-one" });
    assert.equal(started.status, 200, started.text);
    const { agentId } = started.json() as { agentId: string; label: string };
    assert.equal((started.json() as { label: string }).label, "api-one");
    const p = await post(`/api/v1/sheep/${agentId}/prompt`, { message: "look at src\nthen report", requestId: "r-1" });
    assert.equal(p.status, 200, p.text);
    const { promptId } = p.json() as { promptId: string };
    assert.match(promptId, /^p_[0-9a-z]{10}$/);
    assert.equal(
      ((await post(`/api/v1/sheep/${agentId}/prompt`, { message: "again", requestId: "r-1" })).json() as { promptId: string }).promptId,
      promptId,
      "a requestId is the same prompt",
    );
    const busy = await post(`/api/v1/sheep/${agentId}/prompt`, { message: "more" });
    assert.equal(busy.status, 409, busy.text);
    assert.equal((busy.json() as { code: string }).code, "prompt_pending");
    assert.match((busy.json() as { message: string }).message, /^\[prompt_pending\] /);
    const steer = await post(`/api/v1/sheep/${agentId}/prompt`, { message: "also tests", deliverAs: "steer" });
    assert.equal(steer.status, 200, steer.text);
    assert.equal((steer.json() as { deliverAs: string }).deliverAs, "steer");
    const odd = await post(`/api/v1/sheep/${agentId}/prompt`, { message: "x", agentId: "a_0000000000" });
    assert.equal(odd.status, 400, "a body cannot name another sheep");
    const bad = await post(`/api/v1/sheep/${agentId}/prompt`, { message: "x", deliverAs: "later" });
    assert.equal(bad.status, 400);

    const detail = (await get(`/api/v1/sheep/${agentId}`)).json() as {
      working: string;
      state: string;
      prompts: { promptId: string; firstLine: string; status: string }[];
    };
    assert.equal(detail.state, "working");
    assert.equal(detail.working, "look at src");
    assert.deepEqual(
      detail.prompts.map((x) => [x.promptId, x.firstLine, x.status]),
      [[promptId, "look at src", "working"]],
    );

    w.world.say(agentId, { messageId: "m_aaaaaaaaaa", kind: "question", text: "<b>which</b> file?", awaitReply: true, timeoutSec: 60 });
    const msgs = (await get(`/api/v1/sheep/${agentId}/messages`)).json() as { messages: { messageId: string; text: string; awaitReply?: boolean }[] };
    assert.deepEqual(
      msgs.messages.map((m) => [m.messageId, m.text, m.awaitReply]),
      [["m_aaaaaaaaaa", "<b>which</b> file?", true]],
    );
    const replied = await post(`/api/v1/sheep/${agentId}/reply`, { messageId: "m_aaaaaaaaaa", text: "src/a.ts" });
    assert.equal(replied.status, 200, replied.text);
    assert.deepEqual(replied.json(), { agentId, messageId: "m_aaaaaaaaaa" });
    // The answered question's card says what it was told (issue 31, item 24).
    const answered = (await get(`/api/v1/sheep/${agentId}/messages`)).json() as { messages: { replied?: boolean; reply?: string }[] };
    assert.deepEqual(
      answered.messages.map((m) => [m.replied, m.reply]),
      [[true, "src/a.ts"]],
    );
    const twice = await post(`/api/v1/sheep/${agentId}/reply`, { messageId: "m_aaaaaaaaaa", text: "again" });
    assert.equal(twice.status, 409, twice.text);
    assert.equal((twice.json() as { code: string }).code, "reply_refused");
    const unknown = await post(`/api/v1/sheep/${agentId}/reply`, { messageId: "m_zzzzzzzzzz", text: "x" });
    assert.equal(unknown.status, 404);
    assert.equal((unknown.json() as { code: string }).code, "unknown_message");

    const screen = await get(`/api/v1/sheep/${agentId}/screen`);
    assert.equal(screen.status, 200, screen.text);
    assert.match((screen.json() as { text: string }).text, /pane of api-one/);
    const conv = await get(`/api/v1/sheep/${agentId}/conversation?turns=2`);
    assert.equal(conv.status, 200, conv.text);
    assert.ok(Array.isArray((conv.json() as { turns: unknown[] }).turns));
    assert.equal((await get(`/api/v1/sheep/${agentId}/conversation?turns=0`)).status, 400);
    assert.equal((await get(`/api/v1/sheep/${agentId}/conversation?lines=2`)).status, 400);

    const closed = await post(`/api/v1/sheep/${agentId}/close`, {});
    assert.equal(closed.status, 200, closed.text);
    assert.equal((closed.json() as { agentId: string }).agentId, agentId);
    assert.deepEqual((closed.json() as { cancelledPromptIds: string[] }).cancelledPromptIds, [promptId]);
    const after = await post(`/api/v1/sheep/${agentId}/prompt`, { message: "x" });
    assert.equal(after.status, 409, after.text);
    assert.equal((after.json() as { code: string }).code, "agent_closed");
    assert.ok(
      w.audited.some((e) => e.action === "prompt" && e.reason === "agent_closed"),
      `the refusal is in the audit log, as the tool's: ${JSON.stringify(w.audited)}`,
    );
    const gone = await get("/api/v1/sheep");
    assert.deepEqual((gone.json() as { sheep: unknown[] }).sheep, []);
  });

  it("a sheep nobody knows is 404 [unknown_agent]; a start of a project agent that needs a confirmation is 403 [project_agent_refused]", async () => {
    const none = await get("/api/v1/sheep/a_0000000000");
    assert.equal(none.status, 404, none.text);
    assert.equal((none.json() as { code: string }).code, "unknown_agent");
    const p = await post("/api/v1/sheep/a_0000000000/prompt", { message: "x" });
    assert.equal(p.status, 404);
    const refused = await post("/api/v1/start", { agent: "helper" });
    assert.equal(refused.status, 403, refused.text);
    assert.equal((refused.json() as { code: string }).code, "project_agent_refused");
    assert.match((refused.json() as { message: string }).message, /needs a confirmation and there is no UI to ask/);
    const skip = await post("/api/v1/start", { agent: "helper", confirmProjectAgents: false });
    assert.equal(skip.status, 400, "the panel cannot waive the confirmation");
    const unknownAgent = await post("/api/v1/start", { agent: "nobody" });
    assert.equal(unknownAgent.status, 404, unknownAgent.text);
    assert.equal((unknownAgent.json() as { code: string }).code, "unknown_definition");
    // Another machine is the tool's `host`, with its rules: one the settings do not name is the core's refusal.
    const elsewhere = await post("/api/v1/start", { agent: "scout", host: "build-box" });
    assert.equal(elsewhere.status, 404, elsewhere.text);
    assert.equal((elsewhere.json() as { code: string }).code, "host_unknown");
  });

  it("interrupt is the tool's interrupt: an i_ delivery aimed at the running prompt; none running is 409 [not_working]", async () => {
    const { agentId } = (await post("/api/v1/start", { agent: "scout", label: "int-1" })).json() as { agentId: string };
    const idle = await post(`/api/v1/sheep/${agentId}/interrupt`, {});
    assert.equal(idle.status, 409, idle.text);
    assert.equal((idle.json() as { code: string }).code, "not_working");
    const { promptId } = (await post(`/api/v1/sheep/${agentId}/prompt`, { message: "a long job" })).json() as { promptId: string };
    const extra = await post(`/api/v1/sheep/${agentId}/interrupt`, { force: true });
    assert.equal(extra.status, 400, "interrupt takes no field");
    const r = await post(`/api/v1/sheep/${agentId}/interrupt`, {});
    assert.equal(r.status, 200, r.text);
    const out = r.json() as { agentId: string; promptId: string; interruptId: string };
    assert.deepEqual([out.agentId, out.promptId], [agentId, promptId]);
    assert.match(out.interruptId, /^i_[0-9a-z]{10}$/);
    assert.deepEqual(w.world.mem(agentId).deliveries.at(-1), { kind: "interrupt", interruptId: out.interruptId, target: promptId });
    assert.ok(w.audited.some((e) => e.event === "interrupt" && e.promptId === promptId));
    // The sheep aborts the turn and reports it cancelled: the prompt settles so, and the sheep stays.
    w.world.answer(agentId, promptId, "stopped half way", "cancelled");
    const settled = await w.shepherd.wait([parsePromptId(promptId)], { timeoutSec: 5 });
    assert.equal(settled[0]?.status, "cancelled");
    assert.equal(w.shepherd.registry.agents.get(agentId)?.state, "idle");
    await post(`/api/v1/sheep/${agentId}/close`, {});
    const closed = await post(`/api/v1/sheep/${agentId}/interrupt`, {});
    assert.equal(closed.status, 409);
    assert.equal((closed.json() as { code: string }).code, "agent_closed");
  });

  it("the fleet lists every live sheep with its totals", async () => {
    const a = (await post("/api/v1/start", { agent: "scout", label: "f-1" })).json() as { agentId: string };
    (await post("/api/v1/start", { agent: "scout", label: "f-2" })).json();
    await post(`/api/v1/sheep/${a.agentId}/prompt`, { message: "count the lines" });
    const list = (await get("/api/v1/sheep")).json() as {
      sheep: { label: string; state: string; working?: string; host: string; queue: number; usage: object }[];
      totals: { sheep: number; byState: Record<string, number> };
    };
    assert.deepEqual(
      list.sheep.map((s) => [s.label, s.state, s.working, s.host]),
      [
        ["f-1", "working", "count the lines", "local"],
        ["f-2", "idle", undefined, "local"],
      ],
    );
    assert.deepEqual(list.totals.byState, { working: 1, idle: 1 });
    assert.equal(list.totals.sheep, 2);
  });

  it("a sandboxed sheep: the list and its page say so, and …/egress gives the counts and last entries of its log (issue 33)", async () => {
    const boxed = (await post("/api/v1/start", { agent: "scout", label: "f-boxed" })).json() as { agentId: string };
    const plain = (await post("/api/v1/start", { agent: "scout", label: "f-plain" })).json() as { agentId: string };
    // The memory world runs no bubblewrap: the record says sandboxed as a sandboxed start records it.
    w.shepherd.registry.agents.get(boxed.agentId)!.sandboxed = true;
    const before = w.world.files.egress;
    const asked: [string, number][] = [];
    w.world.files.egress = async (agentId, entries) => {
      asked.push([agentId, entries]);
      if (agentId !== boxed.agentId) return undefined;
      return {
        allowed: 1,
        refused: 2,
        bytesUp: 10,
        bytesDown: 20,
        since: "2026-01-01T00:00:00.000Z",
        skipped: 0,
        entries: [
          {
            time: "2026-01-01T00:00:01.000Z",
            target: "127.0.0.1:9",
            method: "CONNECT",
            verdict: "refused",
            reason: "not_allowed",
            bytesUp: 0,
            bytesDown: 0,
            durationMs: 0,
          },
        ],
      };
    };
    try {
      const list = (await get("/api/v1/sheep")).json() as { sheep: { label: string; sandboxed: boolean }[] };
      assert.deepEqual(
        list.sheep.filter((s) => s.label.startsWith("f-boxed") || s.label.startsWith("f-plain")).map((s) => [s.label, s.sandboxed]),
        [
          ["f-boxed", true],
          ["f-plain", false],
        ],
      );
      assert.equal(((await get(`/api/v1/sheep/${boxed.agentId}`)).json() as { sandboxed: boolean }).sandboxed, true);
      const r = await get(`/api/v1/sheep/${boxed.agentId}/egress`);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json(), {
        sandboxed: true,
        allowed: 1,
        refused: 2,
        bytesUp: 10,
        bytesDown: 20,
        since: "2026-01-01T00:00:00.000Z",
        entries: [
          {
            time: "2026-01-01T00:00:01.000Z",
            target: "127.0.0.1:9",
            method: "CONNECT",
            verdict: "refused",
            reason: "not_allowed",
            bytesUp: 0,
            bytesDown: 0,
            durationMs: 0,
          },
        ],
        skipped: 0,
      });
      assert.deepEqual(asked.at(-1), [boxed.agentId, 200], "the last 200 entries, through the tool's read");
      assert.deepEqual((await get(`/api/v1/sheep/${plain.agentId}/egress`)).json(), {
        sandboxed: false,
        allowed: 0,
        refused: 0,
        bytesUp: 0,
        bytesDown: 0,
        entries: [],
        skipped: 0,
      });
      assert.equal((await get(`/api/v1/sheep/${boxed.agentId}/egress?lines=5`)).status, 400);
      assert.equal((await post(`/api/v1/sheep/${boxed.agentId}/egress`, {})).status, 405);
    } finally {
      if (before) w.world.files.egress = before;
      else delete w.world.files.egress;
    }
    await post(`/api/v1/sheep/${boxed.agentId}/close`, {});
    await post(`/api/v1/sheep/${plain.agentId}/close`, {});
  });

  it("conversation says when more is earlier, also when one huge turn filled the whole tail (issue 31, item 3)", async () => {
    const a = (await post("/api/v1/start", { agent: "scout", label: "f-conv" })).json() as { agentId: string };
    const before = w.world.files.conversation;
    w.world.files.conversation = async (_id, _turns) => ({
      sessionPath: "/s.jsonl",
      turns: [{ cut: true, lines: [{ kind: "answer", text: "done" }] }],
      earlier: true,
    });
    try {
      const c = (await get(`/api/v1/sheep/${a.agentId}/conversation`)).json();
      assert.deepEqual(c, { turns: [{ cut: true, lines: [{ kind: "answer", text: "done" }] }], earlier: true });
    } finally {
      w.world.files.conversation = before;
    }
    await post(`/api/v1/sheep/${a.agentId}/close`, {});
  });

  it("a record holding what no reader passes (a duration past any date, usage as text) never makes a view throw or a total text (issue 31)", async () => {
    const a = (await post("/api/v1/start", { agent: "scout", label: "f-bad" })).json() as { agentId: string };
    const { promptId } = (await post(`/api/v1/sheep/${a.agentId}/prompt`, { message: "go" })).json() as { promptId: string };
    w.world.answer(a.agentId, promptId, "done");
    await w.shepherd.wait([parsePromptId(promptId)], { timeoutSec: 5 });
    const settled = w.shepherd.registry.prompts.get(promptId)!.settled!;
    settled.durationMs = 1.7e16;
    settled.usage = { input: "05<img>" as unknown as number, output: 3, cost: "00.011e400" as unknown as number };
    const detail = await get(`/api/v1/sheep/${a.agentId}`);
    assert.equal(detail.status, 200, detail.text);
    const d = detail.json() as { usage: { input: number; output: number; cost?: number }; prompts: { promptId: string; finishedAt?: string }[] };
    assert.deepEqual(d.usage, { input: 0, output: 3 });
    assert.equal(d.prompts.find((p) => p.promptId === promptId)?.finishedAt, undefined);
    const list = (await get("/api/v1/sheep")).json() as { totals: { input: unknown; cost: unknown } };
    assert.equal(typeof list.totals.input, "number");
    assert.equal(typeof list.totals.cost, "number");
    await post(`/api/v1/sheep/${a.agentId}/close`, {});
  });
});

describe("panel HTTP: a prompt's evidence", () => {
  let w: PanelWorld;
  before(async () => {
    w = await panelWorld({ workspace: (cwd) => new MemoryWorkspace([cwd]) });
    w.world.files.evidencePath = async (_agentId, promptId) => join(w.root, `${promptId}.patch`);
  });
  after(() => w.close());

  it("diff gives that prompt's files and the whole patch from its file, or the latest; no evidence yet is 404 [no_evidence]", async () => {
    const s = await w.start("ev-diff");
    const get = (path: string) => ask(w.port, { path, headers: w.authed() });
    const none = await get(`/api/v1/sheep/${s.agentId}/diff`);
    assert.equal(none.status, 404, none.text);
    assert.equal((none.json() as { code: string }).code, "no_evidence");
    const first = (await w.shepherd.prompt(s.agentId, "edit a")).promptId;
    assert.equal((await get(`/api/v1/sheep/${s.agentId}/diff?promptId=${first}`)).status, 404, "still running: no evidence");
    w.world.answer(s.agentId, first, "edited");
    await w.shepherd.wait([first], { timeoutSec: 5 });
    const patch = 'diff --git a/a.txt b/a.txt\n-<img src=x onerror="alert(1)">\n+<script>alert(1)</script>\n';
    await writeFile(join(w.root, `${first}.patch`), patch);
    const second = (await w.shepherd.prompt(s.agentId, "edit again")).promptId;
    w.world.answer(s.agentId, second, "edited again");
    await w.shepherd.wait([second], { timeoutSec: 5 });
    const one = await get(`/api/v1/sheep/${s.agentId}/diff?promptId=${first}`);
    assert.equal(one.status, 200, one.text);
    const d = one.json() as {
      promptId: string;
      files: { path: string; status: string; insertions: number; deletions: number }[];
      patch: string;
      truncated: boolean;
    };
    assert.equal(d.promptId, first);
    assert.deepEqual(d.files, [{ path: "a.txt", status: "modified", insertions: 2, deletions: 1 }]);
    assert.equal(d.patch, patch, "the whole patch, as the repository's bytes: JSON text, never markup");
    assert.equal(d.truncated, false);
    assert.match(String(one.headers["content-type"]), /^application\/json/);
    const latest = (await get(`/api/v1/sheep/${s.agentId}/diff`)).json() as { promptId: string; patch: string };
    assert.equal(latest.promptId, second, "without promptId: the latest, as the tool's diff");
    assert.equal(latest.patch, "diff --git a/a.txt b/a.txt\n", "no patch file: its first lines as the record keeps them");
    const other = await w.start("ev-other");
    const wrong = await get(`/api/v1/sheep/${other.agentId}/diff?promptId=${first}`);
    assert.equal(wrong.status, 404, "another sheep's prompt is none of this one's");
    assert.equal((wrong.json() as { code: string }).code, "unknown_prompt");
    // A remote sheep's patch file is on its host: its path is never read on this machine.
    const rec = w.shepherd.registry.prompts.get(first)!;
    const ev = rec.settled!.evidence!;
    rec.settled!.evidence = { ...ev, baseline: { ...ev.baseline, host: "gpu" } };
    await writeFile(ev.patchPath, "A FILE OF THIS MACHINE, not the host's patch\n");
    const far = (await get(`/api/v1/sheep/${s.agentId}/diff?promptId=${first}`)).json() as { patch: string; truncated: boolean };
    assert.equal(far.patch, ev.patch, "the patch's first lines, as the record keeps them");
    assert.equal(far.truncated, ev.truncated);
    rec.settled!.evidence = ev;
    await writeFile(ev.patchPath, patch);
    const detail = (await get(`/api/v1/sheep/${s.agentId}`)).json() as {
      prompts: { promptId: string; status: string; evidence: boolean; finishedAt?: string }[];
    };
    assert.deepEqual(
      detail.prompts.map((p) => [p.promptId, p.status, p.evidence]),
      [
        [first, "completed", true],
        [second, "completed", true],
      ],
    );
  });
});

describe("panel HTTP: the page", () => {
  let dir: string;
  let w: PanelWorld;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-shepherd-page-"));
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "index.html"), '<!doctype html><script src="/assets/app.js"></script>');
    await writeFile(join(dir, "app.js"), "console.log(1);");
    await writeFile(join(dir, "app.css"), "body{}");
    w = await panelWorld({ pageDir: dir });
  });
  after(async () => {
    await w.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("serves its three files without a token, under a policy that allows no inline script, and no other path", async () => {
    for (const [path, type] of [
      ["/", "text/html"],
      ["/assets/app.js", "text/javascript"],
      ["/assets/app.css", "text/css"],
    ] as const) {
      const a = await ask(w.port, { path });
      assert.equal(a.status, 200, path);
      assert.ok(String(a.headers["content-type"]).startsWith(type), path);
      assert.equal(policyOf(a.headers["content-security-policy"]), CONTENT_SECURITY_POLICY);
      assert.equal(a.headers["x-frame-options"], "DENY");
      assert.equal(a.headers["cache-control"], "no-store");
    }
    assert.match(CONTENT_SECURITY_POLICY, /default-src 'self'/);
    assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval/);
    for (const path of ["/assets/../index.html", "/assets/%2e%2e/index.html", "/assets/other.js", "/index.htm"]) {
      const a = await ask(w.port, { path });
      assert.ok(a.status === 400 || a.status === 401, `${path}: ${a.status}`);
    }
  });

  it("the package's own page (src/panel/page) is served whole under the policy: no inline script or style, nothing from elsewhere", async () => {
    const real = await panelWorld();
    try {
      const html = await ask(real.port, { path: "/" });
      assert.equal(html.status, 200);
      assert.equal(policyOf(html.headers["content-security-policy"]), CONTENT_SECURITY_POLICY);
      // The nonce is new in every answer, and the page's meta tag carries the same one (for the terminal's style elements).
      const nonce = /'nonce-([^']+)'/.exec(String(html.headers["content-security-policy"]))?.[1];
      assert.ok(html.text.includes(`<meta name="pi-shepherd-style-nonce" content="${nonce}">`), "the page's meta tag holds the answer's nonce");
      const again = await ask(real.port, { path: "/" });
      assert.notEqual(again.headers["content-security-policy"], html.headers["content-security-policy"], "a new nonce for every answer");
      for (const m of html.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
        assert.match(m[1]!, /\bsrc="\/assets\/[a-z-]+\.js"/, `a script of the package's own: ${m[0]}`);
        assert.equal(m[2]!.trim(), "", "no inline script");
      }
      assert.doesNotMatch(html.text, /<style\b|\son[a-z]+=|javascript:|https?:\/\//i, "no inline style, handler, or address elsewhere");
      for (const path of ["/assets/app.js", "/assets/app.css"]) assert.equal((await ask(real.port, { path })).status, 200, path);
    } finally {
      await real.close();
    }
  });

  it("the port closes when the panel stops: nothing listens there after", async () => {
    const port = w.port;
    assert.equal((await ask(port, { path: "/healthz" })).status, 200);
    await w.server.stop();
    await assert.rejects(
      new Promise<void>((resolve, reject) => {
        const s = connect(port, "127.0.0.1", () => {
          s.destroy();
          resolve();
        });
        s.on("error", reject);
      }),
      /ECONNREFUSED/,
    );
  });
});

describe("panel HTTP: the audit log tells the page from a program (issue 31, item 15)", () => {
  it("a prompt with the page's session is audited as `panel`, one with the Bearer token as `api`, and each prompt record keeps its edge", async () => {
    const w = await panelWorld();
    try {
      const a = (await w.start("one")).agentId;
      const b = (await w.start("two")).agentId;
      const s = await w.session();
      const page = await ask(w.port, {
        method: "POST",
        path: `/api/v1/sheep/${a}/prompt`,
        headers: { ...s.headers, ...JSON_TYPE, origin: `http://127.0.0.1:${w.port}` },
        body: { message: "from the page" },
      });
      assert.equal(page.status, 200, page.text);
      const api = await ask(w.port, { method: "POST", path: `/api/v1/sheep/${b}/prompt`, headers: w.authed(JSON_TYPE), body: { message: "from a program" } });
      assert.equal(api.status, 200, api.text);
      const prompts = w.audited.filter((e) => e.event === "prompt");
      assert.deepEqual(
        prompts.map((e) => [e.agentId, e.edge]),
        [
          [a, "panel"],
          [b, "api"],
        ],
      );
      const edges = [...w.shepherd.registry.prompts.values()].map((p) => [p.agentId, p.edge]);
      assert.deepEqual(edges, [
        [a, "panel"],
        [b, "api"],
      ]);
      // A refusal told by the entry names the edge too.
      const refused = await ask(w.port, { method: "POST", path: `/api/v1/sheep/${b}/prompt`, headers: w.authed(JSON_TYPE), body: { message: "again" } });
      assert.equal(refused.status, 409, refused.text);
      assert.ok(
        w.audited.some((e) => (e.event === "refusal" || e.event === "failure") && e.edge === "api"),
        JSON.stringify(w.audited),
      );
    } finally {
      await w.close();
    }
  });
});
