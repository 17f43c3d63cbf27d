// The regression set in the default suite: each task runs through the real `hands` command
// against a scripted OpenAI-compatible server over HTTP, and its real pass check decides.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { describe, test } from "node:test";
import { startScriptedServer } from "@hands/llm";
import { checkTask, loadTasks, prepareWorkspace, runHands, snapshotUnchanged } from "./lib.mjs";

const env = { ...process.env, HANDS_DATA_DIR: `${process.env.TMPDIR ?? "/tmp"}/hands-evals-data` };

async function runScripted(task, script, provider = "openai") {
  const server = await startScriptedServer(script);
  const ws = prepareWorkspace(task);
  try {
    const before = snapshotUnchanged(task, ws);
    const run = await runHands(task, ws, {
      args: ["--provider", provider, "--base-url", server.url, "--model", "scripted", "--api-key", "sk-test"],
      env,
      timeoutMs: 60_000,
    });
    return {
      run,
      failures: checkTask(task, ws, run.result, before),
      requests: server.requests.length,
      first: server.requests[0]?.body,
    };
  } finally {
    await server.close();
    rmSync(ws, { recursive: true, force: true });
  }
}

/**
 * The same script as text ReAct replies (`--provider react`, for models without tool calling):
 * one Action a reply, as the protocol runs one a turn, then the final answer.
 */
function asReact(script) {
  const out = [];
  for (const turn of script) {
    const calls = turn.toolCalls ?? [];
    if (calls.length === 0)
      out.push({ content: `Thought: That is the result.\nFinal Answer: ${turn.content}` });
    calls.forEach((c, i) => {
      const input = typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments);
      const thought = i === 0 && turn.content ? turn.content : "Next.";
      out.push({ content: `Thought: ${thought}\nAction: ${c.name}\nAction Input: ${input}` });
    });
  }
  return out;
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

describe("regression set through the text ReAct protocol (scripted model over HTTP)", () => {
  for (const task of loadTasks()) {
    test(`${task.name}: passes its check with --provider react, told the tools as natively`, async () => {
      const react = asReact(task.script);
      const { run, failures, requests, first } = await runScripted(task, react, "react");
      assert.deepEqual(failures, [], run.stderr);
      assert.equal(run.code, 0);
      assert.equal(requests, react.length, "every scripted turn was requested");
      // The protocol's tool list is the native one: same tools, same descriptions and schemas.
      assert.equal(first.tools, undefined, "no native tools field");
      const native = await runScripted(task, [{ content: "ok" }]);
      const system = first.messages[0].content;
      for (const t of native.first.tools) {
        const line = `- ${t.function.name}: ${t.function.description}\n  Arguments (JSON Schema): ${JSON.stringify(t.function.parameters)}`;
        assert.ok(system.includes(line), `the ReAct prompt lacks ${t.function.name} as sent natively`);
      }
    });
  }
});
