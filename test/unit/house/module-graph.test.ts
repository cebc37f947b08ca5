/**
 * Rules of the module graph that no type check sees. pi loads the extension through its
 * TypeScript loader (jiti), which resolves a `./x.js` that stands for `./x.ts` only after a
 * failed lookup with a thrown error for each import: measured, the shepherd's half loaded in about
 * 1 s that way instead of about 0.13 s, and a person's pi held its first message back that long.
 *
 * And the house: every file of src/, extensions/, bench/, scripts/ and test/support/ stands in one room of ROOMS, a room
 * imports only rooms below it in that order, and no files import each other in a circle (type-only
 * imports count: a circle of types is still a circle to read). docs/architecture.md draws the rooms.
 * No file of src/core is over 300 lines.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { repoRoot } from "../../support/rpc-shepherd.ts";

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
      if (
        /^(@earendil-works|@mariozechner)\//.test(spec) ||
        /^(runtimes|protocol|stores|edge|context|texts|launch|command|panel|sheep|session)\//.test(outside) ||
        outside.startsWith("..")
      ) {
        bad.push(`${relative(repoRoot, file)}: "${spec}"`);
      }
    }
  }
  assert.deepEqual(bad, []);
});

/**
 * The rooms, top to bottom: a folder (ending in "/") or one file. A file stands in the room of the
 * longest entry it starts with; a file in no room fails the test (give a new folder its place).
 * The panel, an edge, stands beside src/edge and src/command (/shepherd panel says its texts); another machine's adapter beside
 * src/runtimes, under the ports it implements.
 */
const ROOMS = [
  "scripts/",
  "bench/",
  // The harness the end-to-end tests, the bench and the scripts share: real and in-memory worlds over the house.
  "test/support/",
  "extensions/",
  // The shepherd's session lifecycle, out of pi's wiring: above the edges it hands its entry to.
  "src/session/",
  "src/command/",
  "src/panel/",
  "src/edge/",
  "src/actions/",
  // What an action runs with: the composed shepherd and settings, trust, and where a start's definition, host, cwd and model come from.
  "src/context/",
  // What every edge says: results, progress and screens, below the actions that say them.
  "src/texts/",
  "src/compose.ts",
  "src/remote/connect.ts",
  "src/doctor/",
  "src/core/shepherd.ts",
  "src/core/async/",
  "src/core/delegation/",
  "src/core/lifecycle/",
  "src/core/prompts/",
  "src/core/herd/",
  "src/hosts/",
  "src/remote/bundle.ts",
  "src/remote/server/",
  "src/settings.ts",
  "src/project-trust.ts",
  "src/remote/link/",
  "src/definitions/",
  "src/git/",
  "src/launch/",
  // The forwarder inside a sandbox, which the launcher starts: nothing of the house.
  "src/sandbox/egress/forwarder.mjs",
  "src/sheep/",
  // Notices to a person who walked away: the outbox, its channels and the notify setting, below settings.ts.
  "src/notify/",
  "src/stores/",
  "src/protocol/",
  "src/sandbox/",
  "src/runtimes/",
  "src/remote/rpc/",
  "src/ports/",
  "src/domain/",
];

function roomOf(file: string): number {
  let best = -1;
  for (const [i, room] of ROOMS.entries()) {
    const fits = room.endsWith("/") ? file.startsWith(room) : file === room;
    if (fits && (best < 0 || room.length > ROOMS[best]!.length)) best = i;
  }
  return best;
}

/** Every relative import of the house's files, as paths from the repository's root. */
async function houseGraph(): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  for (const root of ["scripts", "bench", "test/support", "extensions", "src"]) {
    for (const file of await sources(join(repoRoot, root))) {
      const targets = new Set<string>();
      for (const spec of await imports(file)) {
        // A specifier that names no file is text in a string (a script's sample repository), not an import:
        // what pi loads is held to naming real files by the first test.
        if (spec.startsWith(".") && existsSync(resolve(dirname(file), spec))) targets.add(relative(repoRoot, resolve(dirname(file), spec)));
      }
      graph.set(relative(repoRoot, file), [...targets]);
    }
  }
  return graph;
}

/** Each circle of files as one path round it (a → b → … → a), by Tarjan's strongly connected components. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || graph.get(v)?.includes(v)) found.push(scc);
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found.map((scc) => {
    // The shortest way from the first file back to itself, inside its component.
    const inside = new Set(scc);
    const start = [...scc].sort()[0]!;
    const from = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const v = queue.shift()!;
      for (const w of graph.get(v) ?? []) {
        if (!inside.has(w)) continue;
        if (w === start) {
          const path = [v];
          while (path[0] !== start) path.unshift(from.get(path[0]!)!);
          const rest = scc.filter((f) => !path.includes(f)).sort();
          return [...path, start].join(" → ") + (rest.length > 0 ? ` (and in the same knot: ${rest.join(", ")})` : "");
        }
        if (!from.has(w)) {
          from.set(w, v);
          queue.push(w);
        }
      }
    }
    return scc.join(" → ");
  });
}

test("no files of the house (src/, extensions/, bench/, scripts/, test/support/) import each other in a circle", async () => {
  assert.deepEqual(circles(await houseGraph()), []);
});

test("circles() finds a circle, type-only or not, and names its files", () => {
  const graph = new Map([
    ["a.ts", ["b.ts"]],
    ["b.ts", ["c.ts"]],
    ["c.ts", ["a.ts", "d.ts"]],
    ["d.ts", []],
  ]);
  assert.deepEqual(circles(graph), ["a.ts → b.ts → c.ts → a.ts"]);
});

test("every file stands in a room, and a room imports only rooms below it", async () => {
  const bad: string[] = [];
  for (const [file, targets] of await houseGraph()) {
    const room = roomOf(file);
    if (room < 0) {
      bad.push(`${file} stands in no room: give it a place in ROOMS (and in docs/architecture.md)`);
      continue;
    }
    for (const target of targets) {
      const to = roomOf(target);
      if (to < 0) bad.push(`${file} imports ${target}, outside every room`);
      else if (to < room) bad.push(`${file} (${ROOMS[room]}) imports ${target} (${ROOMS[to]}), a room above it`);
    }
  }
  assert.deepEqual(bad, []);
});

test("the core imports only its own rooms, the ports and the domain", async () => {
  const bad: string[] = [];
  for (const [file, targets] of await houseGraph()) {
    if (!file.startsWith("src/core/")) continue;
    for (const target of targets) if (!/^src\/(core|ports|domain)\//.test(target)) bad.push(`${file} imports ${target}`);
  }
  assert.deepEqual(bad, []);
});

/** The house keeps core files small (issue 32): a file past this is a room's jobs grown together; split it along a seam. */
const MAX_CORE_FILE_LINES = 300;

test("no file of the core is over 300 lines", async () => {
  const long: string[] = [];
  for (const file of await sources(join(repoRoot, "src", "core"))) {
    const lines = (await readFile(file, "utf8")).split("\n").length - 1;
    if (lines > MAX_CORE_FILE_LINES) long.push(`${relative(repoRoot, file)}: ${lines} lines`);
  }
  assert.deepEqual(long, []);
});
