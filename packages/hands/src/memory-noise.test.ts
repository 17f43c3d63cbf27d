// Workspace memory keeps the user's tasks and their outcomes, not the machinery around them:
// structured-output retry prompts are no task and no fact about the workspace.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { startScriptedServer } from "@hands/llm";
import { Memory } from "@hands/memory";
import { modelAnswered } from "./agent-memory.js";
import { createSession } from "./index.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-memnoise-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

test("structured output: one outcome for the task, with the final answer; no retry prompt is kept as a fact", async () => {
  const server = await startScriptedServer([
    { content: "The answer is three." },
    { content: '{"count": "three"}' },
    { content: '{"count": 3}' },
  ]);
  const workspace = join(scratch, "ws");
  mkdirSync(workspace);
  const dataDir = join(scratch, "data");
  try {
    const session = await createSession({
      workspace,
      baseURL: server.url,
      apiKey: "k",
      model: "m",
      sandbox: "local",
      dataDir,
      env: {},
    });
    const r = await session.run<{ count: number }>("count the files", {
      outputSchema: { type: "object", properties: { count: { type: "number" } }, required: ["count"] },
    });
    await session.close();
    assert.equal(r.status, "done", r.reason);
    assert.deepEqual(r.output, { count: 3 });
    assert.equal(server.requests.length, 3, "two retries were needed");
  } finally {
    await server.close();
  }
  const memory = new Memory({ path: join(dataDir, "memory.db") });
  try {
    const longTerm = memory.store.list({ layers: ["long_term"], limit: 1000 });
    assert.ok(longTerm.length > 0, "the task was learned");
    for (const c of longTerm)
      assert.doesNotMatch(c.content, /does not match the required JSON schema|JSON Schema/i);
    const outcomes = longTerm.filter((c) => (c.meta as { kind?: string } | undefined)?.kind === "outcome");
    assert.deepEqual(
      outcomes.map((c) => c.content),
      ['Task: count the files\nOutcome: done: {"count": 3}'],
    );
  } finally {
    memory.close();
  }
});

test("modelAnswered: an assistant message after the task's, or after the last user message", () => {
  const sys = { role: "system" as const, content: "s" };
  const user = (content: string) => ({ role: "user" as const, content });
  const answer = { role: "assistant" as const, content: "a" };
  assert.equal(modelAnswered("hi", [sys, user("hi")]), false, "the call failed at once");
  assert.equal(modelAnswered("hi", [sys, user("hi"), answer]), true);
  assert.equal(
    modelAnswered("again", [sys, user("hi"), answer, user("again")]),
    false,
    "an earlier answer is not this run's",
  );
  assert.equal(modelAnswered("t", [sys, user("t\n\nschema"), answer]), true, "sent with more text");
  assert.equal(modelAnswered("t", [sys, user("old"), answer, user("t\n\nschema")]), false);
});
