// One harness run, shared by `npm run bench` and bench/memory-overhead.mjs: the real `hands` bin
// reads a sample file `steps` times against the scripted model on loopback, and every request
// body it sent is checked afterwards (outside the timed path) the way a real server would.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeModel } from "./fake-model-server.mjs";

// The file every step reads: 60 lines of ordinary code, ~2.4 KB.
export const FILE_TEXT = Array.from(
  { length: 60 },
  (_, i) => `def function_${i}(x):  # line ${i + 1} of the sample\n`,
).join("");

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** The flags of every bench run of `hands`: JSON events, the scripted model, the workspace. */
export const handsFlags = (modelUrl, ws) => [
  "--json",
  "--quiet",
  "--base-url",
  modelUrl,
  "--model",
  "bench",
  "--api-key",
  "sk-bench",
  "--cwd",
  ws,
];

/**
 * Runs `bin` for `steps` read_file steps with `extra` flags. `probe` names a preload module
 * (`--import`) and the environment variable that tells it where to write; `readProbe` reads
 * that file before the workspace is removed. One invalid request body ends the bench (exit 1),
 * naming the run, the request and the error.
 */
export async function runHarness({ bin, steps, extra = [], probe, readProbe }) {
  const ws = mkdtempSync(join(tmpdir(), "hands-bench-"));
  writeFileSync(join(ws, "sample.py"), FILE_TEXT);
  const probeFile = join(ws, ".probe");
  const model = await startFakeModel({ steps, file: "sample.py" });
  const started = performance.now();
  const child = spawn(
    bin,
    [
      ...handsFlags(model.url, ws),
      "--max-steps",
      String(steps + 5),
      ...extra,
      "read sample.py over and over",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        HANDS_DATA_DIR: join(ws, ".data"),
        [probe.env]: probeFile,
        NODE_OPTIONS: `--import=${probe.module}`,
      },
    },
  );
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const code = await new Promise((r) => child.on("close", r));
  const wallMs = performance.now() - started;
  const firstRequestMs = model.firstRequestAt - started;
  await model.close();
  // Checked after the run (not timed), every body: a broken one fails the bench.
  const invalid = model.invalid();
  if (invalid.length > 0) {
    for (const r of invalid) console.error(`${steps}-step run: request #${r.request} is invalid: ${r.error}`);
    console.error(`bench failed: ${invalid.length} of ${model.requests} request bodies were invalid`);
    process.exit(1);
  }
  const result = JSON.parse(out.trim().split("\n").at(-1) ?? "{}");
  if (code !== 0 || result.status !== "done" || result.steps !== steps) {
    throw new Error(`bench run failed (exit ${code}, steps ${result.steps}): ${err.slice(-2000)}`);
  }
  const measured = readProbe(probeFile);
  rmSync(ws, { recursive: true, force: true });
  return { wallMs, firstRequestMs, bodies: model.requests, ...measured };
}
