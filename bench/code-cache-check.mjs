#!/usr/bin/env node
// What checking the V8 code cache costs the bin at each start (issue 23): the real bin
// (packages/cli/bin/hands.js), copied beside itself with its `verifiedCode` and `readOwnFile`
// timed, runs one task against the fake model server N times; each start reports the time spent
// reading the cache files (what the bin did before, too) and the rest of the check (the key and
// the MAC over the source and the code). Medians and minimums over the starts (the minimum is
// the start no other process interrupted, on a busy machine).
//
//   node bench/code-cache-check.mjs [--runs N]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeModel } from "./fake-model-server.mjs";
import { handsFlags, median } from "./harness-run.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, "..", "packages", "cli", "bin", "hands.js");
const argv = process.argv.slice(2);
const runs = Number(argv[argv.indexOf("--runs") + 1]) || 21;

/** The bin with its check timed: the copy sits in bin/ so it finds the same bundle and cache. */
function timedBin() {
  let text = readFileSync(BIN, "utf8");
  const wrap = (name) => {
    const at = `function ${name}(`;
    if (!text.includes(at)) throw new Error(`the bin has no ${name}(): update this bench`);
    text = text.replace(at, `function ${name}Timed(`);
    text += `\nfunction ${name}(...a) { const t = process.hrtime.bigint(); try { return ${name}Timed(...a); } finally { globalThis.__handsTimes.${name} += Number(process.hrtime.bigint() - t) / 1e6; } }\n`;
  };
  wrap("verifiedCode");
  wrap("readOwnFile");
  text = text.replace(
    '"use strict";',
    `"use strict";\nglobalThis.__handsTimes = { verifiedCode: 0, readOwnFile: 0 };\nprocess.on("exit", () => require("node:fs").writeFileSync(process.env.HANDS_BENCH_TIMES, JSON.stringify(globalThis.__handsTimes)));`,
  );
  const copy = join(dirname(BIN), `.bench-timed-${process.pid}.js`);
  writeFileSync(copy, text, { mode: 0o755 });
  return copy;
}

async function start(bin) {
  const ws = mkdtempSync(join(tmpdir(), "hands-cache-check-"));
  const model = await startFakeModel({ steps: 1, file: "unused" });
  const times = join(ws, ".times.json");
  try {
    const child = spawn(process.execPath, [bin, ...handsFlags(model.url, ws), "say done"], {
      cwd: ws,
      env: { ...process.env, HANDS_DATA_DIR: join(ws, ".data"), HANDS_BENCH_TIMES: times },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const code = await new Promise((r) => child.on("close", r));
    if (code !== 0 || JSON.parse(out.trim().split("\n").at(-1)).status !== "done")
      throw new Error(`hands failed (exit ${code}): ${out.slice(-300)}`);
    return JSON.parse(readFileSync(times, "utf8"));
  } finally {
    await model.close();
    rmSync(ws, { recursive: true, force: true });
  }
}

const bin = timedBin();
try {
  const load = loadavg()[0];
  await start(bin); // the cache made (or checked) once
  const samples = [];
  for (let i = 0; i < runs; i++) samples.push(await start(bin));
  const read = samples.map((s) => s.readOwnFile);
  const rest = samples.map((s) => s.verifiedCode - s.readOwnFile);
  const f = (xs) => `median ${median(xs).toFixed(3)} ms, min ${Math.min(...xs).toFixed(3)} ms`;
  console.log(`code cache check, ${runs} starts (one task each, launch → exit):`);
  console.log(`  reading the cache files and the key (the bin read the files before, too): ${f(read)}`);
  console.log(`  the MAC over source and code, and the rest of the check:                  ${f(rest)}`);
  console.log(`  load average, start/end: ${load.toFixed(2)} / ${loadavg()[0].toFixed(2)}`);
} finally {
  rmSync(bin, { force: true });
}
