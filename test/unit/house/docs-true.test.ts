/**
 * The guides say what the product does: every /shepherd subcommand and flag is in
 * docs/shepherd-command.md, every setting in docs/settings.md, README's `npm test` names each step
 * of the script, its count of `EBADENGINE` lines is the lock file's, and it tells how to run the
 * clone's own pi. Each check reads the source of truth (the command table, the settings' keys,
 * package.json, package-lock.json), so a new subcommand, setting or dependency that the docs miss
 * fails here.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { SUBCOMMANDS } from "../../../src/command/parse.ts";
import { SETTING_KEYS } from "../../../src/settings.ts";
import { repoRoot } from "../../support/rpc-shepherd.ts";

const read = (path: string) => readFileSync(join(repoRoot, path), "utf8");
const readme = read("README.md");

/** Lines npm prints per EBADENGINE warning: "Unsupported engine {", package, required, current, "}". */
const LINES_PER_WARNING = 5;

describe("the docs say what the product does", () => {
  it("docs/shepherd-command.md shows every subcommand and every flag", () => {
    const doc = read("docs/shepherd-command.md");
    for (const s of SUBCOMMANDS) {
      assert.match(doc, new RegExp(`^/shepherd ${s.name}\\b`, "m"), `docs/shepherd-command.md has a line for /shepherd ${s.name}`);
      for (const flag of [...Object.keys(s.flags ?? {}), ...Object.keys(s.switches ?? {})]) {
        const line = doc.split("\n").find((l) => l.startsWith(`/shepherd ${s.name} `) || l.startsWith(`/shepherd ${s.name}\t`));
        assert.ok(line?.includes(`--${flag}`), `docs/shepherd-command.md shows /shepherd ${s.name} --${flag}`);
      }
    }
  });

  it("docs/settings.md has a row for every setting", () => {
    const doc = read("docs/settings.md");
    const rows = doc.split("\n").filter((l) => l.startsWith("| `"));
    for (const key of SETTING_KEYS)
      assert.ok(
        rows.some((r) => r.split("|")[1]!.includes(`\`${key}\``)),
        `docs/settings.md has a row for ${key}`,
      );
  });

  it("README's npm test names every step of the test script, biome ci too", () => {
    const script = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts.test!;
    const steps = script.split("&&").map((s) => s.trim().split(" ").slice(0, 2).join(" "));
    assert.deepEqual(steps, ["tsc --noEmit", "biome ci", "node --import"], "the script's steps, as this test knows them");
    const top = readme.split("\n").find((l) => l.startsWith("npm ci && npm test"));
    assert.match(top ?? "", /type checking, biome ci .*every test/, "the first command's comment");
    const dev = readme.split("\n").find((l) => l.startsWith("- `npm test` — "));
    assert.match(dev ?? "", /`tsc --noEmit`, `biome ci \.`, then every `test\/\*\*\/\*\.test\.ts`/, "the Development section");
  });

  it("README's EBADENGINE count is what a fresh npm ci on Node 20 prints: one warning per locked package wanting Node 21 or newer", () => {
    const lock = JSON.parse(read("package-lock.json")) as { packages: Record<string, { engines?: { node?: string } }> };
    const wantNewer = Object.entries(lock.packages).filter(([path, p]) => path !== "" && /^>=\s*(2[1-9]|[3-9]\d)\b/.test(p.engines?.node ?? ""));
    const warnings = wantNewer.length;
    assert.ok(warnings > 0, "the lock file has packages that want a newer Node than 20");
    const said = /prints (\d+) `npm warn EBADENGINE` lines \((\d+) warnings of (\d+) lines\)/.exec(readme);
    assert.ok(said, "README says how many EBADENGINE lines and warnings");
    assert.deepEqual(
      said.slice(1).map(Number),
      [warnings * LINES_PER_WARNING, warnings, LINES_PER_WARNING],
      `measured: ${warnings} packages want Node >= 21 (${wantNewer.map(([p]) => p.slice(p.lastIndexOf("node_modules/") + 13)).join(", ")})`,
    );
  });

  it("README tells how to run the clone's own pi: its node_modules/.bin first on PATH, and why", () => {
    assert.match(readme, /put the clone's `node_modules\/\.bin`\s+first on `PATH` \(`export PATH=\$PWD\/node_modules\/\.bin:\$PATH`/);
    assert.match(readme, /'node:module' does not provide an export named 'enableCompileCache'/, "the error a Node 20 gives, so a person who met it finds this");
  });
});
