/**
 * The launcher on its own (no multiplexer): it reads the private spec once, deletes it, and runs
 * pi in its own process, so the process a pane holds is pi and its end is pi's end.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

const launcher = join(import.meta.dirname, "..", "..", "..", "src", "launch", "launcher.mjs");
let dir: string;
let out: string;
/** Stands in for pi's CLI: says where and as what it runs, then ends as told by its last argument. */
let fakePi: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-shepherd-launcher-"));
  out = join(dir, "out.json");
  fakePi = join(dir, "fake-pi.mjs");
  await writeFile(
    fakePi,
    [
      'import { readFileSync, writeFileSync } from "node:fs";',
      'process.title = "pi";',
      "setTimeout(() => {",
      "  const cmdline = readFileSync('/proc/self/cmdline', 'latin1');",
      `  writeFileSync(${JSON.stringify(out)}, JSON.stringify({ pid: process.pid, argv: process.argv, cwd: process.cwd(), key: process.env.SHEEP_API_KEY, title: process.title, cmdline }));`,
      "  const how = process.argv.at(-1);",
      '  if (how === "kill") process.kill(process.pid, "SIGKILL");',
      "  process.exit(Number(how));",
      "}, 50);",
    ].join("\n"),
  );
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function launch(argv: string[], env: Record<string, string> = {}) {
  const spec = join(dir, "sheep", "spec.json");
  await rm(out, { force: true });
  await rm(join(dir, "sheep"), { recursive: true, force: true });
  await import("node:fs/promises").then((fs) => fs.mkdir(join(dir, "sheep"), { recursive: true }));
  await writeFile(spec, JSON.stringify({ argv, env: { SHEEP_API_KEY: "sk-launcher-test", ...env }, cwd: dir }), { mode: 0o600 });
  const r = spawnSync(process.execPath, [launcher, spec], { encoding: "utf8", env: { ...process.env, SHEEP_API_KEY: undefined } });
  const said = existsSync(out)
    ? (JSON.parse(await readFile(out, "utf8")) as { pid: number; argv: string[]; cwd: string; key: string; title: string; cmdline: string })
    : undefined;
  return { r, said, specLeft: existsSync(spec) };
}

describe("launcher", () => {
  it("runs pi in its own process with the spec's argv, env and cwd, and deletes the spec once read", async () => {
    const { r, said, specLeft } = await launch([process.execPath, fakePi, "--session", "a b.jsonl", "5"]);
    assert.equal(r.status, 5, r.stderr);
    assert.equal(said!.pid, r.pid, "pi is the launcher's own process: no second node");
    assert.deepEqual(said!.argv, [process.execPath, fakePi, "--session", "a b.jsonl", "5"]);
    assert.equal(said!.cwd, dir);
    assert.equal(said!.key, "sk-launcher-test");
    assert.equal(specLeft, false, "the spec (and its keys) is gone from disk");
    assert.ok(!said!.cmdline.includes("sk-launcher-test"));
    assert.equal(said!.title, `pi ${join(dir, "sheep")}`, "ps names the sheep beside pi");
  });

  it("a pi killed by a signal ends the launcher by that signal", async () => {
    const { r } = await launch([process.execPath, fakePi, "kill"]);
    assert.equal(r.signal, "SIGKILL");
  });

  it("another program, or a variable node reads only at startup, gets a child whose code or signal the launcher mirrors", async () => {
    const seen = join(dir, "sh-saw");
    const killed = await launch(["/bin/sh", "-c", 'echo "$SHEEP_API_KEY" > "$0"; kill -9 $$', seen]);
    assert.equal(killed.r.signal, "SIGKILL");
    assert.equal((await readFile(seen, "utf8")).trim(), "sk-launcher-test");
    assert.equal((await launch(["/bin/sh", "-c", "exit 4"])).r.status, 4);
    const certs = await launch([process.execPath, fakePi, "6"], { NODE_EXTRA_CA_CERTS: join(dir, "extra.pem") });
    assert.equal(certs.r.status, 6);
    assert.notEqual(certs.said!.pid, certs.r.pid, "a node of its own, so the variable takes effect");
  });

  it("a sandboxed sheep's pi loader cache starts as a copy of the seed: its own, never the seed itself", async () => {
    const seed = join(dir, "seed");
    const tmp = join(dir, "private-tmp");
    await rm(seed, { recursive: true, force: true });
    await rm(tmp, { recursive: true, force: true });
    await mkdir(seed, { recursive: true });
    await mkdir(join(tmp, "jiti"), { recursive: true });
    await writeFile(join(seed, "extensions-sheep.0123abcd.mjs"), "seeded");
    await writeFile(join(seed, "src-x.89abcdef.mjs"), "from the seed");
    await writeFile(join(tmp, "jiti", "src-x.89abcdef.mjs"), "the sheep's own");
    await writeFile(join(seed, "not a cache file"), "skipped");
    const probe = join(dir, "seed-pi.mjs");
    await writeFile(
      probe,
      [
        'import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";',
        'import { join } from "node:path";',
        'import { tmpdir } from "node:os";',
        'const jiti = join(tmpdir(), "jiti");',
        "// The copies are made while pi loads: give them the moment they take.",
        'const seeded = join(jiti, "extensions-sheep.0123abcd.mjs");',
        "for (let i = 0; i < 200 && !(existsSync(seeded) && statSync(seeded).size > 0); i++) await new Promise((r) => setTimeout(r, 10));",
        "const files = Object.fromEntries(readdirSync(jiti).map((n) => [n, readFileSync(join(jiti, n), 'utf8')]));",
        'writeFileSync(join(jiti, "extensions-sheep.0123abcd.mjs"), "changed inside");',
        `writeFileSync(${JSON.stringify(out)}, JSON.stringify({ files, seedVar: process.env.PI_SHEPHERD_JITI_SEED ?? null }));`,
      ].join("\n"),
    );
    const spec = join(dir, "sheep", "spec.json");
    await mkdir(join(dir, "sheep"), { recursive: true });
    await writeFile(spec, JSON.stringify({ argv: [process.execPath, probe], env: {}, cwd: dir }), { mode: 0o600 });
    const r = spawnSync(process.execPath, [launcher, spec], { encoding: "utf8", env: { ...process.env, TMPDIR: tmp, PI_SHEPHERD_JITI_SEED: seed } });
    assert.equal(r.status, 0, r.stderr);
    const said = JSON.parse(await readFile(out, "utf8")) as { files: Record<string, string>; seedVar: string | null };
    assert.deepEqual(said.files, { "extensions-sheep.0123abcd.mjs": "seeded", "src-x.89abcdef.mjs": "the sheep's own" });
    assert.equal(said.seedVar, null, "pi is not told where the seed is");
    assert.equal(await readFile(join(seed, "extensions-sheep.0123abcd.mjs"), "utf8"), "seeded", "what the sheep writes stays in its copy");
  });

  it("refuses a malformed spec, and still deletes it", async () => {
    const spec = join(dir, "bad-spec.json");
    await writeFile(spec, JSON.stringify({ argv: "rm -rf /", env: {}, cwd: dir }));
    const r = spawnSync(process.execPath, [launcher, spec], { encoding: "utf8" });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /malformed/);
    assert.equal(existsSync(spec), false);
  });
});
