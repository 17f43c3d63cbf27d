// Preloaded into the measured `hands` process (node --import) by bench/memory-overhead.mjs: on
// exit, writes the process's CPU time (user + system, ms) and peak RSS (bytes) as JSON to
// $HANDS_BENCH_CPU_FILE. CPU time moves far less with the machine's load than wall time does.
import { readFileSync, writeFileSync } from "node:fs";

const file = process.env.HANDS_BENCH_CPU_FILE;

/**
 * CPU time of the main thread alone (utime + stime of its /proc stat, in clock ticks of 10 ms):
 * the rest of the process's CPU is V8's helper threads (optimizing compiler, parallel GC) and
 * libuv's pool. Undefined where /proc is not there.
 */
function mainThreadMs() {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}
if (file)
  process.on("exit", () => {
    const { user, system } = process.cpuUsage();
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    writeFileSync(
      file,
      JSON.stringify({
        cpuMs: (user + system) / 1000,
        sysMs: system / 1000,
        mainMs: mainThreadMs(),
        rss: Number(kb ?? 0) * 1024,
      }),
    );
  });
