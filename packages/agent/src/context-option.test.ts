// The `context` option: the model is sent what the assembler returns; the history (and the
// result's messages) stay whole; the recall tool answers from its source.
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { type Message, ScriptedProvider } from "@hands/llm";
import { Agent } from "./agent.js";
import type { AgentEvent } from "./events.js";
import { recallTool } from "./tools/recall.js";

test("context assembler decides what is sent; recall tool expands ids", async () => {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "hands-ctx-")));
  const provider = new ScriptedProvider([
    { toolCalls: [{ name: "recall", arguments: { id: "m0123456789" } }] },
    { content: "done" },
  ]);
  const seen: number[] = [];
  const events: AgentEvent[] = [];
  const agent = new Agent({
    provider,
    workspace,
    tools: [recallTool({ recall: async (id) => `original of ${id}` })],
    createSandbox: async () => {
      throw new Error("no sandbox");
    },
    // Sends only system + task + the last message.
    context: (history: readonly Message[], step) => {
      seen.push(step);
      return history.length > 2 ? [history[0]!, history[1]!, history.at(-1)!] : [...history];
    },
  });
  try {
    const r = await agent.run("task", { onEvent: (e) => events.push(e) });
    assert.equal(r.status, "done");
    assert.deepEqual(seen, [1, 2]);
    assert.equal(provider.requests[1]!.messages.length, 3);
    assert.equal(provider.requests[1]!.messages[2]!.content, "original of m0123456789");
    assert.equal(r.messages.length, 5, "the full history is kept");
    const req = events.filter((e) => e.type === "model_request");
    assert.equal(req[1]?.type === "model_request" ? req[1].messageCount : 0, 3);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
});

test("an assembler that throws falls back to the full history", async () => {
  const provider = new ScriptedProvider([{ content: "ok" }]);
  const agent = new Agent({
    provider,
    workspace: realpathSync(tmpdir()),
    tools: [],
    createSandbox: async () => {
      throw new Error("no sandbox");
    },
    context: () => {
      throw new Error("broken");
    },
  });
  const r = await agent.run("task");
  assert.equal(r.status, "done");
  assert.equal(provider.requests[0]!.messages.length, 2);
});
