/**
 * The sandbox's seccomp program, run by a classic-BPF interpreter written here on the seccomp_data
 * the kernel would hand it: each refused call on each architecture, the ones it lets through, the
 * namespace flags of clone and unshare, clone3, personality, x32 and a foreign architecture. The
 * numbers below are written out again from the kernel's tables (syscall_64.tbl; asm-generic/unistd.h
 * for arm64), so a wrong number in src/sandbox/seccomp-syscalls.ts fails here.
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { encodeBpf, seccompInstructions, seccompProgram } from "../../../src/sandbox/seccomp.ts";
import { seccompFile } from "../../../src/sandbox/seccomp-file.ts";

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;
const KILL = 0x80000000;

const X86_64 = 0xc000003e;
const AARCH64 = 0xc00000b7;

/** Runs the program as the kernel does: A register, forward jumps, 32-bit loads from seccomp_data. */
function run(program: Buffer, call: { arch: number; nr: number; arg0?: bigint }): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(call.nr, 0);
  data.writeUInt32LE(call.arch, 4);
  data.writeBigUInt64LE(call.arg0 ?? 0n, 16);
  let a = 0;
  for (let pc = 0, steps = 0; pc < program.length / 8; pc++, steps++) {
    assert.ok(steps < 4096, "the program ends");
    const o = pc * 8;
    const code = program.readUInt16LE(o);
    const jt = program.readUInt8(o + 2);
    const jf = program.readUInt8(o + 3);
    const k = program.readUInt32LE(o + 4);
    if (code === 0x20) {
      assert.ok(k % 4 === 0 && k + 4 <= 64, `a load inside seccomp_data (${k})`);
      a = data.readUInt32LE(k);
    } else if (code === 0x15) pc += a === k ? jt : jf;
    else if (code === 0x45) pc += (a & k) >>> 0 !== 0 ? jt : jf;
    else if (code === 0x06) return k;
    else assert.fail(`opcode ${code.toString(16)} at ${pc} is not one this interpreter knows`);
  }
  return assert.fail("the program fell off its end");
}

// From the kernel's tables, written again here.
const DENIED: Record<"x86_64" | "aarch64", Record<string, number>> = {
  x86_64: {
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    kexec_load: 246,
    kexec_file_load: 320,
    init_module: 175,
    finit_module: 313,
    delete_module: 176,
    bpf: 321,
    perf_event_open: 298,
    userfaultfd: 323,
    keyctl: 250,
    add_key: 248,
    request_key: 249,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    open_tree_attr: 467,
    setns: 308,
    swapon: 167,
    swapoff: 168,
    reboot: 169,
    acct: 163,
    quotactl: 179,
    quotactl_fd: 443,
    syslog: 103,
    lookup_dcookie: 212,
    open_by_handle_at: 304,
    name_to_handle_at: 303,
    iopl: 172,
    ioperm: 173,
  },
  aarch64: {
    ptrace: 117,
    process_vm_readv: 270,
    process_vm_writev: 271,
    kexec_load: 104,
    kexec_file_load: 294,
    init_module: 105,
    finit_module: 273,
    delete_module: 106,
    bpf: 280,
    perf_event_open: 241,
    userfaultfd: 282,
    keyctl: 219,
    add_key: 217,
    request_key: 218,
    mount: 40,
    umount2: 39,
    pivot_root: 41,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    open_tree_attr: 467,
    setns: 268,
    swapon: 224,
    swapoff: 225,
    reboot: 142,
    acct: 89,
    quotactl: 60,
    quotactl_fd: 443,
    syslog: 116,
    lookup_dcookie: 18,
    open_by_handle_at: 265,
    name_to_handle_at: 264,
  },
};
/** Calls a sheep's work makes all the time: read, write, openat, execve, exit_group, socket, connect, wait4/waitid, kill, mmap, futex. */
const EVERYDAY = {
  x86_64: {
    read: 0,
    write: 1,
    openat: 257,
    execve: 59,
    exit_group: 231,
    socket: 41,
    connect: 42,
    wait4: 61,
    kill: 62,
    mmap: 9,
    futex: 202,
    fork: 57,
    vfork: 58,
  },
  aarch64: { read: 63, write: 64, openat: 56, execve: 221, exit_group: 94, socket: 198, connect: 203, wait4: 260, kill: 129, mmap: 222, futex: 98 },
};
const CALLS = {
  x86_64: { arch: X86_64, clone: 56, unshare: 272, clone3: 435, personality: 135 },
  aarch64: { arch: AARCH64, clone: 220, unshare: 97, clone3: 435, personality: 92 },
};
const CLONE_NEW = { time: 0x80n, ns: 0x20000n, cgroup: 0x2000000n, uts: 0x4000000n, ipc: 0x8000000n, user: 0x10000000n, pid: 0x20000000n, net: 0x40000000n };
// What glibc's pthread_create and fork ask of clone: no namespace.
const THREAD = 0x3d0f00n;
const FORK = 0x1200011n;

describe("the sandbox's seccomp program", () => {
  const p = seccompProgram();

  for (const arch of ["x86_64", "aarch64"] as const) {
    const c = CALLS[arch];
    it(`${arch}: every call of the deny list is refused with EPERM, whatever its arguments`, () => {
      for (const [name, nr] of Object.entries(DENIED[arch])) {
        assert.equal(run(p, { arch: c.arch, nr }), EPERM, `${name} (${nr})`);
        assert.equal(run(p, { arch: c.arch, nr, arg0: 0xffffffffffffffffn }), EPERM, `${name} (${nr}) with odd arguments`);
      }
    });

    it(`${arch}: everyday calls are allowed, and so is every number below 1024 outside the list`, () => {
      for (const [name, nr] of Object.entries(EVERYDAY[arch])) assert.equal(run(p, { arch: c.arch, nr }), ALLOW, name);
      const special = new Set([...Object.values(DENIED[arch]), c.clone, c.unshare, c.clone3, c.personality]);
      for (let nr = 0; nr < 1024; nr++) {
        if (!special.has(nr)) assert.equal(run(p, { arch: c.arch, nr }), ALLOW, `number ${nr}`);
      }
    });

    it(`${arch}: clone and unshare are refused only with a namespace flag (the low 32 bits); clone3 gets ENOSYS`, () => {
      assert.equal(run(p, { arch: c.arch, nr: c.clone, arg0: THREAD }), ALLOW, "a thread");
      assert.equal(run(p, { arch: c.arch, nr: c.clone, arg0: FORK }), ALLOW, "a fork");
      assert.equal(run(p, { arch: c.arch, nr: c.clone, arg0: FORK | (0xffffffffn << 32n) }), ALLOW, "high bits are no namespace");
      for (const [name, flag] of Object.entries(CLONE_NEW)) {
        // For clone the low byte is the exit signal: 0x80 there is no CLONE_NEWTIME (the kernel takes it from unshare and clone3 only).
        if (name !== "time") assert.equal(run(p, { arch: c.arch, nr: c.clone, arg0: FORK | flag }), EPERM, `clone with CLONE_NEW${name.toUpperCase()}`);
        assert.equal(run(p, { arch: c.arch, nr: c.unshare, arg0: flag }), EPERM, `unshare with CLONE_NEW${name.toUpperCase()}`);
      }
      // CLONE_FILES, CLONE_FS, CLONE_SYSVSEM: a process's own tables, no namespace.
      assert.equal(run(p, { arch: c.arch, nr: c.unshare, arg0: 0x400n | 0x200n | 0x40000n }), ALLOW);
      assert.equal(run(p, { arch: c.arch, nr: c.clone3 }), ENOSYS);
    });

    it(`${arch}: personality may only be asked (0xffffffff) or kept plain (0)`, () => {
      assert.equal(run(p, { arch: c.arch, nr: c.personality, arg0: 0n }), ALLOW);
      assert.equal(run(p, { arch: c.arch, nr: c.personality, arg0: 0xffffffffn }), ALLOW);
      // ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, PER_LINUX32.
      for (const x of [0x40000n, 0x400000n, 0x8n]) assert.equal(run(p, { arch: c.arch, nr: c.personality, arg0: x }), EPERM, `0x${x.toString(16)}`);
    });
  }

  it("x86_64: an x32 call (bit 0x40000000 of its number) kills the process, ptrace's and read's alike", () => {
    assert.equal(run(p, { arch: X86_64, nr: 0x40000000 + 521 }), KILL, "x32 ptrace");
    assert.equal(run(p, { arch: X86_64, nr: 0x40000000 }), KILL, "x32 read");
  });

  it("any other architecture is killed: i386 and arm32 compat calls, big-endian arm64, riscv64", () => {
    for (const arch of [0x40000003, 0x40000028, 0x000000b7, 0xc00000f3]) {
      for (const nr of [0, 26, 101, 117]) assert.equal(run(p, { arch, nr }), KILL, `arch 0x${arch.toString(16)} nr ${nr}`);
    }
  });

  it("is encoded in this machine's byte order, 8 bytes an instruction, within the kernel's 4096", () => {
    const insns = seccompInstructions();
    assert.ok(insns.length < 4096);
    assert.equal(p.length, insns.length * 8);
    assert.ok(p.equals(encodeBpf(insns)));
    const be = encodeBpf(insns, "BE");
    assert.equal(be.readUInt16BE(0), insns[0]!.code);
    assert.equal(be.readUInt32BE(4), insns[0]!.k);
  });
});

describe("the seccomp program's file", () => {
  it("is written 0600 in a 0700 directory of the state dir, named by its content, and written again when changed", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), "pi-shepherd-seccomp-"));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const path = seccompFile(dir);
    assert.match(path, new RegExp(`^${dir}/sandbox/seccomp-[0-9a-f]{16}\\.bpf$`));
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.equal((await stat(join(dir, "sandbox"))).mode & 0o777, 0o700);
    assert.ok((await import("node:fs")).readFileSync(path).equals(seccompProgram()));
    assert.equal(seccompFile(dir), path, "the same file next time");
    await writeFile(path, Buffer.alloc(seccompProgram().length));
    seccompFile(dir);
    assert.ok((await import("node:fs")).readFileSync(path).equals(seccompProgram()), "a changed program is put right");
    assert.deepEqual(await readdir(join(dir, "sandbox")), [path.split("/").at(-1)], "no temp file left");
  });
});
