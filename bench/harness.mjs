#!/usr/bin/env node
// `npm run bench`: the harness's own cost, whole process, against a scripted model on loopback.
//   per-step overhead = (T(200 read_file steps) − T(40)) / 160
//   launch → first model request, and peak RSS of the 200-step run.
// Median of --runs (default 7) runs each. Prints a table and JSON (--json).
// Then start-up beside pi and `node -e 0` (bench/startup.mjs; --startup-runs N, default 11;
// --no-pi leaves pi out, --no-startup skips it).
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { FILE_TEXT, median, runHarness } from "./harness-run.mjs";
import { measureStartup, printStartup } from "./startup.mjs";

const here = dirname(fileURLToPath(import.meta.url));
// The bin as users run it (its shebang sets node's flags).
const cli = join(here, "..", "packages", "cli", "bin", "hands.js");
const argv = process.argv.slice(2);
const runs = Number(argv[argv.indexOf("--runs") + 1] || 7) || 7;
const asJson = argv.includes("--json");
// --cli-args "…": extra flags for every run (e.g. "--no-memory" to compare).
const extraArgs = argv.includes("--cli-args")
  ? argv[argv.indexOf("--cli-args") + 1].split(" ").filter(Boolean)
  : [];

/** Request bodies checked over all runs (all valid, or the bench has exited). */
let bodiesChecked = 0;

async function runOnce(steps) {
  const run = await runHarness({
    bin: cli,
    steps,
    extra: extraArgs,
    probe: { module: join(here, "rss-probe.mjs"), env: "HANDS_BENCH_RSS_FILE" },
    readProbe: (file) => ({ rss: Number(readFileSync(file, "utf8")) }),
  });
  bodiesChecked += run.bodies;
  return { totalMs: run.wallMs, firstRequestMs: run.firstRequestMs, rss: run.rss };
}

const loadAtStart = loadavg()[0];
const short = [];
const long = [];
for (let i = 0; i < runs; i++) {
  // Interleave so machine noise hits both sizes alike.
  short.push(await runOnce(40));
  long.push(await runOnce(200));
}
const t40 = median(short.map((r) => r.totalMs));
const t200 = median(long.map((r) => r.totalMs));
const report = {
  runs,
  fileBytes: FILE_TEXT.length,
  t40Ms: +t40.toFixed(1),
  t200Ms: +t200.toFixed(1),
  perStepOverheadMs: +((t200 - t40) / 160).toFixed(3),
  firstRequestMs: +median([...short, ...long].map((r) => r.firstRequestMs)).toFixed(1),
  peakRssMb200: +(median(long.map((r) => r.rss)) / 2 ** 20).toFixed(1),
  bodiesChecked,
  invalidBodies: 0,
  /** 1-minute load average at the start and at the end (the machine is shared). */
  loadAverage: [+loadAtStart.toFixed(2), +loadavg()[0].toFixed(2)],
  node: process.version,
};
if (!argv.includes("--no-startup"))
  report.startup = await measureStartup({
    runs: Number(argv[argv.indexOf("--startup-runs") + 1] || 11) || 11,
    pi: !argv.includes("--no-pi"),
  });
if (asJson) console.log(JSON.stringify(report));
else {
  console.log(`runs per size:            ${runs} (median)`);
  console.log(`T(40 steps):              ${report.t40Ms} ms`);
  console.log(`T(200 steps):             ${report.t200Ms} ms`);
  console.log(`per-step overhead:        ${report.perStepOverheadMs} ms   (goal ≤ 2 ms)`);
  console.log(`launch → first request:   ${report.firstRequestMs} ms   (with the RSS probe; start-up below)`);
  console.log(`peak RSS, 200 steps:      ${report.peakRssMb200} MB   (goal ≤ 100 MB)`);
  console.log(`request bodies checked:   ${report.bodiesChecked}, invalid: 0`);
  console.log(`load average, start/end:  ${report.loadAverage.join(" / ")}`);
  if (report.startup) printStartup(report.startup);
}
