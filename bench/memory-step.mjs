#!/usr/bin/env node
// `node bench/memory-step.mjs`: what memory itself costs per step, in-process — no model server,
// agent loop or request bodies, so it moves far less with the machine's load than
// bench/memory-overhead.mjs. The workload is `npm run bench`'s: 200 steps of read_file on the
// same 60-line sample, through AgentMemory as the CLI opens it (default budget 64,000 tokens:
// compaction points from step ~80), each step's messages as the agent loop makes them.
// Per step = (CPU(200 steps) − CPU(40)) / 160, the medians of --rounds runs (default 5).
//   warm: all runs in one process after a warm-up run (JIT compiled: memory's steady cost);
//   cold: every run in a fresh process (what one CLI run pays, compilation included).
// --tree PATH (repeatable) measures other built trees in the same interleaving (e.g. the code
// before a change). --distinct reads a different file each step (files/fN.py: a line naming it,
// then the sample), as bench:steps' distinct-read kind does: every result is new to memory.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { FILE_TEXT, median } from "./harness-run.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);

/** read_file's output of the sample (numbered lines, as `cat -n`), and the loop's note on repeats. */
const numbered = (text) => {
  const lines = text.split("\n").slice(0, -1);
  const width = String(lines.length).length;
  return lines.map((line, i) => `${String(i + 1).padStart(width)}\t${line}`).join("\n");
};
const OUTPUT = numbered(FILE_TEXT);
const REPEAT_NOTE_FROM = 3;
const distinct = argv.includes("--distinct") || Boolean(process.env.HANDS_MEMORY_STEP_DISTINCT);
const fileAt = (step) => (distinct ? `files/f${step}.py` : "sample.py");
const outputAt = (step) => (distinct ? numbered(`# file ${step}\n${FILE_TEXT}`) : OUTPUT);

/** One session of `steps` steps against the tree at `root`; returns its CPU time in ms. */
async function session(root, steps) {
  const url = (p) => pathToFileURL(join(root, "packages", "hands", "dist", p)).href;
  const { AgentMemory } = await import(url("agent-memory.js"));
  const { resolveMemorySettings } = await import(url("memory-config.js"));
  const dir = mkdtempSync(join(tmpdir(), "hands-memory-step-"));
  const started = process.cpuUsage();
  const memory = await AgentMemory.open(
    {
      settings: resolveMemorySettings({}, {}, {}, {}),
      dataDir: dir,
      provider: { model: "bench" },
      namedProvider: async () => {
        throw new Error("no second model in this bench");
      },
      warn: () => {},
    },
    dir,
    `bench-${steps}`,
  );
  // The run's event stream, serialized as --json would.
  const detach = memory.events((e) => JSON.stringify(e));
  const history = [
    { role: "system", content: "You are Hands, a coding agent. ".repeat(30) },
    { role: "user", content: "read sample.py over and over" },
  ];
  for (let step = 1; step <= steps; step++) {
    await memory.context(history, step, { taskIndex: 1 });
    // The model's turn: memory's writes run then.
    await new Promise((r) => setImmediate(r));
    if (step === steps) break;
    const id = `call_${step}`;
    history.push({
      role: "assistant",
      content: "Reading the file again.",
      toolCalls: [{ id, name: "read_file", arguments: JSON.stringify({ path: fileAt(step) }) }],
    });
    const note =
      !distinct && step >= REPEAT_NOTE_FROM
        ? `\n\nNOTE: this is the same read_file call ${step} times in a row. Its result will not change; try a different approach.`
        : "";
    history.push({ role: "tool", toolCallId: id, name: "read_file", content: outputAt(step) + note });
  }
  history.push({ role: "assistant", content: "Done." });
  await memory.learn(history[1].content, { status: "done", answer: "Done.", messages: history });
  await memory.close();
  detach();
  const used = process.cpuUsage(started);
  rmSync(dir, { recursive: true, force: true });
  return (used.user + used.system) / 1000;
}

// A child of the cold mode: one session, its CPU on stdout.
if (process.env.HANDS_MEMORY_STEP_CHILD) {
  const [root, steps] = JSON.parse(process.env.HANDS_MEMORY_STEP_CHILD);
  console.log(await session(root, steps));
  process.exit(0);
}

const rounds = Number(opt("--rounds", 5)) || 5;
const trees = [
  resolve(here, ".."),
  ...argv.flatMap((a, i) => (a === "--tree" && argv[i + 1] ? [resolve(argv[i + 1])] : [])),
];
// The CLI's young generation (packages/cli/bin/hands.js): scavenges as often as there.
const nodeFlags = ["--max-semi-space-size=2"];
const cold = (root, steps) => {
  const r = spawnSync(process.execPath, [...nodeFlags, fileURLToPath(import.meta.url)], {
    env: {
      ...process.env,
      HANDS_MEMORY_STEP_CHILD: JSON.stringify([root, steps]),
      ...(distinct ? { HANDS_MEMORY_STEP_DISTINCT: "1" } : {}),
    },
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`cold run failed: ${r.stderr}`);
  return Number(r.stdout.trim());
};
const samples = new Map(trees.map((t) => [t, { warm: { 40: [], 200: [] }, cold: { 40: [], 200: [] } }]));
for (const t of trees) await session(t, 40); // warm-up
for (let r = 0; r < rounds; r++)
  for (const t of trees)
    for (const steps of [40, 200]) {
      samples.get(t).warm[steps].push(await session(t, steps));
      samples.get(t).cold[steps].push(cold(t, steps));
    }
const per = (s) => +((median(s[200]) - median(s[40])) / 160).toFixed(3);
const report = { rounds, kind: distinct ? "distinct-read" : "same-read", trees: {} };
for (const t of trees) {
  const s = samples.get(t);
  report.trees[t] = {
    warmCpuPerStepMs: per(s.warm),
    coldCpuPerStepMs: per(s.cold),
    cold200Ms: +median(s.cold[200]).toFixed(0),
  };
}
console.log(JSON.stringify(report, null, 2));
