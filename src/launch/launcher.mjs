#!/usr/bin/env node
// Runs one sheep's pi from its private launch spec: `<node> <this file> <spec.json>` is all a
// pane is given, so no name, model, cwd or secret is ever on a command line or parsed by a shell.
// pi runs in this very process (its CLI imported with the spec's argv, env and cwd applied): the
// pane holds one process, and how it ended is the multiplexer's to report (tmux: remain-on-exit
// and #{pane_dead_status}/#{pane_dead_signal}; elsewhere src/launch/report-exit.sh).
// Plain JS with node built-ins only, so any node runs it without a loader.
import { spawn } from "node:child_process";
import { constants, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

function fail(message, code) {
  process.stderr.write(`pi-shepherd launcher: ${message}\n`);
  process.exit(code);
}

/** Variables node reads only while it starts: a pi that needs other values than ours gets its own node. */
const STARTUP_ONLY = ["NODE_OPTIONS", "NODE_EXTRA_CA_CERTS", "NODE_ICU_DATA", "SSL_CERT_FILE", "SSL_CERT_DIR", "UV_THREADPOOL_SIZE"];

const specPath = process.argv[2];
if (!specPath) fail("missing spec path", 2);
let spec;
try {
  spec = JSON.parse(readFileSync(specPath, "utf8"));
} catch (e) {
  fail(`cannot read the launch spec: ${e.message}`, 2);
}
// It holds the carried API keys: read once, then gone from disk.
rmSync(specPath, { force: true });
const strings = (xs) => Array.isArray(xs) && xs.every((x) => typeof x === "string");
if (!spec || !strings(spec.argv) || spec.argv.length === 0 || typeof spec.cwd !== "string" || typeof spec.env !== "object" || !spec.env) {
  fail("the launch spec is malformed", 2);
}
const env = Object.fromEntries(Object.entries(spec.env).filter(([, v]) => typeof v === "string"));

function sameFile(a, b) {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/** `<our node> <script> args…` with nothing node must know at startup: pi can run right here. */
function runsHere([cmd, script]) {
  if (!sameFile(cmd, process.execPath) || !script || script.startsWith("-")) return false;
  try {
    if (!statSync(script).isFile()) return false;
  } catch {
    return false;
  }
  return STARTUP_ONLY.every((k) => env[k] === undefined || env[k] === process.env[k]);
}

const here = runsHere(spec.argv);
Object.assign(process.env, env);
// A sandboxed sheep has no network: its pi reaches the shepherd's egress proxy through a forwarder
// from a loopback port to the proxy's socket bound into the sandbox, started before pi is.
if (process.env.PI_SHEPHERD_EGRESS_SOCKET) {
  try {
    // Beside the launcher in a remote host's bundle; in the package, in its room.
    const beside = new URL("./egress-forwarder.mjs", import.meta.url);
    const where = existsSync(fileURLToPath(beside)) ? beside : new URL("../sandbox/egress/forwarder.mjs", import.meta.url);
    const { startForwarder, proxyEnv } = await import(where.href);
    const { port } = await startForwarder(process.env.PI_SHEPHERD_EGRESS_SOCKET);
    Object.assign(process.env, proxyEnv(port));
  } catch (e) {
    fail(`cannot start the egress forwarder: ${e?.message ?? e}`, 2);
  }
}
// A sandboxed sheep's /tmp is its own and empty: pi's TypeScript loader would transpile every
// extension anew, about a second at each start. It starts from a copy of the shepherd's loader
// cache, bound read-only at PI_SHEPHERD_JITI_SEED: the copy is the sheep's own (the loader uses a
// cache only where it may write), and what it writes there never leaves its sandbox. One by one on
// this thread is the cheapest way measured: queued at once to node's file pool or made by a worker
// thread, the copies cost the start more.
if (process.env.PI_SHEPHERD_JITI_SEED) {
  const seed = process.env.PI_SHEPHERD_JITI_SEED;
  delete process.env.PI_SHEPHERD_JITI_SEED;
  try {
    const into = join(tmpdir(), "jiti");
    mkdirSync(into, { recursive: true });
    for (const name of readdirSync(seed).slice(0, 20_000)) {
      if (!/^[\w.+-]+\.[cm]?js$/.test(name)) continue;
      try {
        copyFileSync(join(seed, name), join(into, name), constants.COPYFILE_EXCL);
      } catch {}
    }
  } catch {}
}
try {
  process.chdir(spec.cwd);
} catch (e) {
  fail(`cannot enter ${spec.cwd}: ${e.message}`, 2);
}

if (here) {
  const [, script, ...args] = spec.argv;
  process.argv = [process.execPath, script, ...args];
  try {
    await import(pathToFileURL(script).href);
  } catch (e) {
    fail(`could not run ${script}: ${e?.stack ?? e}`, 1);
  }
  // pi names its process "pi"; the sheep's directory beside it tells a person (and a test
  // looking for leftovers) which sheep it is.
  process.title = `pi ${dirname(specPath)}`;
} else {
  // A piCommand that is not this node running a script: a child after all, whose end this
  // process mirrors (its code, or its very signal) so the multiplexer reports pi's own.
  const [cmd, ...args] = spec.argv;
  const child = spawn(cmd, args, { stdio: "inherit", env: process.env });
  // The terminal's keys are for pi, which shares this terminal; this process must outlive them.
  const quiet = () => {};
  for (const sig of ["SIGINT", "SIGQUIT", "SIGTSTP"]) process.on(sig, quiet);
  for (const sig of ["SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
  child.on("error", (e) => fail(`could not run ${cmd}: ${e.message}`, 127));
  child.on("exit", (code, signal) => {
    if (code !== null) process.exit(code);
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    setTimeout(() => process.exit(1), 1000).unref();
  });
}
