// The system calls sandboxed code may not make, as one list, and the two forms it is handed
// to the kernel in: a classic-BPF seccomp program (bubblewrap's --seccomp FD) and a Docker
// seccomp profile (the same rules; the container runs with nothing else to gain from them).
//
// Denied: nested user namespaces (the way to regain capabilities), mounting, the keyring,
// bpf, perf events, io_uring, the ptrace family (reading or steering another process: the
// way a planted process could forge a later command's result), kernel modules, kexec,
// reboot, swap, clocks, accounting, quotas, raw handles — and creating or chmod-ing a file
// with setuid/setgid bits, so nothing the sandbox leaves in the workspace can raise privileges.
// Also what Docker's default profile refuses and a sandbox has no use for: vsock sockets (a
// network namespace does not cover them: on a virtual machine they reach the host), NUMA memory
// policies (mbind, set_mempolicy, move_pages, migrate_pages: CAP_SYS_NICE in Docker), and
// personality() beyond the values Docker allows (ADDR_NO_RANDOMIZE turns off ASLR, for one).

export const EPERM = 1;
export const ENOSYS = 38;
export const EAFNOSUPPORT = 97;

const AF_VSOCK = 40;
/** The personality() values Docker's default profile allows: Linux, PER_LINUX32, UNAME26 and the query. */
export const ALLOWED_PERSONALITIES: readonly number[] = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];

const CLONE_NEWUSER = 0x10000000;
const O_CREAT = 0o100;
const O_TMPFILE_BIT = 0o20000000;
const S_ISUID = 0o4000;
const S_ISGID = 0o2000;

/**
 * A condition on one argument's low 32 bits (what the kernel reads of an int or unsigned int):
 * any of `mask`'s bits set; equal to `equals`; or none of `notIn`.
 */
export type ArgCondition =
  | { arg: number; mask: number }
  | { arg: number; equals: number }
  | { arg: number; notIn: readonly number[] };

export interface SyscallRule {
  name: string;
  /** All must hold for the call to be denied (none: always denied). */
  when?: ArgCondition[];
  errno?: number;
}

const always = (names: string[], errno = EPERM): SyscallRule[] => names.map((name) => ({ name, errno }));
const setidMode = (arg: number): ArgCondition => ({ arg, mask: S_ISUID | S_ISGID });
const creating = (arg: number): ArgCondition => ({ arg, mask: O_CREAT | O_TMPFILE_BIT });

export const DENIED_SYSCALLS: readonly SyscallRule[] = [
  // biome-ignore format: a list of names
  ...always([
    "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
    "fspick", "mount_setattr", "setns", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "ptrace", "process_vm_readv",
    "process_vm_writev", "pidfd_getfd", "kcmp", "init_module", "finit_module", "delete_module",
    "create_module", "query_module", "get_kernel_syms", "kexec_load", "kexec_file_load", "reboot",
    "swapon", "swapoff", "acct", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "iopl", "ioperm", "syslog", "lookup_dcookie", "open_by_handle_at", "name_to_handle_at",
    "quotactl", "quotactl_fd", "nfsservctl", "uselib", "userfaultfd", "vhangup", "_sysctl", "sysfs",
    "ustat",
  ]),
  // Flags and modes clone3/openat2 pass in memory, where a filter cannot look: ENOSYS makes
  // the C library fall back to clone/openat, whose arguments are checked below.
  ...always(["clone3", "openat2"], ENOSYS),
  ...always(["mbind", "set_mempolicy", "set_mempolicy_home_node", "move_pages", "migrate_pages"]),
  { name: "socket", when: [{ arg: 0, equals: AF_VSOCK }], errno: EAFNOSUPPORT },
  { name: "socketpair", when: [{ arg: 0, equals: AF_VSOCK }], errno: EAFNOSUPPORT },
  { name: "personality", when: [{ arg: 0, notIn: ALLOWED_PERSONALITIES }] },
  { name: "clone", when: [{ arg: 0, mask: CLONE_NEWUSER }] },
  { name: "unshare", when: [{ arg: 0, mask: CLONE_NEWUSER }] },
  { name: "chmod", when: [setidMode(1)] },
  { name: "fchmod", when: [setidMode(1)] },
  { name: "fchmodat", when: [setidMode(2)] },
  { name: "fchmodat2", when: [setidMode(2)] },
  { name: "open", when: [creating(1), setidMode(2)] },
  { name: "openat", when: [creating(2), setidMode(3)] },
  { name: "creat", when: [setidMode(1)] },
  { name: "mknod", when: [setidMode(1)] },
  { name: "mknodat", when: [setidMode(2)] },
  { name: "mkdir", when: [setidMode(1)] },
  { name: "mkdirat", when: [setidMode(2)] },
];

/** System call numbers (Linux UAPI) of the calls above, per architecture; absent: no such call. */
// biome-ignore format: a table
const X86_64: Record<string, number> = {
  open: 2, creat: 85, chmod: 90, fchmod: 91, mkdir: 83, mknod: 133, clone: 56, ptrace: 101,
  syslog: 103, uselib: 134, ustat: 136, sysfs: 139, vhangup: 153, pivot_root: 155, _sysctl: 156,
  adjtimex: 159, acct: 163, settimeofday: 164, mount: 165, umount2: 166, swapon: 167, swapoff: 168,
  reboot: 169, iopl: 172, ioperm: 173, create_module: 174, init_module: 175, delete_module: 176,
  get_kernel_syms: 177, query_module: 178, quotactl: 179, nfsservctl: 180, lookup_dcookie: 212,
  clock_settime: 227, kexec_load: 246, add_key: 248, request_key: 249, keyctl: 250, openat: 257,
  mkdirat: 258, mknodat: 259, fchmodat: 268, unshare: 272, perf_event_open: 298,
  name_to_handle_at: 303, open_by_handle_at: 304, clock_adjtime: 305, setns: 308,
  process_vm_readv: 310, process_vm_writev: 311, kcmp: 312, finit_module: 313,
  kexec_file_load: 320, bpf: 321, userfaultfd: 323, io_uring_setup: 425, io_uring_enter: 426,
  io_uring_register: 427, open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431,
  fsmount: 432, fspick: 433, clone3: 435, openat2: 437, pidfd_getfd: 438, mount_setattr: 442,
  quotactl_fd: 443, fchmodat2: 452, socket: 41, socketpair: 53, personality: 135, mbind: 237,
  set_mempolicy: 238, migrate_pages: 256, move_pages: 279, set_mempolicy_home_node: 450,
};

// biome-ignore format: a table
const AARCH64: Record<string, number> = {
  lookup_dcookie: 18, mknodat: 33, mkdirat: 34, umount2: 39, mount: 40, pivot_root: 41,
  nfsservctl: 42, fchmod: 52, fchmodat: 53, openat: 56, vhangup: 58, quotactl: 60, acct: 89,
  unshare: 97, kexec_load: 104, init_module: 105, delete_module: 106, clock_settime: 112,
  syslog: 116, ptrace: 117, reboot: 142, settimeofday: 170, adjtimex: 171, add_key: 217,
  request_key: 218, keyctl: 219, clone: 220, swapon: 224, swapoff: 225, perf_event_open: 241,
  name_to_handle_at: 264, open_by_handle_at: 265, clock_adjtime: 266, setns: 268,
  process_vm_readv: 270, process_vm_writev: 271, kcmp: 272, finit_module: 273, bpf: 280,
  userfaultfd: 282, kexec_file_load: 294, io_uring_setup: 425, io_uring_enter: 426,
  io_uring_register: 427, open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431,
  fsmount: 432, fspick: 433, clone3: 435, openat2: 437, pidfd_getfd: 438, mount_setattr: 442,
  quotactl_fd: 443, fchmodat2: 452, personality: 92, socket: 198, socketpair: 199, mbind: 235,
  set_mempolicy: 237, migrate_pages: 238, move_pages: 239, set_mempolicy_home_node: 450,
};

interface Arch {
  audit: number;
  numbers: Record<string, number>;
  docker: string;
  /** x86_64: numbers at or above this are the x32 ABI, denied outright. */
  x32Bit?: number;
}

const ARCHES: Record<string, Arch> = {
  x64: { audit: 0xc000003e, numbers: X86_64, docker: "SCMP_ARCH_X86_64", x32Bit: 0x40000000 },
  arm64: { audit: 0xc00000b7, numbers: AARCH64, docker: "SCMP_ARCH_AARCH64" },
};

export function syscallNumbers(arch = process.arch): Record<string, number> | undefined {
  return ARCHES[arch]?.numbers;
}

// Classic BPF (linux/filter.h, linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const OFF_NR = 0;
const OFF_ARCH = 4;
const argLow = (i: number) => 16 + 8 * i; // little-endian: the low half comes first

type Insn = [code: number, jt: number, jf: number, k: number];

/** The seccomp program for `arch` as bytes (struct sock_filter[]), or undefined if unknown. */
export function seccompProgram(arch = process.arch): Buffer | undefined {
  const a = ARCHES[arch];
  if (!a) return undefined;
  const p: Insn[] = [
    [LD_W_ABS, 0, 0, OFF_ARCH],
    [JEQ_K, 1, 0, a.audit],
    [RET_K, 0, 0, RET_ERRNO | EPERM], // another ABI (i386 on x86_64): nothing allowed
    [LD_W_ABS, 0, 0, OFF_NR],
  ];
  if (a.x32Bit !== undefined) p.push([JGE_K, 0, 1, a.x32Bit], [RET_K, 0, 0, RET_ERRNO | EPERM]);
  for (const rule of DENIED_SYSCALLS) {
    const nr = a.numbers[rule.name];
    if (nr === undefined) continue;
    const ret: Insn = [RET_K, 0, 0, RET_ERRNO | (rule.errno ?? EPERM)];
    const conds = rule.when ?? [];
    if (conds.length === 0) {
      p.push([JEQ_K, 0, 1, nr], ret);
      continue;
    }
    // Not this call: skip the block. A condition that does not hold jumps to the block's last
    // instruction, the reload of the call's number.
    const body: Array<[number, number | "fail", number | "fail", number]> = [];
    for (const c of conds) {
      body.push([LD_W_ABS, 0, 0, argLow(c.arg)]);
      if ("mask" in c) body.push([JSET_K, 0, "fail", c.mask]);
      else if ("equals" in c) body.push([JEQ_K, 0, "fail", c.equals]);
      else for (const v of c.notIn) body.push([JEQ_K, "fail", 0, v]);
    }
    body.push(ret);
    p.push([JEQ_K, 0, body.length + 1, nr]);
    body.forEach(([code, jt, jf, k], i) => {
      const fail = body.length - i - 1; // from the next instruction to the reload
      p.push([code, jt === "fail" ? fail : jt, jf === "fail" ? fail : jf, k]);
    });
    p.push([LD_W_ABS, 0, 0, OFF_NR]);
  }
  p.push([RET_K, 0, 0, RET_ALLOW]);
  const buf = Buffer.alloc(p.length * 8);
  p.forEach(([code, jt, jf, k], i) => {
    buf.writeUInt16LE(code, i * 8);
    buf.writeUInt8(jt, i * 8 + 2);
    buf.writeUInt8(jf, i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf;
}

const bits = (mask: number): number[] => {
  const out: number[] = [];
  for (let b = 1; b <= mask && b > 0; b *= 2) if (mask & b) out.push(b);
  return out;
};

/**
 * (mask, value) pairs such that a 32-bit number is outside `allowed` exactly when, for one of
 * them, number & mask === value: a walk down the bits from the top, one pair for each prefix no
 * allowed value has.
 */
export function maskedOutside(allowed: readonly number[]): Array<[mask: number, value: number]> {
  const out: Array<[number, number]> = [];
  const walk = (bit: number, prefixMask: number, prefix: number, set: number[]) => {
    const mask = (prefixMask | (1 << bit)) >>> 0;
    for (const b of [0, 1]) {
      const value = (prefix | (b << bit)) >>> 0;
      const below = set.filter((s) => (s & mask) >>> 0 === value);
      if (below.length === 0) out.push([mask, value]);
      else if (bit > 0) walk(bit - 1, mask, value, below);
    }
  };
  walk(
    31,
    0,
    0,
    allowed.map((v) => v >>> 0),
  );
  return out;
}

/** A condition as Docker comparisons, any one of which makes it hold. */
function dockerAlternatives(c: ArgCondition): Array<[mask: number, value: number]> {
  // Masked with 0xffffffff: Docker compares all 64 bits, the kernel reads the low 32.
  if ("mask" in c) return bits(c.mask).map((b) => [b, b]);
  if ("equals" in c) return [[0xffffffff, c.equals >>> 0]];
  return maskedOutside(c.notIn);
}

/**
 * The same rules as a Docker seccomp profile (JSON for `SecurityOpt: ["seccomp=…"]`). Docker
 * compares masked values for equality and allows one comparison per argument in a rule, so a
 * condition becomes one rule per alternative (a bit of the mask; a prefix outside the list).
 */
export function dockerSeccompProfile(arch = process.arch): string | undefined {
  const a = ARCHES[arch];
  if (!a) return undefined;
  const syscalls: object[] = [];
  for (const rule of DENIED_SYSCALLS) {
    const base = { names: [rule.name], action: "SCMP_ACT_ERRNO", errnoRet: rule.errno ?? EPERM };
    let combos: Array<Array<{ index: number; value: number; valueTwo: number; op: string }>> = [[]];
    for (const c of rule.when ?? [])
      combos = combos.flatMap((prev) =>
        dockerAlternatives(c).map(([mask, value]) => [
          ...prev,
          { index: c.arg, value: mask, valueTwo: value, op: "SCMP_CMP_MASKED_EQ" },
        ]),
      );
    for (const args of combos) syscalls.push(args.length > 0 ? { ...base, args } : base);
  }
  return JSON.stringify({ defaultAction: "SCMP_ACT_ALLOW", architectures: [a.docker], syscalls });
}
