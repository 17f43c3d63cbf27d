// Attack: the kernel interfaces a sandbox escape starts from. A probe inside each sandbox
// makes every denied system call with arguments that succeed without the filter (nested user
// namespaces, the keyring, perf, io_uring, the ptrace family, file handles, setuid modes) and
// reads the root-only /proc files; the program itself is checked call by call on the host.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { DENIED_SYSCALLS, dockerSeccompProfile, seccompProgram, syscallNumbers } from "../seccomp.js";
import { explicitlySkipped, makeSandbox, requireBackend, tempWorkspace } from "../testing.js";
import type { SandboxKind } from "../types.js";

// Each line: a call that works for an unprivileged process when nothing filters it.
const PROBE = String.raw`
import ctypes, os, errno, struct
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
}
allowed = {
  "chmod 0755": call("fchmodat", -100, ctypes.c_char_p(b"p1"), 0o755, 0),
  "open(O_CREAT, 0644)": call("openat", -100, ctypes.c_char_p(b"p5"), os.O_CREAT | os.O_WRONLY, 0o644),
  "clone(plain fork)": 0 if os.fork() == 0 and os._exit(0) is None else (os.wait(), 0)[1],
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
        assert.equal(deny.length, 20, r.stdout);
        for (const l of deny) assert.match(l, / (EPERM|ENOSYS)$/, `not denied: ${l}`);
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
      for (const c of rule.when ?? []) hit[c.arg] = c.mask & -c.mask;
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
});
