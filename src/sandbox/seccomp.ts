/**
 * The seccomp filter of a sandboxed sheep, as the classic-BPF program bubblewrap reads from the fd
 * of its `--seccomp` (an array of struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}, in this
 * machine's byte order). Pure: the unit tests run it on every case. What it refuses, and why, is in
 * src/sandbox/seccomp-syscalls.ts; everything else is allowed.
 */
import { endianness } from "node:os";
import { CLONE_NEW_FLAGS, CLONE_NEW_FLAGS_OF_CLONE, SYSCALL_TABLES, X32_SYSCALL_BIT } from "./seccomp-syscalls.ts";

export interface BpfInsn {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

// The opcodes used here (linux/bpf_common.h, linux/filter.h).
export const BPF_LD_W_ABS = 0x20;
export const BPF_JEQ_K = 0x15;
export const BPF_JSET_K = 0x45;
export const BPF_RET_K = 0x06;

// Return values (linux/seccomp.h) and the errnos given.
export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;
export const EPERM = 1;
export const ENOSYS = 38;

// Where struct seccomp_data keeps what the filter reads: the call's number, its architecture, and the
// low 32 bits of its first argument (both architectures here are little-endian).
export const SECCOMP_DATA_NR = 0;
export const SECCOMP_DATA_ARCH = 4;
export const SECCOMP_DATA_ARG0_LOW = 16;

type Step =
  | { label: string }
  | { load: number }
  | { jeq: number; to: string }
  | { jset: number; to: string }
  | { jeqElse: number; yes: string; no: string }
  | { ret: number };

/**
 * The program. An architecture it has no table for is killed (the whole process, SIGSYS), and so is
 * an x32 call on x86_64: a call numbered by a table the deny list does not cover could be any call
 * (i386's ptrace is 26, x32's is 521), and no work of a sheep makes one. A kill is plain where
 * an EPERM for everything would look like a bug of the program that tried.
 */
export function seccompInstructions(): BpfInsn[] {
  const steps: Step[] = [{ load: SECCOMP_DATA_ARCH }];
  for (const t of SYSCALL_TABLES) steps.push({ jeq: t.auditArch, to: `arch-${t.name}` });
  steps.push({ ret: SECCOMP_RET_KILL_PROCESS });
  for (const t of SYSCALL_TABLES) {
    steps.push({ label: `arch-${t.name}` }, { load: SECCOMP_DATA_NR });
    if (t.x32) steps.push({ jset: X32_SYSCALL_BIT, to: "kill" });
    for (const nr of new Set(Object.values(t.denied))) steps.push({ jeq: nr, to: "eperm" });
    steps.push(
      { jeq: t.clone, to: "clone" },
      { jeq: t.unshare, to: "unshare" },
      { jeq: t.clone3, to: "enosys" },
      { jeq: t.personality, to: "personality" },
      { ret: SECCOMP_RET_ALLOW },
    );
  }
  steps.push(
    // Only the low 32 bits of the flags are read: every CLONE_NEW* flag is there, so high bits change nothing.
    { label: "clone" },
    { load: SECCOMP_DATA_ARG0_LOW },
    { jset: CLONE_NEW_FLAGS_OF_CLONE, to: "eperm" },
    { ret: SECCOMP_RET_ALLOW },
    { label: "unshare" },
    { load: SECCOMP_DATA_ARG0_LOW },
    { jset: CLONE_NEW_FLAGS, to: "eperm" },
    { ret: SECCOMP_RET_ALLOW },
    // personality takes an unsigned int: the kernel itself reads only these 32 bits.
    { label: "personality" },
    { load: SECCOMP_DATA_ARG0_LOW },
    { jeq: 0, to: "allow" },
    { jeqElse: 0xffffffff, yes: "allow", no: "eperm" },
    { label: "allow" },
    { ret: SECCOMP_RET_ALLOW },
    { label: "eperm" },
    { ret: SECCOMP_RET_ERRNO | EPERM },
    { label: "enosys" },
    { ret: SECCOMP_RET_ERRNO | ENOSYS },
    { label: "kill" },
    { ret: SECCOMP_RET_KILL_PROCESS },
  );
  return assemble(steps);
}

/** Labels become forward jump offsets (classic BPF jumps only forward, at most 255 instructions). */
function assemble(steps: readonly Step[]): BpfInsn[] {
  const at = new Map<string, number>();
  let n = 0;
  for (const s of steps) {
    if ("label" in s) at.set(s.label, n);
    else n++;
  }
  const out: BpfInsn[] = [];
  const offset = (label: string) => {
    const target = at.get(label);
    if (target === undefined) throw new Error(`seccomp program: no label ${label}`);
    const d = target - (out.length + 1);
    if (d < 0 || d > 255) throw new Error(`seccomp program: jump to ${label} out of reach (${d})`);
    return d;
  };
  for (const s of steps) {
    if ("label" in s) continue;
    if ("load" in s) out.push({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: s.load });
    else if ("jeq" in s) out.push({ code: BPF_JEQ_K, jt: offset(s.to), jf: 0, k: s.jeq >>> 0 });
    else if ("jset" in s) out.push({ code: BPF_JSET_K, jt: offset(s.to), jf: 0, k: s.jset >>> 0 });
    else if ("jeqElse" in s) out.push({ code: BPF_JEQ_K, jt: offset(s.yes), jf: offset(s.no), k: s.jeqElse >>> 0 });
    else out.push({ code: BPF_RET_K, jt: 0, jf: 0, k: s.ret >>> 0 });
  }
  return out;
}

/** The program as bubblewrap reads it: 8 bytes an instruction, in this machine's byte order. */
export function encodeBpf(insns: readonly BpfInsn[], order: "LE" | "BE" = endianness()): Buffer {
  const b = Buffer.alloc(insns.length * 8);
  insns.forEach((i, n) => {
    const o = n * 8;
    if (order === "LE") {
      b.writeUInt16LE(i.code, o);
      b.writeUInt32LE(i.k, o + 4);
    } else {
      b.writeUInt16BE(i.code, o);
      b.writeUInt32BE(i.k, o + 4);
    }
    b.writeUInt8(i.jt, o + 2);
    b.writeUInt8(i.jf, o + 3);
  });
  return b;
}

let program: Buffer | undefined;
/** The encoded program, made once per process. */
export function seccompProgram(): Buffer {
  program ??= encodeBpf(seccompInstructions());
  return program;
}
