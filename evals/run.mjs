#!/usr/bin/env node
// `npm run eval [-- --task NAME ...] [-- hands flags]`: runs the regression set with the
// configured model (same settings as `hands`: OPENAI_BASE_URL, --model, …) and reports.
import { rmSync } from "node:fs";
import { appendEvalRun } from "../packages/dashboard/dist/eval-log.js";
import { dataDir } from "../packages/hands/dist/paths.js";
import { checkTask, loadTasks, prepareWorkspace, runHands, snapshotUnchanged } from "./lib.mjs";

const argv = process.argv.slice(2);
const only = [];
const handsArgs = [];
let keep = false;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--task") only.push(argv[++i]);
  else if (argv[i] === "--keep") keep = true;
  else handsArgs.push(argv[i]);
}

const tasks = loadTasks(only.length ? only : undefined);
let passed = 0;
let failed = 0;
// Kept in the data folder (evals.jsonl) for the dashboard's evals page.
const record = { version: 1, time: Date.now(), args: handsArgs, tasks: [] };
const modelFlag = handsArgs.indexOf("--model");
if (modelFlag >= 0 && handsArgs[modelFlag + 1]) record.model = handsArgs[modelFlag + 1];
for (const task of tasks) {
  const ws = prepareWorkspace(task);
  const before = snapshotUnchanged(task, ws);
  const started = Date.now();
  const run = await runHands(task, ws, { args: handsArgs });
  const failures = checkTask(task, ws, run.result, before);
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  const steps = run.result?.steps ?? "?";
  if (failures.length === 0) {
    passed++;
    console.log(`PASS ${task.name} (${steps} steps, ${secs} s)`);
  } else {
    failed++;
    console.log(`FAIL ${task.name} (${steps} steps, ${secs} s)\n  ${failures.join("\n  ")}`);
    if (!run.result) console.log(run.stderr.trim().split("\n").slice(-5).join("\n"));
  }
  const usage = run.result?.usage;
  record.tasks.push({
    name: task.name,
    passed: failures.length === 0,
    failures,
    seconds: (Date.now() - started) / 1000,
    ...(run.result ? { steps: run.result.steps, status: run.result.status } : {}),
    ...(run.runId ? { runId: run.runId } : {}),
    ...(usage ? { tokens: usage.inputTokens + usage.outputTokens, costUsd: usage.costUsd ?? 0 } : {}),
  });
  if (keep) console.log(`  workspace kept: ${ws}`);
  else rmSync(ws, { recursive: true, force: true });
}
appendEvalRun(dataDir(), record);
console.log(`eval: ${passed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
