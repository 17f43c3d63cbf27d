#!/usr/bin/env node
// `npm run bench`: the harness's own cost, whole process, against a scripted model on loopback.
//   per-step overhead = (T(200 read_file steps) − T(40)) / 160
//   launch → first model request, and peak RSS of the 200-step run.
// Median of --runs (default 7) runs each. Prints a table and JSON (--json).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeModel } from "./fake-model-server.mjs";

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

// The file every step reads: 60 lines of ordinary code, ~2.4 KB.
const FILE_TEXT = Array.from(
  { length: 60 },
  (_, i) => `def function_${i}(x):  # line ${i + 1} of the sample\n`,
).join("");

async function runOnce(steps) {
  const ws = mkdtempSync(join(tmpdir(), "hands-bench-"));
  writeFileSync(join(ws, "sample.py"), FILE_TEXT);
  const rssFile = join(ws, ".rss");
  const model = await startFakeModel({ steps, file: "sample.py" });
  const started = performance.now();
  const child = spawn(
    cli,
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
      "--max-steps",
      String(steps + 5),
      ...extraArgs,
      "read sample.py over and over",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        HANDS_DATA_DIR: join(ws, ".data"),
        HANDS_BENCH_RSS_FILE: rssFile,
        NODE_OPTIONS: `--import=${join(here, "rss-probe.mjs")}`,
      },
    },
  );
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const code = await new Promise((r) => child.on("close", r));
  const totalMs = performance.now() - started;
  const firstRequestMs = model.firstRequestAt - started;
  await model.close();
  const result = JSON.parse(out.trim().split("\n").at(-1) ?? "{}");
  if (code !== 0 || result.status !== "done" || result.steps !== steps) {
    throw new Error(`bench run failed (exit ${code}, steps ${result.steps}): ${err.slice(-2000)}`);
  }
  const rss = Number(readFileSync(rssFile, "utf8"));
  rmSync(ws, { recursive: true, force: true });
  return { totalMs, firstRequestMs, rss };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

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
  node: process.version,
};
if (asJson) console.log(JSON.stringify(report));
else {
  console.log(`runs per size:            ${runs} (median)`);
  console.log(`T(40 steps):              ${report.t40Ms} ms`);
  console.log(`T(200 steps):             ${report.t200Ms} ms`);
  console.log(`per-step overhead:        ${report.perStepOverheadMs} ms   (goal ≤ 2 ms)`);
  console.log(`launch → first request:   ${report.firstRequestMs} ms   (goal ≤ 300 ms)`);
  console.log(`peak RSS, 200 steps:      ${report.peakRssMb200} MB   (goal ≤ 100 MB)`);
}
