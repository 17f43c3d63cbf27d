#!/usr/bin/env node
// `node bench/memory-overhead.mjs`: what memory (on by default) adds to the harness per step, by
// wall time and by the process's own CPU time (steadier on a shared machine), against the same
// scripted model as `npm run bench`: per step = (T(200 read_file steps) − T(40)) / 160.
// Memory on and --no-memory runs are interleaved, so load hits both alike. --cli PATH measures
// another tree's bin (e.g. the code before a change) in the same interleaving as a third column
// (and with --cli-no-memory, that bin with --no-memory as a fourth).
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { median, runHarness } from "./harness-run.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const rounds = Number(opt("--rounds", 7)) || 7;
const other = opt("--cli", undefined);
// --cli-args "…": extra flags for the memory-on runs (e.g. "--context-budget 1000000").
const extraOn = opt("--cli-args", "").split(" ").filter(Boolean);
const cli = join(here, "..", "packages", "cli", "bin", "hands.js");
async function runOnce(bin, steps, extra) {
  const run = await runHarness({
    bin,
    steps,
    extra,
    probe: { module: join(here, "memory-cpu-probe.mjs"), env: "HANDS_BENCH_CPU_FILE" },
    readProbe: (file) => JSON.parse(readFileSync(file, "utf8")),
  });
  return {
    wallMs: run.wallMs,
    cpuMs: run.cpuMs,
    sysMs: run.sysMs,
    mainMs: run.mainMs,
    rss: run.rss,
    firstMs: run.firstRequestMs,
  };
}

const configs = [
  { name: "memory on", bin: cli, extra: extraOn },
  { name: "--no-memory", bin: cli, extra: ["--no-memory"] },
  ...(other ? [{ name: `memory on (${other})`, bin: other, extra: [] }] : []),
  // --cli-no-memory: the other tree's bin with --no-memory too (the base cost, before and after).
  ...(other && argv.includes("--cli-no-memory")
    ? [{ name: `--no-memory (${other})`, bin: other, extra: ["--no-memory"] }]
    : []),
];
const samples = new Map(configs.map((c) => [c.name, { 40: [], 200: [] }]));
const loadStart = loadavg()[0];
for (let r = 0; r < rounds; r++)
  for (const c of configs)
    for (const steps of [40, 200]) samples.get(c.name)[steps].push(await runOnce(c.bin, steps, c.extra));

const report = { rounds, loadAverage: [+loadStart.toFixed(2), +loadavg()[0].toFixed(2)], configs: {} };
for (const c of configs) {
  const s = samples.get(c.name);
  const per = (k) => +((median(s[200].map((x) => x[k])) - median(s[40].map((x) => x[k]))) / 160).toFixed(3);
  report.configs[c.name] = {
    wallPerStepMs: per("wallMs"),
    cpuPerStepMs: per("cpuMs"),
    /** Of which in the kernel (file writes, memory maps). */
    sysPerStepMs: per("sysMs"),
    /** The main thread's share (10 ms ticks: ±0.06 ms a step); the rest ran on V8's helper threads. */
    mainPerStepMs: s[200][0]?.mainMs === undefined ? undefined : per("mainMs"),
    cpu200Ms: +median(s[200].map((x) => x.cpuMs)).toFixed(0),
    peakRssMb200: +(median(s[200].map((x) => x.rss)) / 2 ** 20).toFixed(1),
    /** Launch → first model request, over all runs of this configuration. */
    firstRequestMs: +median([...s[40], ...s[200]].map((x) => x.firstMs)).toFixed(0),
  };
}
console.log(JSON.stringify(report, null, 2));
