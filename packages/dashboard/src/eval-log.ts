// The record of `npm run eval` runs: one JSON line per run of the regression set in
// <data>/evals.jsonl, written by evals/run.mjs and read by the dashboard's evals page, both
// through this module.
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";

export interface EvalTaskResult {
  name: string;
  passed: boolean;
  /** Why it failed (empty when it passed). */
  failures: string[];
  steps?: number;
  seconds: number;
  status?: string;
  /** The run's trace id in the data folder (its page in the dashboard). */
  runId?: string;
  tokens?: number;
  costUsd?: number;
}

export interface EvalRun {
  version: 1;
  /** Start of the eval run, ms since the epoch. */
  time: number;
  /** The hands flags the set ran with (e.g. --model NAME). */
  args: string[];
  model?: string;
  tasks: EvalTaskResult[];
}

export function evalLogPath(dataDir: string): string {
  return join(dataDir, "evals.jsonl");
}

/** Appends one eval run (one line, one write: a reader never sees half of it once it ends in a newline). */
export function appendEvalRun(dataDir: string, run: EvalRun): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const fd = openSync(evalLogPath(dataDir), "a", 0o600);
  try {
    writeSync(fd, `${JSON.stringify(run)}\n`);
  } finally {
    closeSync(fd);
  }
}

function isRun(v: unknown): v is EvalRun {
  const r = v as EvalRun;
  return (
    typeof r === "object" &&
    r !== null &&
    r.version === 1 &&
    typeof r.time === "number" &&
    Array.isArray(r.tasks) &&
    r.tasks.every((t) => typeof t?.name === "string" && typeof t.passed === "boolean")
  );
}

/** Every eval run recorded, oldest first, and the lines that could not be read. */
export function readEvalRuns(dataDir: string): { runs: EvalRun[]; problems: string[] } {
  let text: string;
  try {
    text = readFileSync(evalLogPath(dataDir), "utf8");
  } catch {
    return { runs: [], problems: [] };
  }
  const runs: EvalRun[] = [];
  const problems: string[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    try {
      const v = JSON.parse(line) as unknown;
      if (isRun(v)) runs.push(v);
      else problems.push(`line ${i + 1} is not an eval run of this version`);
    } catch {
      problems.push(`line ${i + 1} is not valid JSON (cut off?)`);
    }
  });
  return { runs: runs.sort((a, b) => a.time - b.time), problems };
}
