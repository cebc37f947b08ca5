/**
 * The sandbox's seccomp filter with real bubblewrap: the pane command a sandboxed sheep gets
 * (sandboxedPaneArgv, as the sheep files make it) runs a shell inside, which makes the refused calls
 * itself (perl's syscall() calls a number straight, no libc wrapper in the way) and the tools that
 * use them (unshare, strace), and still does ordinary work (sh, node with threads and
 * children, git). Without the filter (`--seccomp` gone: watched) ptrace, a new user namespace, a mount
 * in it, strace and an x32 call all succeed here.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { execa } from "execa";
import { sandboxedPaneArgv } from "../../src/sandbox/launch.ts";
import { checkBwrap } from "../../src/sandbox/probe.ts";
import { q } from "../support/escape.ts";

/** The kernel's numbers of what is tried, on this machine's architecture. */
const NR =
  process.arch === "x64"
    ? { ptrace: 101, keyctl: 250, bpf: 321, setns: 308, clone3: 435, unshare: 272, personality: 135, getpid: 39, mount: 165 }
    : process.arch === "arm64"
      ? { ptrace: 117, keyctl: 219, bpf: 280, setns: 268, clone3: 435, unshare: 97, personality: 92, getpid: 172, mount: 40 }
      : undefined;

/** perl prints what one syscall returned and its errno's number. */
const call = (nr: number, ...args: (number | string)[]) => `perl -e ${q(`$! = 0; my $r = syscall(${[nr, ...args].join(", ")}); print "$r ", $! + 0, "\\n"`)}`;

describe("a sandboxed sheep's seccomp filter, in real bubblewrap", { timeout: 120_000 }, () => {
  it("refuses ptrace, keyctl, bpf, setns, new namespaces, mounts, odd personalities and x32; sh, node and git still work", async (t) => {
    assert.ok(NR, `no syscall numbers for ${process.arch} in this test`);
    const probe = await checkBwrap();
    assert.ok(probe.ok && probe.path, `bubblewrap must run here: ${probe.problem}`);
    const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-seccomp-e2e-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const home = join(dir, "home");
    const agentDir = join(home, ".pi", "agent");
    const stateDir = join(agentDir, "pi-shepherd");
    const sheepDir = join(stateDir, "sheep", "a_1");
    const cwd = join(dir, "project");
    for (const d of [sheepDir, cwd]) await mkdir(d, { recursive: true, mode: 0o700 });

    const lines = [
      "export PATH=/usr/local/bin:/usr/bin:/bin",
      `echo "ptrace=$(${call(NR.ptrace, 0, 0, 0, 0)})"`,
      `echo "keyctl=$(${call(NR.keyctl, 0, -1, 0)})"`,
      `echo "bpf=$(${call(NR.bpf, 0, 0, 0)})"`,
      `echo "setns=$(${call(NR.setns, 0, 0)})"`,
      `echo "clone3=$(${call(NR.clone3, 0, 0)})"`,
      // CLONE_NEWUSER; CLONE_FILES is no namespace.
      `echo "unshare-user=$(${call(NR.unshare, 0x10000000)})"`,
      `echo "unshare-files=$(${call(NR.unshare, 0x400)})"`,
      // ADDR_NO_RANDOMIZE; asking (0xffffffff) is allowed.
      `echo "personality-set=$(${call(NR.personality, 0x40000)})"`,
      `echo "personality-ask=$(${call(NR.personality, "0xffffffff")})"`,
      ...(process.arch === "x64" ? [`${call(0x40000000 + NR.getpid)}; echo "x32=$?"`] : []),
      `if unshare -U true 2>/dev/null; then echo unshare-tool=ESCAPED; else echo unshare-tool=refused; fi`,
      // A user and mount namespace of its own, then a mount in it: each step refused (without the filter both succeed).
      `echo "userns-mount=$(perl -e ${q(`$! = 0; my $u = syscall(${NR.unshare}, 0x10000000 | 0x20000); my $e = $! + 0; my ($s, $d, $f) = ("none", "/mnt", "tmpfs"); $! = 0; my $m = syscall(${NR.mount}, $s, $d, $f, 0, 0); print "$u $e $m ", $! + 0`)})"`,
      `if strace -o /dev/null true 2>/dev/null; then echo strace=ESCAPED; else echo strace=refused; fi`,
      // The program's fd is bubblewrap's alone: closed once read.
      `if readlink /proc/$$/fd/3 >/dev/null 2>&1; then echo fd3=open; else echo fd3=closed; fi`,
      `echo "sh=$(sh -c 'echo works')"`,
      `echo "node=$(${q(process.execPath)} -e ${q(`const { Worker } = require("worker_threads"); const out = require("child_process").execFileSync("sh", ["-c", "echo child"]).toString().trim(); new Worker("require('worker_threads').parentPort.postMessage(1)", { eval: true }).on("message", () => console.log(out + "+thread"))`)})"`,
      `git init -q ${q(join(cwd, "repo"))} && git -C ${q(join(cwd, "repo"))} -c user.name=s -c user.email=s@x commit -q --allow-empty -m m && echo "git=$(git -C ${q(join(cwd, "repo"))} log --format=%s)"`,
    ];
    const argv = sandboxedPaneArgv({
      bwrap: probe.path,
      config: { settings: { default: "on" }, bwrap: async () => probe.path! },
      env: { HOME: home },
      agentDir,
      stateDir,
      sheepDir,
      sessionFile: join(sheepDir, "session.jsonl"),
      worktreesDir: join(stateDir, "worktrees"),
      cwd,
      argv: ["/bin/sh", "-c", lines.join("\n")],
      runs: [process.execPath],
    });
    assert.ok(argv.includes(join(stateDir, "sandbox", argv[4]!.split("/").at(-1)!)), "the program's file is in the state dir");
    const r = await execa(argv[0]!, argv.slice(1), { reject: false, timeout: 60_000, stdin: "ignore", env: { TERM: "dumb" }, extendEnv: false, cwd });
    const out = String(r.stdout);
    assert.equal(r.exitCode, 0, `${out}\n${r.stderr}`);
    const got = Object.fromEntries([...out.matchAll(/^([\w-]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
    const expected: Record<string, string> = {
      ptrace: "-1 1",
      keyctl: "-1 1",
      bpf: "-1 1",
      setns: "-1 1",
      clone3: "-1 38",
      "unshare-user": "-1 1",
      "unshare-files": "0 0",
      "personality-set": "-1 1",
      "personality-ask": "0 0",
      ...(process.arch === "x64" ? { x32: "159" } : {}),
      "unshare-tool": "refused",
      "userns-mount": "-1 1 -1 1",
      strace: "refused",
      fd3: "closed",
      sh: "works",
      node: "child+thread",
      git: "m",
    };
    assert.deepEqual(got, expected, out);
  });
});
