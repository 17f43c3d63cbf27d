#!/usr/bin/env node
// Memory speed: adding a chunk (p50, goal ≤ 1 ms), budgeted retrieval with 100,000 chunks
// stored (p95, goal ≤ 20 ms), and one step's context assembly (goal ≤ 5 ms).
//   npm run bench:memory-speed -- [--chunks 100000] [--json]
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ContextAssembler, Memory } from "@hands/memory";

const argv = process.argv.slice(2);
const N = Number(argv[argv.indexOf("--chunks") + 1]) || 100_000;
const asJson = argv.includes("--json");
const dir = mkdtempSync(join(tmpdir(), "hands-mem-speed-"));
// The machine may be shared: the 1-minute load average at the start and end goes in the report.
const loadBefore = loadavg()[0];

// Deterministic text with a realistic vocabulary: Zipf-distributed over 30,000 terms (words,
// identifiers, paths, numbers), as tool outputs and notes of coding sessions are.
let seed = 7;
const rnd = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const SYL = [
  "ka",
  "ro",
  "mi",
  "ten",
  "sa",
  "lo",
  "ver",
  "di",
  "on",
  "pa",
  "ex",
  "ul",
  "ti",
  "gra",
  "ne",
  "fo",
];
const word = () =>
  Array.from({ length: 2 + Math.floor(rnd() * 3) }, () => SYL[Math.floor(rnd() * SYL.length)]).join("");
const VOCAB = Array.from({ length: 30_000 }, (_, i) => {
  const r = i % 10;
  if (r === 7) return `${word()}${word()[0].toUpperCase()}${word()}`;
  if (r === 8) return `src/${word()}/${word()}.ts`;
  if (r === 9) return String(Math.floor(rnd() * 100000));
  return word();
});
// Zipf(1.07) by inverse CDF over precomputed cumulative weights.
const CDF = [];
{
  let acc = 0;
  for (let i = 0; i < VOCAB.length; i++) {
    acc += 1 / (i + 1) ** 1.07;
    CDF.push(acc);
  }
  for (let i = 0; i < CDF.length; i++) CDF[i] /= acc;
}
const zipf = () => {
  const x = rnd();
  let lo = 0;
  let hi = CDF.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CDF[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return VOCAB[lo];
};
const text = () => Array.from({ length: 10 + Math.floor(rnd() * 70) }, zipf).join(" ");
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const round = (x) => Math.round(x * 1000) / 1000;

// --db FILE keeps the loaded store between runs (it is reused when it already holds N chunks).
const dbArg = argv.includes("--db") ? argv[argv.indexOf("--db") + 1] : undefined;
const memory = new Memory({ path: dbArg ?? join(dir, "speed.db"), scope: "bench" });
const preloaded = memory.store.count() >= N;
const types = ["tool_result", "tool_call", "agent_response", "user_input", "thought"];
const addMs = [];
const t0 = performance.now();
for (let i = 0; i < (preloaded ? 0 : N); i++) {
  memory.step = i;
  const content = text();
  const t = performance.now();
  await memory.add({ type: types[i % types.length], content });
  addMs.push(performance.now() - t);
}
const loadS = (performance.now() - t0) / 1000;

// The same queries whether the store was just loaded or reused.
seed = 99;
// Warm-up (JIT, statement cache, the in-memory bit index): 20 queries, not timed.
for (let q = 0; q < 20; q++)
  await memory.retrieve(Array.from({ length: 4 }, zipf).join(" "), { budget: 2000, touch: false });
const retrieveMs = [];
for (let q = 0; q < 200; q++) {
  const query = Array.from({ length: 3 + (q % 5) }, zipf).join(" ");
  const t = performance.now();
  await memory.retrieve(query, { budget: 2000, touch: false });
  retrieveMs.push(performance.now() - t);
}
memory.close();

// Context assembly: a 200-step session, timing each step's assemble().
const m2 = new Memory({ path: join(dir, "assembly.db"), scope: "assembly" });
const asm = new ContextAssembler(m2, { budget: 8000 });
const history = [
  { role: "system", content: "You are a coding agent." },
  { role: "user", content: "Refactor the parser and keep the tests green." },
];
const assembleMs = [];
const ingestMs = [];
for (let s = 1; s <= 200; s++) {
  const id = `c${s}`;
  history.push({
    role: "assistant",
    content: "",
    toolCalls: [{ id, name: "read_file", arguments: `{"path":"src/m${s}.ts"}` }],
  });
  history.push({
    role: "tool",
    toolCallId: id,
    name: "read_file",
    content: Array.from({ length: 40 }, text).join("\n"),
  });
  const t = performance.now();
  await asm.assemble(history, s);
  assembleMs.push(performance.now() - t);
  // The step's own messages are stored after the request goes out; timed on their own.
  await asm.flush();
  ingestMs.push(asm.ingestMs);
}
m2.close();
rmSync(dir, { recursive: true, force: true });

const report = {
  chunks: N,
  loadAverage: [loadBefore, loadavg()[0]].map((x) => Math.round(x * 100) / 100),
  loadSeconds: round(loadS),
  add: preloaded
    ? "not measured (store reused)"
    : { p50Ms: round(pct(addMs, 50)), p95Ms: round(pct(addMs, 95)), goalP50Ms: 1 },
  retrieve: {
    budget: 2000,
    p50Ms: round(pct(retrieveMs, 50)),
    p95Ms: round(pct(retrieveMs, 95)),
    goalP95Ms: 20,
  },
  assemble: {
    steps: 200,
    p50Ms: round(pct(assembleMs, 50)),
    p95Ms: round(pct(assembleMs, 95)),
    maxMs: round(Math.max(...assembleMs)),
    goalMs: 5,
    ingestP50Ms: round(pct(ingestMs, 50)),
    ingestP95Ms: round(pct(ingestMs, 95)),
  },
};
if (asJson) console.log(JSON.stringify(report, null, 2));
else {
  console.log(
    `memory speed, ${N} chunks stored (load ${report.loadSeconds} s; load average ${report.loadAverage.join(" → ")})`,
  );
  if (!preloaded)
    console.log(`add chunk       p50 ${report.add.p50Ms} ms  p95 ${report.add.p95Ms} ms   (goal p50 ≤ 1 ms)`);
  console.log(
    `retrieve 2000t  p50 ${report.retrieve.p50Ms} ms  p95 ${report.retrieve.p95Ms} ms   (goal p95 ≤ 20 ms)`,
  );
  console.log(
    `assemble step   p50 ${report.assemble.p50Ms} ms  p95 ${report.assemble.p95Ms} ms  max ${report.assemble.maxMs} ms   (goal ≤ 5 ms)`,
  );
  console.log(
    `  + storing the step's messages, after the request is sent: p50 ${report.assemble.ingestP50Ms} ms  p95 ${report.assemble.ingestP95Ms} ms`,
  );
}
