#!/usr/bin/env node
// A/B of the bwrap backend against another checkout, in one process and interleaved (A, B,
// B, A, …) so that a loaded machine weighs on both alike: session create (+ its first
// command), command round trips in the live session, one-shot runs; medians.
// `node bench/sandbox-ab.mjs /path/to/other/checkout [N=20]` (both built).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";

const other = process.argv[2];
if (!other) throw new Error("usage: node bench/sandbox-ab.mjs /path/to/other/checkout [N]");
const N = Number(process.argv[3] ?? 20);
const sides = {
  other: await import(resolve(other, "packages/sandbox/dist/index.js")),
  this: await import(new URL("../packages/sandbox/dist/index.js", import.meta.url).href),
};
const limits = { memoryBytes: 512 * 1024 * 1024, pids: 256, cpus: 1 };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const res = {};
const ws = {};
for (const name of Object.keys(sides)) {
  res[name] = { create: [], exec: [], once: [] };
  ws[name] = mkdtempSync(join(tmpdir(), `hands-ab-${name}-`));
}
for (let i = 0; i < N; i++) {
  const order = i % 2 ? ["other", "this"] : ["this", "other"];
  for (const name of order) {
    const M = sides[name];
    let t = performance.now();
    const sb = await M.BwrapSandbox.create({ workspace: ws[name], limits });
    await sb.exec("true");
    res[name].create.push(performance.now() - t);
    for (let j = 0; j < 5; j++) {
      t = performance.now();
      await sb.exec("true");
      res[name].exec.push(performance.now() - t);
    }
    await sb.destroy();
    t = performance.now();
    await M.runBwrapOnce({ workspace: ws[name], limits }, "true");
    res[name].once.push(performance.now() - t);
  }
}
for (const [name, r] of Object.entries(res)) {
  const m = Object.entries(r).map(([k, xs]) => `${k} ${median(xs).toFixed(2)} ms`);
  console.log(`${name.padEnd(5)} (n=${N}, exec n=${5 * N}): ${m.join(", ")}`);
}
for (const d of Object.values(ws)) rmSync(d, { recursive: true, force: true });
