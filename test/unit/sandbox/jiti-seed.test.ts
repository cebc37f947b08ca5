/**
 * The seed of a sandboxed sheep's loader cache is the shepherd's own: made by pi's jiti from the sheep
 * side alone, in a private directory of the state dir, whatever the machine's /tmp holds. Real pi
 * (its bundle, headless) is the judge of the names: a seed is worth something only where pi's own
 * loader finds its entries.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { JITI_SEED_INSIDE } from "../../../src/sandbox/policy.ts";
import { jitiSeedMaker, makeJitiSeed } from "../../../src/sandbox/jiti-seed.ts";
import { sandboxedPaneArgv } from "../../../src/sandbox/launch.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const PI_CLI = join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js");
const SHEEP = join(ROOT, "extensions", "sheep.ts");
const SHEPHERD = join(ROOT, "extensions", "shepherd.ts");
const PI = [process.execPath, PI_CLI];

function restoreTmpdir(was: string | undefined): void {
  if (was === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = was;
}

function files(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n), "utf8")]));
}

describe("the shepherd's seed of a sandboxed sheep's loader cache", () => {
  it("holds exactly what a sheep's pi writes for pi-shepherd in an empty /tmp (the sheep extension, the package's entry), and nothing of the machine's cache", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-jiti-seed-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    // The machine's temporary directory holds another project's transpiled code: none of it may reach the seed.
    const machineTmp = join(dir, "machine-tmp");
    mkdirSync(join(machineTmp, "jiti"), { recursive: true });
    writeFileSync(join(machineTmp, "jiti", "other-project-secret.0123abcd.mjs"), "another project's code");
    const was = process.env.TMPDIR;
    process.env.TMPDIR = machineTmp;
    t.after(() => restoreTmpdir(was));

    const root = join(dir, "state", "jiti-seed");
    const seed = await makeJitiSeed({ root, piCommand: PI, entries: [SHEEP, SHEPHERD] });
    assert.ok(seed, "a seed is made");
    assert.equal(statSync(root).mode & 0o777, 0o700, "the seeds' directory is the shepherd's alone");
    assert.equal(statSync(seed).mode & 0o777, 0o700);
    const made = files(seed);

    // Real pi, loading pi-shepherd as a sheep does (the sheep extension; the installed package's entry, at a
    // sheep's depth, which the default maxDepth keeps from shepherding), in a /tmp of its own that is empty (a sandbox's).
    const fresh = join(dir, "fresh-tmp");
    mkdirSync(fresh);
    const home = join(dir, "home");
    mkdirSync(home);
    const r = spawnSync(process.execPath, [PI_CLI, "-e", SHEEP, "-e", SHEPHERD, "--list-models"], {
      env: { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: fresh, PI_CODING_AGENT_DIR: join(home, "agent"), PI_SHEPHERD_DEPTH: "1" },
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const piWrote = files(join(fresh, "jiti"));
    assert.ok(
      Object.keys(piWrote).some((n) => /^extensions-sheep\.[0-9a-f]+\.mjs$/.test(n)),
      `pi transpiled the sheep extension: ${Object.keys(piWrote)}`,
    );
    assert.ok(
      Object.keys(piWrote).some((n) => /^sheep-sheep-end\./.test(n)),
      "and what it imports",
    );
    const names = Object.keys(piWrote);
    assert.ok(
      names.some((n) => n.startsWith("extensions-shepherd.")) && names.some((n) => n.startsWith("src-settings.")),
      "and pi-shepherd's entry with its imports",
    );
    // Same names, same bytes: pi's loader takes every entry of the seed as its own (a cache hit), transpiling nothing.
    assert.deepEqual(made, piWrote);
    assert.ok(Object.keys(made).length < 60, "a few dozen files, not the machine's thousand");
    assert.ok(!Object.keys(made).some((n) => n.startsWith("other-project")), "nothing of another project's");
  });

  it("is made once per content of the sheep side: the same content finds it, a changed file makes a new one, one unused for a day goes", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-jiti-seed-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const pkg = join(dir, "pkg");
    mkdirSync(join(pkg, "extensions"), { recursive: true });
    mkdirSync(join(pkg, "src"), { recursive: true });
    writeFileSync(join(pkg, "package.json"), '{"name":"x","type":"module"}');
    writeFileSync(join(pkg, "extensions", "e.ts"), 'import { a } from "../src/a.ts";\nexport default function (): number { return a; }\n');
    writeFileSync(join(pkg, "src", "a.ts"), "export const a: number = 1;\n");
    const o = { root: join(dir, "seeds"), piCommand: PI, entries: [join(pkg, "extensions", "e.ts")] };

    const first = await makeJitiSeed(o);
    assert.ok(first);
    assert.deepEqual(
      Object.keys(files(first))
        .map((n) => n.replace(/\.[0-9a-f]+\.mjs$/, ""))
        .sort(),
      ["extensions-e", "src-a"],
    );
    const once = jitiSeedMaker(o);
    const t0 = Date.now();
    assert.equal(await once(), first, "the same content: the same seed, not made again");
    assert.ok(Date.now() - t0 < 1000, "found, not transpiled");

    writeFileSync(join(pkg, "src", "a.ts"), "export const a: number = 2;\n");
    utimesSync(join(pkg, "src", "a.ts"), new Date(), new Date(Date.now() + 5000));
    const second = await makeJitiSeed(o);
    assert.ok(second && second !== first, "a changed source makes a new seed");
    assert.match(Object.values(files(second)).join("\n"), /= 2/);
    assert.deepEqual(
      readdirSync(o.root).sort(),
      [first, second].map((p) => p.slice(o.root.length + 1)).sort(),
      "one used lately stays (another shepherd may bind it)",
    );

    // Unused for two days, the first goes when another is made; the one in use stays.
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    utimesSync(first, twoDaysAgo, twoDaysAgo);
    writeFileSync(join(pkg, "src", "a.ts"), "export const a: number = 3;\n");
    utimesSync(join(pkg, "src", "a.ts"), new Date(), new Date(Date.now() + 10_000));
    const third = await makeJitiSeed(o);
    assert.ok(third);
    assert.deepEqual(readdirSync(o.root).sort(), [second, third].map((p) => p.slice(o.root.length + 1)).sort(), "the unused one is gone");
  });

  it("no seed where pi's jiti cannot be found: the sheep starts without one (slower, never wrong)", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-jiti-seed-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "cli.js"), "");
    assert.equal(await makeJitiSeed({ root: join(dir, "seeds"), piCommand: [process.execPath, join(dir, "cli.js")], entries: [SHEEP] }), undefined);
    assert.equal(await makeJitiSeed({ root: join(dir, "seeds"), piCommand: ["pi"], entries: [SHEEP] }), undefined);
  });

  it("a sandbox binds the shepherd's seed read-only, never the machine's <tmpdir>/jiti", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-jiti-seed-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const was = process.env.TMPDIR;
    process.env.TMPDIR = join(dir, "machine-tmp");
    mkdirSync(join(dir, "machine-tmp", "jiti"), { recursive: true });
    t.after(() => restoreTmpdir(was));
    const seed = join(dir, "agent", "pi-shepherd", "jiti-seed", "0123");
    mkdirSync(seed, { recursive: true });
    const launch = (jitiSeed?: string) =>
      sandboxedPaneArgv({
        bwrap: "/usr/bin/bwrap",
        config: { settings: { default: "on" }, bwrap: async () => "/usr/bin/bwrap" },
        env: { HOME: dir },
        agentDir: join(dir, "agent"),
        stateDir: join(dir, "agent", "pi-shepherd"),
        sheepDir: join(dir, "agent", "pi-shepherd", "sheep", "a_1"),
        sessionFile: join(dir, "agent", "pi-shepherd", "sheep", "a_1", "session.jsonl"),
        worktreesDir: join(dir, "agent", "pi-shepherd", "worktrees"),
        cwd: dir,
        argv: ["/node", "/launcher.mjs", "/spec.json"],
        ...(jitiSeed ? { jitiSeed } : {}),
      }).join(" ");
    const seeded = launch(seed);
    assert.ok(seeded.includes(`--ro-bind ${seed} ${JITI_SEED_INSIDE}`), seeded);
    assert.ok(!seeded.includes(join(dir, "machine-tmp", "jiti")), "not the machine's cache");
    const none = launch();
    assert.ok(!none.includes(JITI_SEED_INSIDE) && !none.includes(join(dir, "machine-tmp", "jiti")), "no seed: nothing bound, no seed named");
  });
});
