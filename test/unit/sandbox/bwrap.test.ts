/**
 * bubblewrap's argv from a policy: the order of the mounts (later ones over earlier), the
 * namespaces, a cleared environment, and the pane's fixed shell text. Also the sandboxed env and
 * the rule that no request turns the user's sandbox off.
 */
import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { bwrapArgv, paneArgv } from "../../../src/sandbox/bwrap.ts";
import { providerKeyNames, sandboxedEnv } from "../../../src/sandbox/env.ts";
import { COMPILE_CACHE_INSIDE, EGRESS_DIR_INSIDE, EGRESS_SOCKET_INSIDE, JITI_SEED_INSIDE, type SandboxPolicy } from "../../../src/sandbox/policy.ts";
import { bwrapProbe } from "../../../src/sandbox/probe.ts";
import { sandboxProblem, sandboxWanted } from "../../../src/sandbox/settings.ts";

const policy: SandboxPolicy = {
  readable: ["/tmp/home"],
  writable: ["/w"],
  scratch: ["/a"],
  agentFiles: ["/a/settings.json"],
  hidden: [
    { path: "/h/.ssh", kind: "dir" },
    { path: "/h/.netrc", kind: "file" },
  ],
  reopened: ["/a/pi-shepherd/sheep/x"],
  unhidden: ["/h/.ssh/known_hosts"],
  readOnly: [
    { path: "/w/.git/hooks", kind: "missing" },
    { path: "/w/.git/config", kind: "file" },
  ],
  caches: [],
};

describe("bubblewrap argv", () => {
  it("mounts in order: root read-only, private /tmp, readable, writable, scratch, hidden, reopened, unhidden, hidden made read-only, read-only guards", () => {
    const a = bwrapArgv({ bwrap: "/usr/bin/bwrap", policy, env: { HOME: "/tmp/home" }, argv: ["/node", "/launcher.mjs", "/spec.json"] });
    assert.deepEqual(a, [
      "/usr/bin/bwrap",
      "--clearenv",
      "--die-with-parent",
      "--unshare-pid",
      "--unshare-ipc",
      "--unshare-uts",
      "--unshare-cgroup-try",
      "--unshare-net",
      "--cap-drop",
      "ALL",
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--tmpfs",
      "/tmp",
      "--ro-bind",
      "/tmp/home",
      "/tmp/home",
      "--bind",
      "/w",
      "/w",
      "--tmpfs",
      "/a",
      "--ro-bind",
      "/a/settings.json",
      "/a/settings.json",
      "--tmpfs",
      "/h/.ssh",
      "--ro-bind",
      "/dev/null",
      "/h/.netrc",
      "--bind",
      "/a/pi-shepherd/sheep/x",
      "/a/pi-shepherd/sheep/x",
      "--ro-bind",
      "/h/.ssh/known_hosts",
      "/h/.ssh/known_hosts",
      "--remount-ro",
      "/h/.ssh",
      "--tmpfs",
      "/w/.git/hooks",
      "--remount-ro",
      "/w/.git/hooks",
      "--ro-bind",
      "/w/.git/config",
      "/w/.git/config",
      "--setenv",
      "HOME",
      "/tmp/home",
      "--",
      "/node",
      "/launcher.mjs",
      "/spec.json",
    ]);
  });

  it("never keeps the host's network; binds the egress socket's directory at its fixed inside path, after /tmp is made, and says where", () => {
    const plain = bwrapArgv({ bwrap: "b", policy, env: {}, argv: ["x"] });
    assert.ok(plain.includes("--unshare-net"));
    assert.ok(!plain.join(" ").includes("PI_SHEPHERD_EGRESS_SOCKET"), "no proxy, no socket named");
    const argv = bwrapArgv({ bwrap: "b", policy: { ...policy, egressDir: "/s/egress/a_1" }, env: {}, argv: ["x"] });
    assert.ok(argv.includes("--unshare-net"));
    const egress = argv.join(" ");
    assert.match(egress, new RegExp(`--bind /s/egress/a_1 ${EGRESS_DIR_INSIDE}`));
    assert.ok(egress.indexOf("--tmpfs /tmp") < egress.indexOf(`--bind /s/egress/a_1`), "the mount point is made in the sandbox's own /tmp");
    assert.match(egress, new RegExp(`--setenv PI_SHEPHERD_EGRESS_SOCKET ${EGRESS_SOCKET_INSIDE}`));
  });

  it("binds the host's code caches read-only after /tmp is made, and tells the launcher the loader's seed", () => {
    const caches = [
      { from: "/tmp/node-compile-cache", to: COMPILE_CACHE_INSIDE },
      { from: "/var/tmp/jiti", to: JITI_SEED_INSIDE },
    ];
    const a = bwrapArgv({ bwrap: "b", policy: { ...policy, caches }, env: {}, argv: ["x"] }).join(" ");
    assert.match(a, new RegExp(`--ro-bind /tmp/node-compile-cache ${COMPILE_CACHE_INSIDE} --ro-bind /var/tmp/jiti ${JITI_SEED_INSIDE}`));
    assert.ok(a.indexOf("--tmpfs /tmp") < a.indexOf("--ro-bind /tmp/node-compile-cache"), "over the private /tmp, not under it");
    assert.doesNotMatch(a, /--bind \/tmp\/node-compile-cache|--bind \/var\/tmp\/jiti/, "never writable");
    assert.match(a, new RegExp(`--setenv PI_SHEPHERD_JITI_SEED ${JITI_SEED_INSIDE}`));
    assert.doesNotMatch(bwrapArgv({ bwrap: "b", policy, env: {}, argv: ["x"] }).join(" "), /JITI_SEED/, "no seed, none named");
  });

  it("the pane runs a fixed shell text: the pane's TERM, bubblewrap's pid and the seccomp program's fd go in, every path only as an argument", async (t) => {
    const inner = bwrapArgv({ bwrap: "/usr/bin/bwrap", policy, env: {}, argv: ["/n", "/l", "/dir with 'quote'/spec.json"] });
    const pane = paneArgv(inner, "/state/sandbox/seccomp-x.bpf");
    assert.equal(pane[0], "/bin/sh");
    assert.equal(pane[1], "-c");
    assert.doesNotMatch(pane[2]!, /spec|quote|\/w|seccomp-x/);
    assert.deepEqual(pane.slice(3), ["sh", "/state/sandbox/seccomp-x.bpf", ...inner]);
    // Run the text itself with a stand-in for bubblewrap that prints what it got, and what its fd 3 holds.
    const { execa } = await import("execa");
    const { mkdtemp, rm, writeFile } = await import("node:fs/promises");
    const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-pane-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const stand = join(dir, "bwrap's stand-in");
    await writeFile(stand, '#!/bin/sh\necho "$@"; cat <&3\n', { mode: 0o700 });
    await writeFile(join(dir, "filter 'x'"), "the-program\n");
    const r = await execa(pane[0]!, [pane[1]!, pane[2]!, "sh", join(dir, "filter 'x'"), stand, "--clearenv", "--rest"], {
      env: { TERM: "screen" },
      extendEnv: false,
    });
    assert.match(String(r.stdout), /^--clearenv --setenv TERM screen --setenv COLORTERM {2}--setenv PI_SHEPHERD_HOST_PID \d+ --seccomp 3 --rest\nthe-program$/);
    // No program, no sandbox: the shell's exec fails and nothing runs.
    const missing = await execa(pane[0]!, [pane[1]!, pane[2]!, "sh", join(dir, "none"), stand, "--clearenv", "--rest"], { reject: false });
    assert.notEqual(missing.exitCode, 0);
    assert.doesNotMatch(String(missing.stdout), /clearenv/);
  });
});

describe("a sandboxed sheep's environment", () => {
  const carried = {
    PATH: "/bin",
    LANG: "C",
    PI_OFFLINE: "1",
    PI_SHEPHERD_SHEEP_DIR: "/s",
    PI_SHEPHERD_TMUX_SOCKET: "/t",
    PI_SHEPHERD_HERDR_BIN: "/h",
    ANTHROPIC_API_KEY: "a",
    OPENAI_API_KEY: "o",
    GITHUB_TOKEN: "g",
    AWS_SECRET_ACCESS_KEY: "w",
    HTTPS_PROXY: "http://p",
    MY_KEY: "m",
  };
  it("keeps plain variables and its own provider's key; drops other keys, tokens, AWS, proxies and the multiplexer's", () => {
    assert.deepEqual(sandboxedEnv(carried, providerKeyNames("anthropic")), {
      PATH: "/bin",
      LANG: "C",
      PI_OFFLINE: "1",
      PI_SHEPHERD_SHEEP_DIR: "/s",
      ANTHROPIC_API_KEY: "a",
    });
  });
  it("a custom provider's key is the variable its models.json apiKey names; a literal key names none", () => {
    assert.deepEqual(providerKeyNames("mine", "MY_KEY"), ["MY_KEY"]);
    assert.deepEqual(providerKeyNames("mine", "sk-literal-key"), []);
    assert.equal(sandboxedEnv(carried, providerKeyNames("mine", "MY_KEY")).MY_KEY, "m");
  });
});

describe("sandbox setting and requests", () => {
  it("validates the setting strictly", () => {
    assert.equal(sandboxProblem({ default: "on", allowWrite: ["~/cache", "/data"], allowNetwork: ["registry.npmjs.org", "10.0.0.1:8080"] }), undefined);
    assert.match(sandboxProblem({ default: "yes" }) ?? "", /"default"/);
    assert.match(sandboxProblem({ default: "on", allowRead: ["relative/path"] }) ?? "", /allowRead/);
    assert.match(sandboxProblem({ default: "on", allowWrite: ["/a/../etc"] }) ?? "", /allowWrite/);
    assert.match(sandboxProblem({ default: "on", allowWrite: ["/"] }) ?? "", /allowWrite/, "the root is no writable place");
    assert.match(sandboxProblem({ default: "on", allowNetwork: ["http://x"] }) ?? "", /allowNetwork/);
    assert.match(sandboxProblem({ default: "on", network: "host" }) ?? "", /unknown key "network"/, "a sandbox's network is no setting: its proxy is");
  });
  it("a request may turn the sandbox on, never off where the user's default is on", () => {
    assert.equal(sandboxWanted({ default: "off" }, undefined, "x"), false);
    assert.equal(sandboxWanted({ default: "off" }, true, "x"), true);
    assert.equal(sandboxWanted({ default: "on" }, undefined, "x"), true);
    assert.throws(
      () => sandboxWanted({ default: "on" }, false, "the start"),
      /\[invalid_params\] the start asks for sandbox: false.*"sandbox.default" is "on"/,
    );
  });
  it("a missing bubblewrap fails the start with [sandbox_unavailable] and how to install it; a passing check is asked once", async () => {
    let asked = 0;
    const missing = bwrapProbe(async () => {
      asked++;
      return { ok: false, problem: "bubblewrap (bwrap) is not installed" };
    });
    await assert.rejects(missing(), /\[sandbox_unavailable\] .*not installed.*apt-get install bubblewrap.*does not run unsandboxed/);
    await assert.rejects(missing(), /sandbox_unavailable/);
    assert.equal(asked, 2, "a failed check is asked again");
    let okAsked = 0;
    const ok = bwrapProbe(async () => {
      okAsked++;
      return { ok: true, path: "/usr/bin/bwrap" };
    });
    assert.equal(await ok(), "/usr/bin/bwrap");
    assert.equal(await ok(), "/usr/bin/bwrap");
    assert.equal(okAsked, 1);
  });
});
