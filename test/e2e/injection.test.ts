/**
 * Hostile and odd input, end to end: a real pi shepherd over RPC, real pi sheep in a private
 * tmux server, on the scripted model. Every user-controlled field carries payloads that would
 * create a marker file if any of it reached a shell (or a tmux format); the marker never
 * appears, and the sheep receives exactly the text that was sent.
 *
 * Payloads come in two forms: with the marker's absolute path where a field may hold "/", and
 * with "$INJECTION_MARK" (set for the tmux server, the shepherd and so every pane) in
 * directory names, which cannot.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ECHO_AGENT } from "../support/e2e-env.ts";
import { e2eWorld, type E2eWorld } from "../support/e2e-world.ts";
import { sheepFiles, sheepPid } from "../support/leftovers.ts";
import { type Scene, tmuxPanes } from "../support/scene.ts";
import { nameSafePayload, shellPayloads, UNICODE } from "../support/payloads.ts";
import { directive, type ScriptedModel } from "../support/scripted-model.ts";
import type { PrivateTmux } from "../support/tmux-server.ts";

const MiB = 1024 * 1024;
const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

describe("hostile and odd input", { timeout: 600_000 }, () => {
  let world: E2eWorld | undefined;
  let dir: string;
  /** Prefix of every marker file: `<dir>/MARK-<field>-<kind>`. */
  let MARK: string;
  let tmux: PrivateTmux;
  let model: ScriptedModel;
  let scene: Scene;
  let panes: () => Promise<string[]>;
  let hostileModel: string;
  let hostileCwd: string;
  let agentId: string;
  let hostileBody: string;
  const previousMark = process.env.INJECTION_MARK;

  /** The sheep's model requests since the log had `from` entries (the shepherd's carry its tool). */
  const sheepRequests = (from: number) => model.log.slice(from).filter((l) => !l.toolNames.includes("shepherd"));
  const noMarker = async () =>
    assert.deepEqual(
      (await readdir(dir)).filter((n) => n.startsWith("MARK")),
      [],
      "no payload reached a shell",
    );

  before(async () => {
    const envMark = (field: string) => `"$INJECTION_MARK"-${field}`;
    const yaml = (s: string) => JSON.stringify(s); // JSON strings are YAML flow scalars
    const bad = (name: string, extra = "") => `---\nname: ${yaml(name)}\ndescription: refused\n${extra}---\nnever used\n`;
    world = await e2eWorld("injection", {
      prepare: (d) => {
        MARK = join(d, "MARK");
        // Inherited by the tmux server (and so every pane's shell) and by the shepherd.
        process.env.INJECTION_MARK = MARK;
      },
      // The agent directory itself sits under a hostile name: the one line typed into a pane holds its path.
      agentDirName: join(`agent dir ${nameSafePayload(envMark("agentdir"))}`, "agent"),
      agent: () => {
        hostileModel = `model ${shellPayloads(`${MARK}-model`).join(" ").replaceAll("\n", " ")} ${UNICODE}`;
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal "${PATH}" is the hostile text under test
        hostileBody = [...shellPayloads(`${MARK}-body`), UNICODE, "$HOME ${PATH} %s %n {{x}}"].join("\n");
        return {
          agents: {
            "echo.md": ECHO_AGENT,
            [`hostile ${nameSafePayload(envMark("filename"))}.md`]: [
              "---",
              "name: hostile",
              `description: ${yaml(shellPayloads(`${MARK}-description`).join(" ") + " " + UNICODE)}`,
              `model: ${yaml(`scripted/${hostileModel}`)}`,
              "tools: read, grep",
              "---",
              hostileBody,
              "",
            ].join("\n"),
            "escape-dotdot.md": bad("../escape"),
            "escape-slash.md": bad("a/b"),
            "escape-backslash.md": bad("a\\b"),
            "escape-dots.md": bad(".."),
            "escape-shell.md": bad(`$(touch ${MARK}-name)`),
            "escape-tools.md": bad("badtools", `tools: ${yaml(`read; touch ${MARK}-tools`)}\n`),
            "escape-dash-model.md": bad("dashmodel", "model: --help\n"),
          },
        };
      },
      // The shepherd's env is made from process.env after prepare: it holds INJECTION_MARK.
    });
    ({ dir, tmux, model } = world);
    // The scripted provider also serves a model whose id is hostile.
    const modelsPath = join(world.agentDir, "models.json");
    const models = JSON.parse(await readFile(modelsPath, "utf8")) as { providers: { scripted: { models: object[] } } };
    models.providers.scripted.models.push({ id: hostileModel, name: "Hostile", contextWindow: 128000, maxTokens: 4096 });
    await writeFile(modelsPath, JSON.stringify(models), { mode: 0o600 });
    hostileCwd = join(dir, `cwd ${nameSafePayload(envMark("cwd"), "\n")}`);
    await mkdir(hostileCwd);
    scene = world.scene();
    panes = tmuxPanes(tmux.socket);
  });

  after(async () => {
    await world?.cleanup();
    if (previousMark === undefined) delete process.env.INJECTION_MARK;
    else process.env.INJECTION_MARK = previousMark;
  });

  it("a sheep with a hostile label, cwd, model and definition under a hostile agent dir starts and talks to exactly that model", async () => {
    // Labels are at most 64 characters; the panes' shells and tmux's #() see $INJECTION_MARK, so
    // these short payloads would still leave a marker if they ever ran.
    const label = "$(touch $INJECTION_MARK-s)#(touch $INJECTION_MARK-t)';\"🐑ü";
    const r = await scene.ok({ action: "start", agent: "hostile", label, cwd: hostileCwd });
    const agent = r.details.agent as { agentId: string; label: string; cwd: string; model: string; paneId: string };
    agentId = agent.agentId;
    scene.pids.push(await sheepPid(scene.agentDir, agentId));
    assert.equal(
      (await tmux.tmux(["display-message", "-p", "-t", agent.paneId, "#{pane_current_path}"])).trim(),
      hostileCwd,
      "the pane opened in that very directory",
    );
    assert.deepEqual([agent.label, agent.cwd, agent.model], [label, hostileCwd, `scripted/${hostileModel}`]);
    const p = (
      (await scene.ok({ action: "prompt", agentId, message: directive({ reply: "ok", tag: "HOSTILE-START" }) })).details.prompt as { promptId: string }
    ).promptId;
    const [res] = (await scene.ok({ action: "wait", promptId: p, timeout: 60 })).details.results as { status: string; text: string }[];
    assert.deepEqual([res!.status, res!.text], ["completed", "ok"]);
    const req = model.log.find((l) => l.tag === "HOSTILE-START")!;
    assert.equal(req.model, hostileModel, "the model id reached the provider intact");
    assert.ok(req.system.includes(hostileBody), "the definition's body is in the sheep's system prompt, intact");
    assert.deepEqual(req.toolNames.sort(), ["grep", "read", "shepherd_message"]);
    const status = (await scene.ok({ action: "status", agentId })).details.status as { label: string; paneAlive: boolean };
    assert.deepEqual([status.label, status.paneAlive], [label, true]);
    await noMarker();
  });

  it("a label that could repaint or reorder the screen, or is over 64 characters, is refused before any pane exists", async () => {
    const before = await panes();
    for (const label of [`esc \u001b[31m red`, `bidi ${UNICODE}`, `new\nline`, "long ".repeat(20)]) {
      await scene.fails({ action: "start", agent: "echo", label }, /^\[invalid_params\] label must/);
    }
    assert.deepEqual(await panes(), before, "no pane was created");
  });

  it("a cwd ending in ';' (which ends a tmux command) opens a pane in exactly that directory", async () => {
    const cwd = join(dir, "ends #{pane_id} ;");
    await mkdir(cwd);
    const before = await panes();
    const r = await scene.ok({ action: "start", agent: "echo", label: "semicolon", cwd });
    const agent = r.details.agent as { agentId: string; paneId: string };
    assert.deepEqual(
      (await panes()).filter((p) => !before.includes(p)),
      [agent.paneId],
      "exactly one new pane",
    );
    assert.equal((await tmux.tmux(["display-message", "-p", "-t", agent.paneId, "#{pane_current_path}"])).trim(), cwd);
    await scene.ok({ action: "close", agentId: agent.agentId });
    await noMarker();
  });

  it("prompts full of shell, tmux and pi syntax reach the sheep exactly, and so do replies", async () => {
    const prompts = [
      ...shellPayloads(`${MARK}-prompt`),
      `!touch ${MARK}-prompt-bang`,
      `!!touch ${MARK}-prompt-bangbang`,
      "/quit",
      "/reload",
      "  leading and trailing blanks  \n\n",
      `${UNICODE} \u0007\u001b[31mred\u001b[0m \u001b]0;title\u0007 \u0000 nul`,
      shellPayloads(`${MARK}-prompts`).join("\n") + "\n" + UNICODE,
    ];
    for (const [i, text] of prompts.entries()) {
      const before = model.log.length;
      const p = ((await scene.ok({ action: "prompt", agentId, message: text })).details.prompt as { promptId: string }).promptId;
      const [res] = (await scene.ok({ action: "wait", promptId: p, timeout: 60 })).details.results as { status: string; text: string }[];
      assert.equal(res!.status, "completed", `prompt ${i}: ${JSON.stringify(res)}`);
      const reqs = sheepRequests(before);
      assert.deepEqual(
        reqs.map((l) => l.lastUserText),
        [text],
        `prompt ${i} reached the model exactly once, exactly`,
      );
      assert.equal(res!.text, `ECHO: ${text}`, `prompt ${i}: the answer came back exactly`);
    }
    const reply = shellPayloads(`${MARK}-reply`).join("\n") + `\n${UNICODE}\n`;
    const p = ((await scene.ok({ action: "prompt", agentId, message: directive({ reply }) })).details.prompt as { promptId: string }).promptId;
    const [res] = (await scene.ok({ action: "wait", promptId: p, timeout: 60 })).details.results as { text: string }[];
    assert.equal(res!.text, reply);
    assert.equal(
      ((await scene.ok({ action: "status", agentId })).details.status as { state: string }).state,
      "idle",
      "/quit and friends were text, not commands",
    );
    await noMarker();
  });

  it("a 1 MiB prompt is delivered intact", async () => {
    const unit = `${shellPayloads(`${MARK}-big`).join(" ")} ${UNICODE}\n`;
    let big = unit.repeat(Math.floor(MiB / Buffer.byteLength(unit)));
    big += "x".repeat(MiB - Buffer.byteLength(big));
    assert.equal(Buffer.byteLength(big), MiB);
    const before = model.log.length;
    const p = ((await scene.ok({ action: "prompt", agentId, message: big })).details.prompt as { promptId: string }).promptId;
    const [res] = (await scene.ok({ action: "wait", promptId: p, timeout: 120 })).details.results as { status: string; text: string }[];
    assert.equal(res!.status, "completed");
    const got = sheepRequests(before)[0]!.lastUserText;
    assert.deepEqual([Buffer.byteLength(got), sha256(got)], [MiB, sha256(big)]);
    assert.equal(sha256(res!.text), sha256(`ECHO: ${big}`));
    await noMarker();
  });

  it("agent names with path separators, '..' or shell syntax are refused with a reason", async () => {
    const listed = (await scene.ok({ action: "sheep" })).details as { agents: { name: string }[]; skipped: { path: string; reason: string }[] };
    assert.deepEqual(
      listed.agents.map((a) => a.name).filter((n) => n !== "echo" && n !== "hostile" && !["scout", "planner", "worker", "reviewer"].includes(n)),
      [],
    );
    const reasons = Object.fromEntries(listed.skipped.map((s) => [s.path.split("/").pop(), s.reason]));
    for (const f of ["escape-dotdot.md", "escape-slash.md", "escape-backslash.md", "escape-dots.md", "escape-shell.md"]) {
      assert.match(reasons[f] ?? "", /name .* is not valid/, `${f} is refused with the reason`);
    }
    assert.match(reasons["escape-tools.md"] ?? "", /tool name .* is not valid/);
    assert.match(reasons["escape-dash-model.md"] ?? "", /"model" must be/);
    for (const agent of ["../escape", "a/b", "..", "../agents/echo", `$(touch ${MARK}-agent)`]) {
      await scene.fails({ action: "start", agent }, /^\[unknown_definition\] /);
    }
    await noMarker();
  });

  it("a model or cwd that could pass for an option or escape is refused, leaving no files", async () => {
    const before = await sheepFiles(scene.agentDir);
    await scene.fails({ action: "start", agent: "echo", model: "--help" }, /^\[invalid_params\] .*model/);
    await scene.fails({ action: "start", agent: "echo", model: "-x; touch y" }, /^\[invalid_params\] /);
    await scene.fails({ action: "start", agent: "echo", cwd: join(dir, "does", "not", "exist") }, /^\[invalid_params\] .*cwd/);
    assert.deepEqual(await sheepFiles(scene.agentDir), before);
    await noMarker();
  });

  it("ids of the wrong kind or with path syntax get errors that say so", async () => {
    const promptId = ((await scene.ok({ action: "prompt", agentId, message: "one more" })).details.prompt as { promptId: string }).promptId;
    assert.match(await scene.fails({ action: "status", agentId: promptId }, /^\[unknown_agent\] /), /is a promptId, not an agentId/);
    const [wrong] = (await scene.ok({ action: "wait", promptId: agentId, timeout: 5 })).details.results as { status: string; error: string }[];
    assert.equal(wrong!.status, "failed");
    assert.match(wrong!.error, /^\[unknown_prompt\] .*is an agentId, not a promptId/);
    for (const id of ["../../../etc/passwd", `a_$(touch ${MARK}-id)`, "a_../../x", "."]) {
      await scene.fails({ action: "status", agentId: id }, /^\[unknown_agent\] /);
      await scene.fails({ action: "read", target: id }, /^\[unknown_agent\] /);
      await scene.fails({ action: "close", agentId: id }, /^\[unknown_agent\] /);
      const [r] = (await scene.ok({ action: "wait", promptId: id, timeout: 1 })).details.results as { status: string; error: string }[];
      assert.match(r!.error, /^\[unknown_prompt\] /);
    }
    // Wrong types are pi's to convert or refuse before the tool runs (the schema fuzz test covers ours).
    await scene.fails({ action: "prompt", agentId }, /^\[invalid_params\] .*message/);
    await scene.fails({ action: "prompt", agentId, message: "" }, /^\[invalid_params\] .*message/);
    await scene.fails({ action: "wait" }, /^\[invalid_params\] .*promptId/);
    const [done] = (await scene.ok({ action: "wait", promptId, timeout: 60 })).details.results as { text: string }[];
    assert.equal(done!.text, "ECHO: one more");
    await noMarker();
  });

  it("private directories are 0700 and files 0600 under <agentDir>/pi-shepherd", async () => {
    const wrong: string[] = [];
    const walk = async (path: string) => {
      const s = await stat(path);
      const mode = s.mode & 0o777;
      if (s.isDirectory()) {
        if (mode !== 0o700) wrong.push(`${path} ${mode.toString(8)}`);
        for (const n of await readdir(path)) await walk(join(path, n));
      } else if (mode !== 0o600) wrong.push(`${path} ${mode.toString(8)}`);
    };
    const root = join(scene.agentDir, "pi-shepherd");
    const files = await readdir(join(root, "sheep", agentId));
    for (const f of ["status.json", "inbox", "outbox", "system-prompt.md", "session.jsonl"]) assert.ok(files.includes(f), `${f} exists to be checked`);
    assert.ok((await readdir(join(root, "cards"))).includes(`${agentId}.json`), "its resume card exists to be checked");
    assert.ok(!files.includes("spec.json"), "the launch spec (it holds the carried keys) was deleted once read");
    await walk(root);
    assert.deepEqual(wrong, []);
  });

  it("a prompt above the limit is refused with [invalid_params] naming the limit", async () => {
    const text = await scene.fails({ action: "prompt", agentId, message: "y".repeat(4 * MiB + 1) }, /^\[invalid_params\] /);
    assert.match(text, new RegExp(`${4 * MiB + 1} bytes; the limit is ${4 * MiB}`));
    const status = (await scene.ok({ action: "status", agentId })).details.status as { state: string; activePromptId?: string };
    assert.deepEqual([status.state, status.activePromptId], ["idle", undefined]);
    await noMarker();
  });

  it("afterwards the marker was never made, and no pane, sheep pi or sheep file is left", async () => {
    await scene.shepherd.stop();
    await scene.assertNothingLeft(panes, [tmux.userPane]);
    await noMarker();
  });
});
