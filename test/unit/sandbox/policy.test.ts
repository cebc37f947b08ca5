/**
 * The sandbox policy, read rule by rule on a made-up machine (facts given, no disk): what a sheep
 * writes, what it cannot even read, and what stays read-only inside its own writable places.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { COMPILE_CACHE_INSIDE, JITI_SEED_INSIDE, type PathKind, type SandboxFacts, sandboxPolicy } from "../../../src/sandbox/policy.ts";
import type { SandboxSettings } from "../../../src/sandbox/settings.ts";

const HOME = "/home/u";
const AGENT = "/home/u/.pi/agent";
const STATE = `${AGENT}/pi-shepherd`;

/** A machine of these paths: a trailing "/" marks a directory. */
function facts(paths: string[], o: Partial<SandboxFacts> = {}): SandboxFacts {
  const kinds = new Map<string, PathKind>(paths.map((p) => (p.endsWith("/") ? [p.slice(0, -1), "dir"] : [p, "file"])));
  return {
    home: HOME,
    cwd: "/home/u/proj",
    agentDir: AGENT,
    stateDir: STATE,
    sheepDir: `${STATE}/sheep/a_1`,
    sessionFile: `${STATE}/sheep/a_1/session.jsonl`,
    worktreesDir: `${STATE}/worktrees`,
    git: { gitDir: "/home/u/proj/.git", commonDir: "/home/u/proj/.git" },
    sockets: [],
    kind: (p) => kinds.get(p),
    entries: (dir) => [...kinds.keys()].filter((p) => p.startsWith(`${dir}/`) && !p.slice(dir.length + 1).includes("/")).map((p) => p.slice(dir.length + 1)),
    ...o,
  };
}

const MACHINE = [
  `${HOME}/`,
  "/home/u/proj/",
  "/home/u/proj/.git/",
  "/home/u/proj/.git/hooks/",
  "/home/u/proj/.git/config",
  "/home/u/.ssh/",
  "/home/u/.aws/",
  "/home/u/.netrc",
  "/home/u/.bashrc",
  `${AGENT}/`,
  `${AGENT}/settings.json`,
  `${AGENT}/models.json`,
  `${AGENT}/auth.json`,
  `${AGENT}/sessions/`,
  `${STATE}/`,
  `${STATE}/sheep/`,
  `${STATE}/sheep/a_1/`,
  `${STATE}/worktrees/`,
];
const OFF: SandboxSettings = { default: "off" };

describe("sandbox policy", () => {
  it("pi-shepherd's own code in the state dir (a remote host's bundle) is bound read-only again, that directory only; code elsewhere needs nothing", () => {
    const bin = `${STATE}/bin/0123456789abcdef`;
    const p = sandboxPolicy(OFF, facts([...MACHINE, `${STATE}/bin/`, `${bin}/`]), { ownCode: [bin, "/opt/pi-shepherd/src/launch", `${STATE}/bin/missing`] });
    assert.deepEqual(p.unhidden, [bin]);
    assert.ok(!p.writable.includes(bin) && !p.reopened.includes(bin));
    assert.ok(!p.agentFiles.includes(STATE), "the rest of the state dir stays unbound");
  });

  it("binds the host's code caches that exist, read-only: node's compile cache where node looks, pi's loader's as a seed", () => {
    const codeCaches = { compile: "/tmp/node-compile-cache", jiti: "/tmp/jiti" };
    const both = sandboxPolicy(OFF, facts([...MACHINE, "/tmp/node-compile-cache/", "/tmp/jiti/"], { codeCaches }));
    assert.deepEqual(both.caches, [
      { from: "/tmp/node-compile-cache", to: COMPILE_CACHE_INSIDE },
      { from: "/tmp/jiti", to: JITI_SEED_INSIDE },
    ]);
    assert.ok(!both.writable.some((w) => w.startsWith("/tmp/")), "no cache is writable");
    assert.deepEqual(sandboxPolicy(OFF, facts([...MACHINE, "/tmp/jiti/"], { codeCaches })).caches, [{ from: "/tmp/jiti", to: JITI_SEED_INSIDE }]);
    assert.deepEqual(sandboxPolicy(OFF, facts(MACHINE, { codeCaches })).caches, [], "none there, none bound");
  });

  it("the programs it runs that lie under /tmp (a clone there: node, the launcher, pi) are readable again, with their project", () => {
    const clone = "/tmp/cc7";
    const tree = [...MACHINE, `${clone}/`, `${clone}/package.json`, `${clone}/src/launch/`, `${clone}/node_modules/node/bin/`, "/tmp/lone/"];
    const runs = [
      `${clone}/node_modules/node/bin/node`,
      `${clone}/src/launch/launcher.mjs`,
      `${clone}/node_modules/@earendil-works/pi-coding-agent/dist/cli.js`,
      "/tmp/lone/pi",
      "/usr/bin/node",
      "pi",
    ];
    const p = sandboxPolicy(OFF, facts(tree), { runs });
    assert.deepEqual(
      p.readable.filter((r) => r.startsWith("/tmp/")),
      [clone, "/tmp/lone"],
    );
    assert.ok(!p.writable.some((w) => w.startsWith("/tmp/")), "read-only");
    assert.deepEqual(
      sandboxPolicy(OFF, facts(tree)).readable.filter((r) => r.startsWith("/tmp/")),
      [],
      "nothing under /tmp without a program there",
    );
  });

  it("a sheep in a checkout writes its cwd and nothing else of the user's; git's hooks and config stay read-only in it", () => {
    const p = sandboxPolicy(OFF, facts(MACHINE));
    assert.deepEqual(p.writable, ["/home/u/proj"]);
    assert.deepEqual(p.readOnly, [
      { path: "/home/u/proj/.git/hooks", kind: "dir" },
      { path: "/home/u/proj/.git/config", kind: "file" },
    ]);
    assert.equal(p.egressDir, undefined);
  });

  it("a checkout without .git/hooks gets an empty read-only one: nothing can be put there", () => {
    const p = sandboxPolicy(OFF, facts(MACHINE.filter((x) => !x.includes("hooks"))));
    assert.deepEqual(p.readOnly[0], { path: "/home/u/proj/.git/hooks", kind: "missing" });
  });

  it("hides the user's secrets that exist (directories and files), and what denyRead adds", () => {
    const p = sandboxPolicy({ default: "on", denyRead: ["~/proj/secret.env"] }, facts([...MACHINE, "/home/u/proj/secret.env"]));
    assert.deepEqual(p.hidden, [
      { path: "/home/u/.ssh", kind: "dir" },
      { path: "/home/u/.aws", kind: "dir" },
      { path: "/home/u/.netrc", kind: "file" },
      { path: "/home/u/proj/secret.env", kind: "file" },
    ]);
  });

  it("allowRead opens a file inside a hidden place again, read-only; never one inside denyRead (deny wins)", () => {
    const m = [...MACHINE, "/home/u/.ssh/known_hosts", "/home/u/proj/secret/", "/home/u/proj/secret/a"];
    const p = sandboxPolicy({ default: "on", allowRead: ["~/.ssh/known_hosts", "~/proj/secret/a"], denyRead: ["~/proj/secret"] }, facts(m));
    assert.deepEqual(p.unhidden, ["/home/u/.ssh/known_hosts"]);
    assert.ok(p.hidden.some((h) => h.path === "/home/u/proj/secret"));
  });

  it("a secret that is a symlink: its target is hidden (bubblewrap cannot mount on the link itself)", () => {
    const p = sandboxPolicy(OFF, facts([...MACHINE, "/data/keys/"], { real: (x) => (x === "/home/u/.gnupg" ? "/data/keys" : x) }));
    assert.ok(p.hidden.some((h) => h.path === "/data/keys" && h.kind === "dir"));
  });

  it("pi's agent dir is a scratch with its files read-only: never pi-shepherd's state (other sheep, state.json, worktrees) or pi's sessions", () => {
    const p = sandboxPolicy(OFF, facts(MACHINE));
    assert.deepEqual(p.scratch, [AGENT]);
    assert.deepEqual(p.agentFiles, [`${AGENT}/settings.json`, `${AGENT}/models.json`, `${AGENT}/auth.json`]);
    // Its own directory (inbox, outbox, session) is opened again inside the scratch, writable.
    assert.deepEqual(p.reopened, [`${STATE}/sheep/a_1`]);
  });

  it("an isolated sheep: its worktree (in the state dir) and the main repository's objects, refs, logs and worktree entry are writable; the main hooks and config are not", () => {
    const wt = `${STATE}/worktrees/proj-boxed`;
    const gitDir = "/home/u/proj/.git/worktrees/proj-boxed";
    const m = [...MACHINE, `${wt}/`, `${gitDir}/`, "/home/u/proj/.git/objects/", "/home/u/proj/.git/refs/", "/home/u/proj/.git/logs/"];
    const p = sandboxPolicy(OFF, facts(m, { cwd: wt, git: { gitDir, commonDir: "/home/u/proj/.git" } }));
    assert.deepEqual(p.writable, [wt, gitDir, "/home/u/proj/.git/objects", "/home/u/proj/.git/refs", "/home/u/proj/.git/logs"]);
    // The worktree lies in the hidden state dir: bound again after the hiding.
    assert.ok(p.reopened.includes(wt));
    // The main repository's hooks and config lie in no writable root: the read-only root keeps them so.
    assert.deepEqual(p.readOnly, []);
  });

  it("shell rc files are read-only where the sheep could otherwise write them (a cwd or allowWrite of HOME)", () => {
    const inHome = sandboxPolicy({ default: "on", allowWrite: ["~"] }, facts(MACHINE, { cwd: "/home/u/proj" }));
    assert.deepEqual(inHome.writable, ["/home/u/proj"], "~ alone is no path entry: it expands to nothing that exists");
    const p = sandboxPolicy({ default: "on", allowWrite: ["/home/u"] }, facts(MACHINE));
    assert.deepEqual(p.writable, ["/home/u/proj", "/home/u"]);
    assert.ok(p.readOnly.some((r) => r.path === "/home/u/.bashrc" && r.kind === "file"));
    // Secrets stay hidden even inside a writable HOME.
    assert.ok(p.hidden.some((h) => h.path === "/home/u/.ssh"));
  });

  it("hides the multiplexer sockets' directories, or the socket alone where the sheep's own places share its directory", () => {
    const m = [...MACHINE, "/run/user/0/tmux-0/", "/run/user/0/tmux-0/default", "/home/u/proj/herdr.sock"];
    const p = sandboxPolicy(OFF, facts(m, { sockets: ["/run/user/0/tmux-0/default", "/home/u/proj/herdr.sock"] }));
    assert.ok(p.hidden.some((h) => h.path === "/run/user/0/tmux-0" && h.kind === "dir"));
    assert.ok(p.hidden.some((h) => h.path === "/home/u/proj/herdr.sock" && h.kind === "file"));
  });

  it("under /tmp (hidden by the private /tmp), HOME and the repository stay readable", () => {
    const t = "/tmp/w";
    const m = [`${t}/`, `${t}/home/`, `${t}/repo/`, `${t}/repo/.git/`, `${t}/agent/`, `${t}/agent/pi-shepherd/`, `${t}/agent/pi-shepherd/sheep/a_1/`];
    const p = sandboxPolicy(
      OFF,
      facts(m, {
        home: `${t}/home`,
        cwd: `${t}/repo`,
        agentDir: `${t}/agent`,
        stateDir: `${t}/agent/pi-shepherd`,
        sheepDir: `${t}/agent/pi-shepherd/sheep/a_1`,
        sessionFile: `${t}/agent/pi-shepherd/sheep/a_1/session.jsonl`,
        git: { gitDir: `${t}/repo/.git`, commonDir: `${t}/repo/.git` },
      }),
    );
    assert.deepEqual(p.readable, [`${t}/home`, `${t}/repo`, `${t}/repo/.git`]);
  });

  it("passes the egress socket's directory on", () => {
    assert.equal(sandboxPolicy(OFF, facts(MACHINE), { egressDir: "/s/egress/a_1" }).egressDir, "/s/egress/a_1");
  });

  it("a resumed sheep's session file (another sheep's directory) is bound alone, writable", () => {
    const other = `${STATE}/sheep/a_0/session.jsonl`;
    const p = sandboxPolicy(OFF, facts([...MACHINE, `${STATE}/sheep/a_0/`, other], { sessionFile: other }));
    assert.deepEqual(p.reopened, [`${STATE}/sheep/a_1`, other]);
  });
});
