// The regression set: each task is a prompt, a workspace fixture and an objective pass check.
// Tasks run through the real `hands` command; only the model differs (real or scripted).
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const EVALS_DIR = dirname(fileURLToPath(import.meta.url));
export const CLI = join(EVALS_DIR, "..", "packages", "cli", "dist", "main.js");

export function loadTasks(only) {
  const dir = join(EVALS_DIR, "tasks");
  return readdirSync(dir)
    .filter((name) => !only || only.includes(name))
    .sort()
    .map((name) => {
      const spec = JSON.parse(readFileSync(join(dir, name, "task.json"), "utf8"));
      const scriptPath = join(dir, name, "script.json");
      return {
        name,
        ...spec,
        fixture: join(dir, name, "fixture"),
        script: existsSync(scriptPath) ? JSON.parse(readFileSync(scriptPath, "utf8")) : undefined,
      };
    });
}

/** A fresh copy of the task's fixture in a temp folder. */
export function prepareWorkspace(task) {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), `hands-eval-${task.name}-`)));
  cpSync(task.fixture, ws, { recursive: true, filter: (src) => !src.endsWith(".keep") });
  return ws;
}

function digest(path) {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** Runs `hands --json` on the task; resolves with the result event and the process's output. */
export function runHands(task, workspace, { args = [], env = process.env, timeoutMs = 600_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "--json", "--cwd", workspace, ...args, task.prompt], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      const lines = stdout.trim().split("\n").filter(Boolean);
      let result;
      try {
        result = JSON.parse(lines.at(-1) ?? "null");
      } catch {
        result = null;
      }
      let runId;
      try {
        const first = JSON.parse(lines[0] ?? "null");
        if (first?.type === "run_start") runId = first.runId;
      } catch {}
      resolve({
        code,
        result: result?.type === "result" ? result : null,
        events: lines.length,
        stderr,
        runId,
      });
    });
  });
}

/** Applies the task's pass check; returns a list of failures (empty = pass). */
export function checkTask(task, workspace, result, before) {
  const failures = [];
  const check = task.check;
  if (!result) failures.push("no result event (the run crashed)");
  else if (result.status !== "done")
    failures.push(`run ended with status ${result.status}: ${result.reason ?? ""}`);
  if (check.answerIncludes && !(result?.answer ?? "").includes(check.answerIncludes)) {
    failures.push(
      `answer does not include "${check.answerIncludes}": ${JSON.stringify(result?.answer ?? "")}`,
    );
  }
  if (check.command) {
    const command = check.command.replaceAll("{evals}", EVALS_DIR);
    const r = spawnSync("bash", ["-c", command], { cwd: workspace, encoding: "utf8", timeout: 60_000 });
    if (r.status !== 0)
      failures.push(`\`${check.command}\` exited ${r.status}: ${(r.stdout + r.stderr).trim().slice(-500)}`);
    else if (check.stdoutEquals !== undefined && r.stdout.trim() !== check.stdoutEquals) {
      failures.push(
        `\`${check.command}\` printed ${JSON.stringify(r.stdout.trim())}, expected ${JSON.stringify(check.stdoutEquals)}`,
      );
    }
  }
  for (const file of check.unchanged ?? []) {
    if (!existsSync(join(workspace, file)) || digest(join(workspace, file)) !== before?.[file]) {
      failures.push(`${file} was changed or removed; the task forbids that`);
    }
  }
  return failures;
}

/** Fingerprints of the files the check requires to stay unchanged. */
export function snapshotUnchanged(task, workspace) {
  return Object.fromEntries((task.check.unchanged ?? []).map((f) => [f, digest(join(workspace, f))]));
}
