// Attack: the kernel interfaces a sandbox escape starts from. A probe inside each sandbox
// makes every denied system call with arguments that succeed without the filter (nested user
// namespaces, the keyring, perf, io_uring, the ptrace family, file handles, setuid modes) and
// reads the root-only /proc files; the program itself is checked call by call on the host.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import {
  ALLOWED_PERSONALITIES,
  type ArgCondition,
  DENIED_SYSCALLS,
  dockerSeccompProfile,
  EAFNOSUPPORT,
  maskedOutside,
  seccompProgram,
  syscallNumbers,
} from "../seccomp.js";
import { explicitlySkipped, makeSandbox, requireBackend, tempWorkspace } from "../testing.js";
import type { SandboxKind } from "../types.js";

// Each line: a call that works for an unprivileged process when nothing filters it.
const PROBE = String.raw`
import ctypes, os, errno, struct, socket, mmap
libc = ctypes.CDLL(None, use_errno=True)
sc = libc.syscall
sc.restype = ctypes.c_long
N = ${JSON.stringify(syscallNumbers() ?? {})}
def call(name, *args):
    ctypes.set_errno(0)
    r = sc(ctypes.c_long(N[name]), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return 0 if r >= 0 else ctypes.get_errno()
buf = ctypes.create_string_buffer(64)
iov = (ctypes.c_uint64 * 2)(ctypes.addressof(buf), 8)
pidfd = sc(ctypes.c_long(434), ctypes.c_long(os.getpid()), ctypes.c_long(0))  # pidfd_open
how = ctypes.create_string_buffer(struct.pack("QQQ", 0, 0, 0), 24)
handle = ctypes.create_string_buffer(struct.pack("II", 128, 0) + bytes(128), 136)
mount_id = ctypes.c_int(0)
attr = ctypes.create_string_buffer(struct.pack("IIQQQQQ", 1, 128, 0, 0, 0, 0, 0x60) + bytes(80), 128)  # software clock, user only
params = ctypes.create_string_buffer(120)
page = mmap.mmap(-1, 4096)
page_addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
nodes = ctypes.create_string_buffer(8)
def sock(family, kind=socket.SOCK_STREAM):
    try:
        socket.socket(family, kind).close()
        return 0
    except OSError as e:
        return e.errno
def persona(value):
    r = call("personality", value)
    call("personality", 0)
    return r
results = {
  "unshare(CLONE_NEWUSER)": call("unshare", 0x10000000),
  "clone(CLONE_NEWUSER)": call("clone", 0x10000000 | 17, 0, 0, 0, 0),
  "clone3": call("clone3", 0, 0),
  "keyctl": call("keyctl", 0, -4, 0),  # KEYCTL_GET_KEYRING_ID, the user keyring
  "add_key": call("add_key", ctypes.c_char_p(b"user"), ctypes.c_char_p(b"hands"), ctypes.c_char_p(b"x"), 1, -2),
  "perf_event_open": call("perf_event_open", attr, 0, -1, -1, 0),
  "io_uring_setup": call("io_uring_setup", 4, params),
  "ptrace(TRACEME)": call("ptrace", 0, 0, 0, 0),
  "process_vm_readv": call("process_vm_readv", os.getpid(), iov, 1, iov, 1, 0),
  "process_vm_writev": call("process_vm_writev", os.getpid(), iov, 1, iov, 1, 0),
  "pidfd_getfd": call("pidfd_getfd", pidfd, 0, 0),
  "kcmp": call("kcmp", os.getpid(), os.getpid(), 0, 0, 0),
  "name_to_handle_at": call("name_to_handle_at", -100, ctypes.c_char_p(b"/"), handle, ctypes.byref(mount_id), 0),
  "openat2": call("openat2", -100, ctypes.c_char_p(b"/"), how, 24),
  "userfaultfd(user mode)": call("userfaultfd", 1),
  "chmod 4755": (open("p1", "w").close(), call("fchmodat", -100, ctypes.c_char_p(b"p1"), 0o4755, 0))[1],
  "fchmod 2755": call("fchmod", os.open("p1", os.O_RDONLY), 0o2755),
  "open(O_CREAT, 4755)": call("openat", -100, ctypes.c_char_p(b"p2"), os.O_CREAT | os.O_WRONLY, 0o4755),
  "mkdir 2755": call("mkdirat", -100, ctypes.c_char_p(b"p3"), 0o2755),
  "mknod 4644": call("mknodat", -100, ctypes.c_char_p(b"p4"), 0o100000 | 0o4644, 0),
  "socket(AF_VSOCK)": sock(socket.AF_VSOCK),
  "socket(AF_VSOCK, DGRAM)": sock(socket.AF_VSOCK, socket.SOCK_DGRAM),
  "socket(AF_VSOCK | 1 << 32)": call("socket", (1 << 32) | 40, 1, 0),
  "personality(ADDR_NO_RANDOMIZE)": persona(0x0040000),
  "personality(READ_IMPLIES_EXEC)": persona(0x0400000),
  "personality(PER_BSD)": persona(0x0006),
  "mbind(MPOL_DEFAULT)": call("mbind", page_addr, 4096, 0, 0, 0, 0),
  "set_mempolicy(MPOL_DEFAULT)": call("set_mempolicy", 0, 0, 0),
  "move_pages(none)": call("move_pages", 0, 0, 0, 0, 0, 0),
  "migrate_pages(none)": call("migrate_pages", 0, 64, nodes, nodes),
}
allowed = {
  "chmod 0755": call("fchmodat", -100, ctypes.c_char_p(b"p1"), 0o755, 0),
  "open(O_CREAT, 0644)": call("openat", -100, ctypes.c_char_p(b"p5"), os.O_CREAT | os.O_WRONLY, 0o644),
  "clone(plain fork)": 0 if os.fork() == 0 and os._exit(0) is None else (os.wait(), 0)[1],
  "socket(AF_UNIX)": sock(socket.AF_UNIX),
  "socket(AF_INET)": sock(socket.AF_INET),
  "socketpair(AF_UNIX)": (socket.socketpair()[0].close(), 0)[1],
  "personality(PER_LINUX)": persona(0),
  "personality(PER_LINUX32)": persona(0x8),
  "personality(UNAME26)": persona(0x20000),
  "personality(PER_LINUX32 | UNAME26)": persona(0x20008),
  "personality(query)": persona(0xffffffff),
}
for k, v in results.items(): print("DENY", k, errno.errorcode.get(v, v))
for k, v in allowed.items(): print("ALLOW", k, errno.errorcode.get(v, v))
for f in ["timer_list", "slabinfo", "vmallocinfo", "sched_debug", "pagetypeinfo", "kpageflags"]:
    try:
        data = open("/proc/" + f, "rb").read(4096)
        print("PROC", f, "read" if data.strip(b"0 \n") else "empty")
    except OSError as e:
        print("PROC", f, errno.errorcode.get(e.errno, e.errno))
print("SECCOMP", open("/proc/self/status").read().split("Seccomp:")[1].split()[0])
`;

for (const kind of ["bwrap", "docker"] as SandboxKind[]) {
  describe(`security: syscall filter (${kind})`, { skip: explicitlySkipped(kind) }, () => {
    test("each denied call fails with EPERM/ENOSYS, ordinary calls work, root-only /proc is unreadable", async () => {
      await requireBackend(kind);
      const ws = await tempWorkspace();
      const sb = await makeSandbox(kind, ws.dir);
      try {
        const r = await sb.exec("python3 -", { stdin: PROBE, timeoutMs: 30_000 });
        assert.equal(r.exitCode, 0, r.stderr);
        const lines = r.stdout.trim().split("\n");
        const deny = lines.filter((l) => l.startsWith("DENY "));
        assert.equal(deny.length, 30, r.stdout);
        for (const l of deny)
          assert.match(
            l,
            l.includes("AF_VSOCK") ? / (EAFNOSUPPORT|EPERM)$/ : / (EPERM|ENOSYS)$/,
            `not denied: ${l}`,
          );
        assert.equal(lines.filter((x) => x.startsWith("ALLOW ")).length, 11, r.stdout);
        for (const l of lines.filter((x) => x.startsWith("ALLOW "))) assert.match(l, / 0$/, `refused: ${l}`);
        for (const l of lines.filter((x) => x.startsWith("PROC "))) assert.doesNotMatch(l, / read$/, l);
        assert.ok(lines.includes("SECCOMP 2"), r.stdout);
      } finally {
        await sb.destroy();
        await ws.cleanup();
      }
    });
  });
}

/** An argument value that meets the condition. */
function matching(c: ArgCondition): number {
  if ("mask" in c) return c.mask & -c.mask;
  if ("equals" in c) return c.equals;
  let v = 1;
  while (c.notIn.includes(v)) v++;
  return v;
}

/** Runs a seccomp program (classic BPF) on one call, as the kernel would. */
function runFilter(prog: Buffer, nr: number, args: number[], arch: number): number {
  const data = Buffer.alloc(64);
  data.writeUInt32LE(nr, 0);
  data.writeUInt32LE(arch >>> 0, 4);
  args.forEach((a, i) => {
    data.writeUInt32LE(a >>> 0, 16 + 8 * i);
  });
  let acc = 0;
  for (let pc = 0; pc < prog.length / 8; pc++) {
    const code = prog.readUInt16LE(pc * 8);
    const jt = prog.readUInt8(pc * 8 + 2);
    const jf = prog.readUInt8(pc * 8 + 3);
    const k = prog.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) acc = data.readUInt32LE(k);
    else if (code === 0x06) return k;
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x35) pc += acc >= k ? jt : jf;
    else if (code === 0x45) pc += (acc & k) !== 0 ? jt : jf;
    else throw new Error(`unknown instruction ${code}`);
  }
  throw new Error("fell off the end");
}

describe("security: the seccomp program", () => {
  const arch = process.arch === "arm64" ? 0xc00000b7 : 0xc000003e;
  const prog = seccompProgram();
  const nums = syscallNumbers();

  test("denies every listed call (with its argument conditions) and allows the rest", {
    skip: !prog && "unknown architecture",
  }, () => {
    assert.ok(prog && nums);
    let checked = 0;
    for (const rule of DENIED_SYSCALLS) {
      const nr: number | undefined = nums[rule.name];
      if (nr === undefined) continue;
      const hit = [0, 0, 0, 0, 0, 0];
      for (const c of rule.when ?? []) hit[c.arg] = matching(c);
      assert.equal(runFilter(prog, nr, hit, arch), 0x50000 | (rule.errno ?? 1), rule.name);
      if (rule.when)
        assert.equal(runFilter(prog, nr, [0, 0, 0, 0, 0, 0], arch), 0x7fff0000, `${rule.name} plain`);
      checked++;
    }
    assert.ok(checked > 50, `only ${checked} rules`);
    assert.equal(runFilter(prog, 0, [], arch), 0x7fff0000, "read");
    assert.equal(runFilter(prog, nums["openat"] ?? 0, [0, 0, 0o100, 0o644], arch), 0x7fff0000, "openat 0644");
    assert.equal(runFilter(prog, 0, [], 0x40000003), 0x50001, "a foreign ABI (i386)");
    if (process.arch === "x64") assert.equal(runFilter(prog, 0x40000000 + 2, [], arch), 0x50001, "x32 ABI");
  });

  test("the x86_64 numbers match the kernel headers", {
    skip: !existsSync("/usr/include/x86_64-linux-gnu/asm/unistd_64.h") && "no headers",
  }, () => {
    const h = readFileSync("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "utf8");
    const table: Record<string, number> = syscallNumbers("x64") ?? {};
    for (const [name, nr] of Object.entries(table)) {
      const m = new RegExp(`#define __NR_${name} (\\d+)`).exec(h);
      if (m) assert.equal(Number(m[1]), nr, name);
    }
  });

  test("the Docker profile carries the same rules", () => {
    const p = JSON.parse(dockerSeccompProfile() ?? "{}") as { syscalls: Array<{ names: string[] }> };
    const names = new Set(p.syscalls.flatMap((s) => s.names));
    for (const rule of DENIED_SYSCALLS) assert.ok(names.has(rule.name), rule.name);
  });

  // The values personality() and socket() are judged on, in both forms: the BPF program (low
  // 32 bits, what the kernel reads) and the Docker profile (libseccomp compares all 64 bits).
  const personalities = [
    ...ALLOWED_PERSONALITIES,
    0x40000,
    0x400000,
    0x6,
    0x1,
    0x7,
    0x9,
    0x10000,
    0x20009,
    0x28008,
    0x7fffffff,
    0xfffffffe,
    0x80000000,
    0xffff0000,
    0x0800000,
    0x20000000,
    ...Array.from({ length: 32 }, (_, b) => 2 ** b),
  ];
  const allowedPersonality = (v: number) => ALLOWED_PERSONALITIES.includes(v >>> 0);

  test("personality: only the values Docker allows; AF_VSOCK sockets refused (BPF program)", {
    skip: !prog && "unknown architecture",
  }, () => {
    assert.ok(prog && nums);
    for (const v of personalities)
      assert.equal(
        runFilter(prog, nums["personality"]!, [v], arch),
        allowedPersonality(v) ? 0x7fff0000 : 0x50001,
        `personality(0x${v.toString(16)})`,
      );
    for (const name of ["socket", "socketpair"]) {
      assert.equal(
        runFilter(prog, nums[name]!, [40, 1, 0], arch),
        0x50000 | EAFNOSUPPORT,
        `${name}(AF_VSOCK)`,
      );
      for (const family of [1, 2, 10, 16, 17, 41, 0x28 + 0x100])
        assert.equal(runFilter(prog, nums[name]!, [family, 1, 0], arch), 0x7fff0000, `${name}(${family})`);
    }
    for (const name of ["mbind", "set_mempolicy", "move_pages", "migrate_pages", "set_mempolicy_home_node"])
      assert.equal(runFilter(prog, nums[name]!, [0, 0, 0], arch), 0x50001, name);
  });

  test("personality and AF_VSOCK in the Docker profile: the same answers, high bits ignored as the kernel does", () => {
    const p = JSON.parse(dockerSeccompProfile() ?? "{}") as {
      syscalls: Array<{
        names: string[];
        errnoRet: number;
        args?: Array<{ index: number; value: number; valueTwo: number; op: string }>;
      }>;
    };
    /** libseccomp's verdict: the first rule whose every comparison holds (64-bit values). */
    const verdict = (name: string, args: bigint[]) => {
      for (const r of p.syscalls.filter((s) => s.names.includes(name))) {
        const holds = (r.args ?? []).every((a) => {
          assert.equal(a.op, "SCMP_CMP_MASKED_EQ");
          return ((args[a.index] ?? 0n) & BigInt(a.value)) === BigInt(a.valueTwo);
        });
        if (holds) return r.errnoRet;
      }
      return 0;
    };
    for (const v of personalities) {
      const want = allowedPersonality(v) ? 0 : 1;
      assert.equal(verdict("personality", [BigInt(v)]), want, `personality(0x${v.toString(16)})`);
      assert.equal(
        verdict("personality", [(1n << 32n) | BigInt(v)]),
        want,
        `personality(1 << 32 | 0x${v.toString(16)})`,
      );
    }
    assert.equal(verdict("socket", [40n, 1n]), EAFNOSUPPORT);
    assert.equal(verdict("socket", [(1n << 32n) | 40n, 1n]), EAFNOSUPPORT, "high bits do not hide AF_VSOCK");
    assert.equal(verdict("socket", [2n, 1n]), 0);
    assert.equal(verdict("socketpair", [40n, 1n]), EAFNOSUPPORT);
  });

  test("maskedOutside: exactly the numbers outside the list", () => {
    const pairs = maskedOutside(ALLOWED_PERSONALITIES);
    const outside = (v: number) => pairs.some(([m, x]) => (v & m) >>> 0 === x);
    for (const v of ALLOWED_PERSONALITIES) assert.equal(outside(v), false, `0x${v.toString(16)}`);
    for (let i = 0; i < 20_000; i++) {
      const v = (Math.random() * 2 ** 32) >>> 0;
      assert.equal(outside(v), !ALLOWED_PERSONALITIES.includes(v), `0x${v.toString(16)}`);
    }
    for (const v of personalities) assert.equal(outside(v), !allowedPersonality(v), `0x${v.toString(16)}`);
  });
});
