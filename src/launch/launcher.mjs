#!/usr/bin/env node
// Runs one sheep's pi from its launch spec. The pane's shell types only
// `'<node>' '<this file>' '<spec.json>'`; everything else (argv, env, cwd) comes from the
// private spec file, so no user text is ever parsed by a shell. Plain JS with node built-ins
// only, so any node can run it without a loader.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const specPath = process.argv[2];
if (!specPath) {
  process.stderr.write("pi-shepherd launcher: missing spec path\n");
  process.exit(2);
}
const spec = JSON.parse(readFileSync(specPath, "utf8"));

// Set when the pane itself goes away: the shepherd closed it and may already have removed the
// sheep's files, so nothing is written back.
let paneGone = false;

function writeExit(code, signal) {
  if (paneGone || !existsSync(specPath)) return;
  const tmp = join(dirname(spec.exitFile), `.exit-${process.pid}.tmp`);
  writeFileSync(tmp, JSON.stringify({ code, signal, at: new Date().toISOString() }), { mode: 0o600 });
  renameSync(tmp, spec.exitFile);
}

// Ctrl+C in the pane is meant for pi, which shares our terminal; the launcher must outlive it.
for (const sig of ["SIGINT", "SIGQUIT", "SIGTSTP"]) process.on(sig, () => {});

const [cmd, ...args] = spec.argv;
const child = spawn(cmd, args, { cwd: spec.cwd, env: { ...process.env, ...spec.env }, stdio: "inherit" });
child.on("error", (err) => {
  process.stderr.write(`pi-shepherd launcher: could not run ${cmd}: ${err.message}\n`);
  writeExit(127, null);
  process.exit(127);
});
child.on("exit", (code, signal) => {
  writeExit(code, signal);
  process.stderr.write(`\n[pi-shepherd] pi exited (${signal ?? code}).\n`);
  process.exit(code ?? 1);
});
for (const sig of ["SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    paneGone = true;
    child.kill(sig);
  });
}
