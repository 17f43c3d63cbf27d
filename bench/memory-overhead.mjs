#!/usr/bin/env node
// `node bench/memory-overhead.mjs`: what memory (on by default) adds to the harness per step, by
// wall time and by the process's own CPU time (steadier on a shared machine), against the same
// scripted model as `npm run bench`: per step = (T(200 read_file steps) − T(40)) / 160.
// Memory on and --no-memory runs are interleaved, so load hits both alike. --cli PATH measures
// another tree's bin (e.g. the code before a change) in the same interleaving as a third column.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeModel } from "./fake-model-server.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const rounds = Number(opt("--rounds", 7)) || 7;
const other = opt("--cli", undefined);
// --cli-args "…": extra flags for the memory-on runs (e.g. "--context-budget 1000000").
const extraOn = opt("--cli-args", "").split(" ").filter(Boolean);
const cli = join(here, "..", "packages", "cli", "bin", "hands.js");
const FILE_TEXT = Array.from(
  { length: 60 },
  (_, i) => `def function_${i}(x):  # line ${i + 1} of the sample\n`,
).join("");

async function runOnce(bin, steps, extra) {
  const ws = mkdtempSync(join(tmpdir(), "hands-memoh-"));
  writeFileSync(join(ws, "sample.py"), FILE_TEXT);
  const probe = join(ws, ".cpu");
  const model = await startFakeModel({ steps, file: "sample.py" });
  const started = performance.now();
  const child = spawn(
    bin,
    [
      "--json",
      "--quiet",
      "--base-url",
      model.url,
      "--model",
      "bench",
      "--api-key",
      "sk-bench",
      "--cwd",
      ws,
    ].concat(["--max-steps", String(steps + 5), ...extra, "read sample.py over and over"]),
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        HANDS_DATA_DIR: join(ws, ".data"),
        HANDS_BENCH_CPU_FILE: probe,
        NODE_OPTIONS: `--import=${join(here, "memory-cpu-probe.mjs")}`,
      },
    },
  );
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.resume();
  const code = await new Promise((r) => child.on("close", r));
  const wallMs = performance.now() - started;
  await model.close();
  const invalid = model.invalid();
  const result = JSON.parse(out.trim().split("\n").at(-1) ?? "{}");
  if (code !== 0 || result.status !== "done" || result.steps !== steps || invalid.length)
    throw new Error(`run failed (exit ${code}, ${result.steps} steps, ${invalid.length} invalid bodies)`);
  const { cpuMs, sysMs, rss } = JSON.parse(readFileSync(probe, "utf8"));
  rmSync(ws, { recursive: true, force: true });
  return { wallMs, cpuMs, sysMs, rss };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const configs = [
  { name: "memory on", bin: cli, extra: extraOn },
  { name: "--no-memory", bin: cli, extra: ["--no-memory"] },
  ...(other ? [{ name: `memory on (${other})`, bin: other, extra: [] }] : []),
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
    cpu200Ms: +median(s[200].map((x) => x.cpuMs)).toFixed(0),
    peakRssMb200: +(median(s[200].map((x) => x.rss)) / 2 ** 20).toFixed(1),
  };
}
console.log(JSON.stringify(report, null, 2));
