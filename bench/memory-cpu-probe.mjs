// Preloaded into the measured `hands` process (node --import) by bench/memory-overhead.mjs: on
// exit, writes the process's CPU time (user + system, ms) and peak RSS (bytes) as JSON to
// $HANDS_BENCH_CPU_FILE. CPU time moves far less with the machine's load than wall time does.
import { readFileSync, writeFileSync } from "node:fs";

const file = process.env.HANDS_BENCH_CPU_FILE;
if (file)
  process.on("exit", () => {
    const { user, system } = process.cpuUsage();
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    writeFileSync(
      file,
      JSON.stringify({ cpuMs: (user + system) / 1000, sysMs: system / 1000, rss: Number(kb ?? 0) * 1024 }),
    );
  });
