/**
 * Rules of the module graph that no type check sees. pi loads the extension through its
 * TypeScript loader (jiti), which resolves a `./x.js` that stands for `./x.ts` only after a
 * failed lookup with a thrown error for each import: measured, the shepherd's half loaded in about
 * 1 s that way instead of about 0.13 s, and a person's pi held its first message back that long.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { repoRoot } from "../support/rpc-shepherd.ts";

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(path)));
    else if (/\.(ts|mts|mjs)$/.test(e.name) && !e.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

async function imports(file: string): Promise<string[]> {
  const text = await readFile(file, "utf8");
  return [...text.matchAll(SPECIFIER)].map((m) => m[1]!);
}

test("every relative import of what pi loads names the very file it means", async () => {
  const bad: string[] = [];
  for (const root of ["extensions", "src"]) {
    for (const file of await sources(join(repoRoot, root))) {
      for (const spec of await imports(file)) {
        if (!spec.startsWith(".")) continue;
        const target = resolve(dirname(file), spec);
        if (!existsSync(target)) bad.push(`${relative(repoRoot, file)}: "${spec}" is no file`);
      }
    }
  }
  assert.deepEqual(bad, []);
});

test("the core imports nothing of pi, of a multiplexer, or of the extension", async () => {
  const bad: string[] = [];
  for (const file of await sources(join(repoRoot, "src", "core"))) {
    for (const spec of await imports(file)) {
      const outside = spec.startsWith(".") ? relative(join(repoRoot, "src"), resolve(dirname(file), spec)) : spec;
      if (/^(@earendil-works|@mariozechner)\//.test(spec) || /^(runtimes|protocol|tool|launch|command)\//.test(outside) || outside.startsWith("..")) {
        bad.push(`${relative(repoRoot, file)}: "${spec}"`);
      }
    }
  }
  assert.deepEqual(bad, []);
});
