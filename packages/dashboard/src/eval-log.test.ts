// The eval log reads back what it wrote, oldest first, and says which lines it could not read.
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { appendEvalRun, type EvalRun, evalLogPath, readEvalRuns } from "./eval-log.js";

const dir = mkdtempSync(join(tmpdir(), "hands-eval-log-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("appended runs come back in time order; a torn or foreign line is a problem, not an exception", () => {
  const data = join(dir, "data");
  const run = (time: number, passed: boolean): EvalRun => ({
    version: 1,
    time,
    args: ["--model", "m"],
    model: "m",
    tasks: [{ name: "hello", passed, failures: passed ? [] : ["no"], seconds: 1.5, steps: 3 }],
  });
  assert.deepEqual(readEvalRuns(data), { runs: [], problems: [] });
  appendEvalRun(data, run(200, false));
  appendEvalRun(data, run(100, true));
  assert.equal(statSync(evalLogPath(data)).mode & 0o777, 0o600);
  appendFileSync(
    evalLogPath(data),
    `${JSON.stringify({ version: 2, time: 1, tasks: [] })}\n{"version":1,"ti`,
  );
  const r = readEvalRuns(data);
  assert.deepEqual(
    r.runs.map((x) => [x.time, x.tasks[0]!.passed]),
    [
      [100, true],
      [200, false],
    ],
  );
  assert.deepEqual(r.problems, [
    "line 3 is not an eval run of this version",
    "line 4 is not valid JSON (cut off?)",
  ]);
});
