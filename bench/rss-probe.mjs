// Preloaded into the measured `hands` process (node --import): on exit, writes its peak
// RSS in bytes to $HANDS_BENCH_RSS_FILE. Keeps measurement code out of the product.
// On Linux it reads VmHWM, the peak of this process's own address space: getrusage's maxRSS
// also counts the pre-exec copy of the parent that spawned it (fork), so a benchmark holding
// memory of its own (the saved request bodies) would inflate the figure.
import { readFileSync, writeFileSync } from "node:fs";

function peakRss() {
  try {
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    if (kb) return Number(kb) * 1024;
  } catch {
    // not Linux: fall back to getrusage
  }
  return process.resourceUsage().maxRSS * 1024;
}

const file = process.env.HANDS_BENCH_RSS_FILE;
if (file) process.on("exit", () => writeFileSync(file, String(peakRss())));
