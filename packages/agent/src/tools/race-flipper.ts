// A real attacker for the race tests: a separate process that swaps pairs of paths with
// renameat2(RENAME_EXCHANGE) in a tight loop (python3 + ctypes, so no compiler is needed).
// Each exchange is atomic, so at every instant each name is one of the two things, and a tool
// that checks a path and then uses it by name again can be sent to the other one.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";

const FLIPPER = String.raw`
import ctypes, os, platform, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
try:
    fn = libc.renameat2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    def exchange(a, b): return fn(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
except AttributeError:  # glibc < 2.28: the raw system call
    nr = {"x86_64": 316, "aarch64": 276}[platform.machine()]
    def exchange(a, b): return libc.syscall(nr, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
args = [a.encode() for a in sys.argv[1:]]
pairs = list(zip(args[0::2], args[1::2]))
counts = [0] * len(pairs)
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
for i, (a, b) in enumerate(pairs):
    for _ in range(2):  # there and back: each pair works, and starts as it was found
        if exchange(a, b) != 0:
            sys.stderr.write("renameat2 failed: " + os.strerror(ctypes.get_errno()) + "\n")
            sys.exit(2)
        counts[i] += 1
sys.stdout.write("ready\n")
sys.stdout.flush()
while not stop:
    for i, (a, b) in enumerate(pairs):
        exchange(a, b)
        counts[i] += 1
# Leave every pair as it was found.
for i, (a, b) in enumerate(pairs):
    if counts[i] % 2:
        exchange(a, b)
        counts[i] += 1
sys.stdout.write(str(sum(counts)) + "\n")
`;

export interface Flipper {
  /** Stops the loop; resolves to the number of exchanges made (every pair is left as found). */
  stop(): Promise<number>;
}

/** Starts swapping each [a, b] pair; resolves once the first exchange of every pair worked. */
export async function startFlipper(pairs: [string, string][]): Promise<Flipper> {
  const child: ChildProcess = spawn("python3", ["-c", FLIPPER, ...pairs.flat()], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    err += d;
  });
  const exited = once(child, "exit");
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (out.includes("ready\n")) resolve();
    };
    child.stdout?.on("data", check);
    exited.then(() => reject(new Error(`the flipper exited early: ${err || out}`)), reject);
    child.on("error", reject);
  });
  return {
    async stop() {
      child.kill("SIGTERM");
      await exited;
      const n = Number(out.split("\n").filter(Boolean).pop());
      if (!Number.isFinite(n)) throw new Error(`the flipper did not report: ${err || out}`);
      return n;
    },
  };
}
