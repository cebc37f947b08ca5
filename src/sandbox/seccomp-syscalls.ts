/**
 * The system calls a sandboxed sheep's seccomp filter refuses, by their numbers on each architecture
 * it knows: x86_64 (the kernel's arch/x86/entry/syscalls/syscall_64.tbl) and aarch64 (the generic
 * table, include/uapi/asm-generic/unistd.h, which arm64 uses). A number is only meaningful with its
 * architecture: the filter checks the architecture first (src/sandbox/seccomp.ts).
 */

/** The kernel's AUDIT_ARCH_* values a filter sees in seccomp_data.arch. */
export const AUDIT_ARCH_X86_64 = 0xc000003e;
export const AUDIT_ARCH_AARCH64 = 0xc00000b7;

/** On x86_64, a number with this bit set is an x32 call: a table of its own, which the list below does not cover. */
export const X32_SYSCALL_BIT = 0x40000000;

export interface SyscallTable {
  name: "x86_64" | "aarch64";
  auditArch: number;
  /** Refused with EPERM whatever their arguments: no coding agent's work needs them, and each opens the kernel wide. */
  denied: Readonly<Record<string, number>>;
  /** Refused with EPERM only when its flags (argument 0) ask for a new namespace. */
  clone: number;
  unshare: number;
  /** Refused with ENOSYS: its flags are in a struct a filter cannot read, and libc falls back to clone on ENOSYS. */
  clone3: number;
  /** Allowed only to ask (0xffffffff) or to keep the plain Linux personality (0). */
  personality: number;
  /** Whether x32 numbers must be refused (x86_64 only). */
  x32: boolean;
}

// Each group says why: a sheep runs git, node, compilers and tests, none of which needs any of these.
const X86_64: Record<string, number> = {
  // Reading or writing another process's memory, or tracing it.
  ptrace: 101,
  process_vm_readv: 310,
  process_vm_writev: 311,
  // Loading kernels and kernel code.
  kexec_load: 246,
  kexec_file_load: 320,
  init_module: 175,
  finit_module: 313,
  delete_module: 176,
  // Large kernel surfaces that sandbox escapes have used.
  bpf: 321,
  perf_event_open: 298,
  userfaultfd: 323,
  // The kernel keyring: shared beyond the sandbox.
  keyctl: 250,
  add_key: 248,
  request_key: 249,
  // Mounts, old and new API: what hides the secrets must stay.
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
  // Joining another namespace.
  setns: 308,
  // The machine's own state.
  swapon: 167,
  swapoff: 168,
  reboot: 169,
  acct: 163,
  quotactl: 179,
  quotactl_fd: 443,
  syslog: 103,
  lookup_dcookie: 212,
  // Opening a file by handle walks around the mounts.
  open_by_handle_at: 304,
  name_to_handle_at: 303,
  // Raw I/O ports.
  iopl: 172,
  ioperm: 173,
};

const AARCH64: Record<string, number> = {
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
  // No iopl or ioperm on arm64.
};

export const SYSCALL_TABLES: readonly SyscallTable[] = [
  { name: "x86_64", auditArch: AUDIT_ARCH_X86_64, denied: X86_64, clone: 56, unshare: 272, clone3: 435, personality: 135, x32: true },
  { name: "aarch64", auditArch: AUDIT_ARCH_AARCH64, denied: AARCH64, clone: 220, unshare: 97, clone3: 435, personality: 92, x32: false },
];

/** Every CLONE_NEW* flag (linux/sched.h): time, mount, cgroup, UTS, IPC, user, PID, network. */
export const CLONE_NEW_FLAGS = 0x00000080 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;
/** For clone the low byte is the child's exit signal, so CLONE_NEWTIME (0x80) is no flag there. */
export const CLONE_NEW_FLAGS_OF_CLONE = CLONE_NEW_FLAGS & ~0xff;
