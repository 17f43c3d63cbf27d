// The regression set in the default suite: each task runs through the real `hands` command
// against a scripted OpenAI-compatible server over HTTP, and its real pass check decides.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { describe, test } from "node:test";
import { startScriptedServer } from "@hands/llm";
import { checkTask, loadTasks, prepareWorkspace, runHands, snapshotUnchanged } from "./lib.mjs";

const env = { ...process.env, HANDS_DATA_DIR: `${process.env.TMPDIR ?? "/tmp"}/hands-evals-data` };

async function runScripted(task, script) {
  const server = await startScriptedServer(script);
  const ws = prepareWorkspace(task);
  try {
    const before = snapshotUnchanged(task, ws);
    const run = await runHands(task, ws, {
      args: ["--base-url", server.url, "--model", "scripted", "--api-key", "sk-test"],
      env,
      timeoutMs: 60_000,
    });
    return { run, failures: checkTask(task, ws, run.result, before), requests: server.requests.length };
  } finally {
    await server.close();
    rmSync(ws, { recursive: true, force: true });
  }
}

describe("regression set (scripted model over HTTP)", () => {
  for (const task of loadTasks()) {
    test(`${task.name}: passes its check`, async () => {
      assert.ok(task.script, `${task.name} has a script.json`);
      const { run, failures, requests } = await runScripted(task, task.script);
      assert.deepEqual(failures, [], run.stderr);
      assert.equal(run.code, 0);
      assert.equal(requests, task.script.length, "every scripted turn was requested");
    });

    test(`${task.name}: its check fails when the work is not done`, async () => {
      const { run, failures } = await runScripted(task, [{ content: "I did it (but did nothing)." }]);
      assert.equal(run.result?.status, "done");
      assert.notDeepEqual(failures, [], "a lazy answer must not pass");
    });
  }
});
