/**
 * What README tells a newcomer before the first command: how to get pi where `pi install` needs one
 * on PATH, and why a fresh `npm ci` on an older Node warns. And the install stays quiet otherwise:
 * every dependency with an install script is approved in package.json, or npm lists them all. And it
 * stays a front page: the rest is in the guides of docs/, which it links.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { repoRoot } from "../../support/rpc-shepherd.ts";

const readme = readFileSync(join(repoRoot, "README.md"), "utf8");

describe("README and a fresh install", () => {
  it("says how to get pi before it first runs `pi install`", () => {
    const firstInstall = readme.indexOf('pi install "$PWD"');
    assert.ok(firstInstall > 0);
    const getPi = readme.indexOf("npm install -g @earendil-works/pi-coding-agent");
    assert.ok(getPi > 0 && getPi < firstInstall, "a global pi's install comes before `pi install`");
    assert.match(readme, /npx --no-install pi install "\$PWD"/, "and the clone's own pi, for a machine without a global one");
  });

  it("says why `npm ci` warns on an older Node, before the first `npm ci`", () => {
    const firstCi = readme.indexOf("npm ci &&");
    const why = readme.indexOf("EBADENGINE");
    assert.ok(why > 0 && why < firstCi, "the warning is explained before the command that prints it");
  });

  it("is a front page: at most 180 lines, linking every guide in docs/, each of which first says what it is for", () => {
    const lines = readme.split("\n").length;
    assert.ok(lines <= 180, `README has ${lines} lines; what a person reads on purpose belongs in a guide in docs/`);
    const guides = readdirSync(join(repoRoot, "docs")).filter((name) => name.endsWith(".md"));
    assert.ok(guides.length >= 8, "the guides are in docs/");
    for (const guide of guides) {
      assert.ok(readme.includes(`](docs/${guide})`), `README links docs/${guide}`);
      const [title, blank, purpose] = readFileSync(join(repoRoot, "docs", guide), "utf8").split("\n");
      assert.ok(title?.startsWith("# ") && blank === "" && purpose && !purpose.startsWith("#"), `docs/${guide} starts with its title and what it is for`);
    }
  });

  it("approves every dependency's install script, so npm ci prints no install-scripts warning", () => {
    const lock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as {
      packages: Record<string, { hasInstallScript?: boolean; name?: string }>;
    };
    const allow = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { allowScripts?: Record<string, boolean> }).allowScripts ?? {};
    const scripted = Object.entries(lock.packages)
      .filter(([path, p]) => path !== "" && p.hasInstallScript)
      .map(([path, p]) => p.name ?? path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
    assert.ok(scripted.length > 0, "the lock file names packages with install scripts");
    for (const name of scripted) assert.ok(name in allow, `${name} has an install script and no allowScripts entry`);
  });
});
