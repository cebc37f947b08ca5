/**
 * The files a remote host needs, built here in memory: the agent (src/remote/server/main.ts and all
 * it imports, one ES module a plain `node` runs, no TypeScript or node_modules there), the sheep
 * extension a remote pi loads (extensions/sheep.ts, with what pi provides to extensions left to
 * pi), the launcher, report-exit.sh and the sandbox's egress forwarder (beside the launcher) as they are. Named by the hash of their contents: a
 * directory of that name holds exactly these bytes, so one in use is never rewritten.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export interface BundleFile {
  name: "agent.mjs" | "sheep.mjs" | "launcher.mjs" | "report-exit.sh" | "egress-forwarder.mjs";
  content: Buffer;
  /** sha256 of content, hex: checked on the remote host before the file is used. */
  sha256: string;
}

export interface Bundle {
  /** The directory's name: the first 16 hex digits of the hash of every file's name and content. */
  hash: string;
  files: BundleFile[];
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** What pi's extension loader maps to its own copies (docs: pi-extension-api.md, section 1): never bundled. */
export const PI_PROVIDED = ["@earendil-works/*", "@mariozechner/*", "@sinclair/typebox", "@sinclair/typebox/*", "typebox", "typebox/*"];

/**
 * CommonJS dependencies (execa's cross-spawn) require node's built-ins; an ES module has no
 * `require`, so the agent gets one. The sheep's bundle is loaded by pi's loader, which gives it one.
 */
const REQUIRE_BANNER = 'import { createRequire as __piShepherdRequire } from "node:module";\nconst require = __piShepherdRequire(import.meta.url);';

async function bundleOne(entry: string, o: { external?: string[]; banner?: string }): Promise<Buffer> {
  // Loaded on first need: a shepherd with no remote host never pays for esbuild.
  const { build } = await import("esbuild");
  const r = await build({
    entryPoints: [join(root, entry)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    // Paths in the output (esbuild's module comments) are from here, never from the shepherd's
    // cwd: the same sources make the same bytes, so the same hash, wherever pi was started.
    absWorkingDir: root,
    legalComments: "none",
    logLevel: "silent",
    ...(o.external ? { external: o.external } : {}),
    ...(o.banner ? { banner: { js: o.banner } } : {}),
  });
  const out = r.outputFiles[0];
  if (!out) throw new Error(`esbuild made nothing of ${entry}`);
  return Buffer.from(out.contents);
}

const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

async function make(): Promise<Bundle> {
  const [agent, sheep, launcher, reportExit, forwarder] = await Promise.all([
    bundleOne("src/remote/server/main.ts", { banner: REQUIRE_BANNER }),
    bundleOne("extensions/sheep.ts", { external: PI_PROVIDED }),
    readFile(join(root, "src", "launch", "launcher.mjs")),
    readFile(join(root, "src", "launch", "report-exit.sh")),
    readFile(join(root, "src", "sandbox", "egress", "forwarder.mjs")),
  ]);
  const files: BundleFile[] = (
    [
      ["agent.mjs", agent],
      ["sheep.mjs", sheep],
      ["launcher.mjs", launcher],
      ["report-exit.sh", reportExit],
      ["egress-forwarder.mjs", forwarder],
    ] as const
  ).map(([name, content]) => ({ name, content, sha256: sha256(content) }));
  const hash = sha256(files.map((f) => `${f.name} ${f.sha256}\n`).join("")).slice(0, 16);
  return { hash, files };
}

let cached: Promise<Bundle> | undefined;

/** The bundle of this package's sources, built once per process. */
export function remoteBundle(): Promise<Bundle> {
  cached ??= make();
  cached.catch(() => {
    cached = undefined;
  });
  return cached;
}
