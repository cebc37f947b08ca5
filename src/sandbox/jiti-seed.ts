/**
 * The seed of a sandboxed sheep's TypeScript loader cache: pi's loader (jiti) transpiles the sheep
 * extension in every pi whose /tmp is empty, as a sandbox's is. The shepherd (outside any sandbox)
 * has the same jiti pi uses transpile the sheep side once per content of its code, into a private
 * directory of its own state dir, which is bound read-only into each sandbox for the launcher to
 * copy. It holds only the sheep side's entries: never the machine's whole cache (other projects'
 * code), and it does not depend on some pi outside a sandbox having loaded the sheep extension
 * since /tmp was emptied. A stale or missing seed only costs speed: jiti checks each entry against
 * its source's hash and transpiles again what does not match.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readdirSync, realpathSync, renameSync, rmSync, statSync, utimesSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";

export interface JitiSeedOptions {
  /** The private directory the seeds live in (`<stateDir>/jiti-seed`), made 0700. */
  root: string;
  /** The pi command the sheep run (`[node, pi's cli.js]`): its jiti and its node make the seed. */
  piCommand: readonly string[];
  /**
   * The extensions of pi-shepherd a sheep's pi loads: the sheep extension (extensions/sheep.ts; a remote
   * host's sheep.mjs), and where pi-shepherd is an installed package its entry (extensions/shepherd.ts).
   */
  entries: readonly string[];
  /** How long the transpiling child may take before it is ended (a seed missed costs speed only). */
  deadlineMs?: number;
}

/** Bumped when what a seed holds or how it is made changes: an older seed is then made again. */
const SEED_FORMAT = "1";
const MAX_STAMPED_FILES = 4000;
/** A build directory this old is an abandoned one (its shepherd died): removed. */
const ABANDONED_BUILD_MS = 10 * 60_000;
/**
 * Another seed unused this long goes. Not at once: another shepherd of the same state dir (another
 * checkout of pi-shepherd, another bundle on a host) may be binding its own; each use marks a seed.
 */
const UNUSED_SEED_MS = 24 * 3600_000;

/**
 * What the child runs, given (jiti's path, pi's virtual modules or "", the cache directory, the
 * entries) as arguments: jiti as pi's bundle creates it for an extension (no module cache, no native
 * imports, pi's own packages as virtual modules), importing each entry as pi does (which transpiles
 * it and what it imports into the cache) without calling it. pi's packages (all of pi: the child's
 * slowest part) are loaded only for an entry that imports them at its top (the shepherd's main); they
 * change no entry's name or text. An entry that fails keeps what it wrote.
 */
const CHILD = [
  'import { createRequire } from "node:module";',
  'import { pathToFileURL } from "node:url";',
  "const [jitiPath, virtual, fsCache, ...entries] = process.argv.slice(1);",
  "const { createJiti } = createRequire(jitiPath)(jitiPath);",
  "let virtualModules;",
  "const load = (entry) => createJiti(entry, { moduleCache: false, tryNative: false, fsCache, ...(virtualModules ? { virtualModules } : {}) }).import(entry, { default: true });",
  "let loaded = 0;",
  "for (const entry of entries) {",
  "  try {",
  "    await load(entry);",
  "    loaded++;",
  "  } catch {",
  "    if (!virtual || virtualModules) continue;",
  "    try {",
  "      virtualModules = (await import(pathToFileURL(virtual).href)).VIRTUAL_MODULES;",
  "      await load(entry);",
  "      loaded++;",
  "    } catch {}",
  "  }",
  "}",
  "process.exit(loaded > 0 ? 0 : 1);",
].join("\n");

/** A memoized seed maker: the seed's directory once it is there, undefined when none can be made here. */
export function jitiSeedMaker(o: JitiSeedOptions): () => Promise<string | undefined> {
  let made: Promise<string | undefined> | undefined;
  return async () => {
    made ??= makeJitiSeed(o).catch(() => undefined);
    const seed = await made;
    // Marked as in use at each sandboxed start; gone meanwhile (removed by hand), none is bound.
    return seed !== undefined && used(seed) ? seed : undefined;
  };
}

export async function makeJitiSeed(o: JitiSeedOptions): Promise<string | undefined> {
  const [node, script] = o.piCommand;
  if (!node || !script || o.piCommand.length !== 2) return undefined;
  const jitiPath = jitiOf(script);
  const entries = o.entries.map(real).filter((e) => e !== undefined);
  if (!jitiPath || entries.length === 0) return undefined;
  const seed = join(o.root, stampOf(jitiPath, entries));
  if (hasEntries(seed) && used(seed)) return seed;
  mkdirSync(o.root, { recursive: true, mode: 0o700 });
  chmodSync(o.root, 0o700);
  const build = join(o.root, `.build-${process.pid}-${Date.now()}`);
  mkdirSync(build, { mode: 0o700 });
  try {
    await runChild(node, [jitiPath, virtualModulesOf(script) ?? "", build, ...entries], o.deadlineMs ?? 20_000);
    if (!hasEntries(build)) return undefined;
    try {
      renameSync(build, seed);
    } catch {
      // Another shepherd of this state dir made the same seed first: its one is as good.
      if (!hasEntries(seed)) return undefined;
    }
    prune(o.root, basename(seed));
    return seed;
  } finally {
    rmSync(build, { recursive: true, force: true });
  }
}

/** The jiti pi's extension loader uses: the one pi's own package resolves (its bundle and its sources alike). */
function jitiOf(script: string): string | undefined {
  try {
    return createRequire(realpathSync(script)).resolve("jiti");
  } catch {
    return undefined;
  }
}

/** pi's bundle gives an extension pi's own packages as virtual modules, from a chunk beside its cli. */
function virtualModulesOf(script: string): string | undefined {
  try {
    const chunks = join(dirname(realpathSync(script)), "chunks");
    const name = readdirSync(chunks).find((n) => /^virtual-modules-[\w-]+\.js$/.test(n));
    return name ? join(chunks, name) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Names one content of the sheep side: jiti's file and the entries' paths, and the size and time of
 * every source file of each entry's package (src/ and extensions/), or of the entry alone where it
 * has none (a remote host's bundle, named by its hash already).
 */
function stampOf(jitiPath: string, entries: readonly string[]): string {
  const h = createHash("sha256").update(`${SEED_FORMAT}\0${jitiPath}\0${entries.join("\0")}\0`);
  const files = [jitiPath, ...new Set(entries.flatMap(sourcesOf))];
  for (const f of files) {
    try {
      const st = statSync(f);
      h.update(`${f}\0${st.size}\0${st.mtimeMs}\0`);
    } catch {
      h.update(`${f}\0-\0`);
    }
  }
  return h.digest("hex").slice(0, 24);
}

function sourcesOf(entry: string): string[] {
  let root: string | undefined;
  for (let dir = dirname(entry), i = 0; i < 4 && dir !== dirname(dir); dir = dirname(dir), i++) {
    if (kindOf(join(dir, "package.json")) === "file") {
      root = dir;
      break;
    }
  }
  if (!root) return [entry];
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const n of names) {
      if (out.length >= MAX_STAMPED_FILES || n.startsWith(".") || n === "node_modules") continue;
      const p = join(dir, n);
      const kind = kindOf(p);
      if (kind === "dir" && depth < 8) walk(p, depth + 1);
      else if (kind === "file" && /\.[cm]?[jt]sx?$/.test(n)) out.push(p);
    }
  };
  for (const d of ["extensions", "src"]) walk(join(root, d), 0);
  return out.includes(entry) ? out : [entry, ...out];
}

function runChild(node: string, args: string[], deadlineMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    // Nothing of the shepherd's env: JITI_* variables would change the names of the entries, and a
    // sandboxed sheep's pi has none of them either.
    const child = spawn(node, ["--input-type=module", "-e", CHILD, ...args], { stdio: "ignore", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    const timer = setTimeout(() => child.kill("SIGKILL"), deadlineMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`the seed's child ended with ${code ?? "a signal"}`));
    });
  });
}

/** Seeds of another content of the sheep side unused for a day, and abandoned builds, go. */
function prune(root: string, keep: string): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const n of names) {
    if (n === keep) continue;
    const p = join(root, n);
    try {
      if (Date.now() - statSync(p).mtimeMs < (n.startsWith(".build-") ? ABANDONED_BUILD_MS : UNUSED_SEED_MS)) continue;
    } catch {
      continue;
    }
    rmSync(p, { recursive: true, force: true });
  }
}

/** Marks a seed as in use (its time), false when it is gone. */
function used(seed: string): boolean {
  try {
    const now = new Date();
    utimesSync(seed, now, now);
    return true;
  } catch {
    return false;
  }
}

function hasEntries(dir: string): boolean {
  try {
    return readdirSync(dir).some((n) => /\.[cm]?js$/.test(n));
  } catch {
    return false;
  }
}

function kindOf(p: string): "dir" | "file" | undefined {
  try {
    const st = statSync(p);
    return st.isDirectory() ? "dir" : st.isFile() ? "file" : undefined;
  } catch {
    return undefined;
  }
}

function real(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}
