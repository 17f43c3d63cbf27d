// Event sources: events from outside the loop join the run's stream between run_start and the
// result, and nothing they emit after the result reaches the listener.
import assert from "node:assert/strict";
import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { test } from "node:test";
import { type Message, ScriptedProvider } from "@hands/llm";
import { Agent, type EventSource } from "./agent.js";
import type { AgentEvent, AgentEventInput } from "./events.js";

test("an event source's events land inside the run's stream, never after the result", async () => {
  let emitLater: ((e: AgentEventInput) => void) | undefined;
  let detached = 0;
  const source: EventSource = (emit) => {
    emitLater = emit;
    return () => {
      detached++;
    };
  };
  const move = (step: number): AgentEventInput => ({
    type: "memory",
    step,
    action: "created",
    chunkId: `m000000000${step}`,
    seq: step,
    reason: "test",
  });
  const provider = new ScriptedProvider([
    { toolCalls: [{ name: "nothing", arguments: {} }] },
    { content: "done" },
  ]);
  const agent = new Agent({
    provider,
    workspace: realpathSync(tmpdir()),
    tools: [
      {
        name: "nothing",
        description: "does nothing",
        parameters: { type: "object", properties: {} },
        readOnly: true,
        execute: async () => ({ output: "ok" }),
      },
    ],
    createSandbox: async () => {
      throw new Error("no sandbox");
    },
    // The context hook emits a move each step, as memory does when it stores messages.
    context: (history: readonly Message[], step) => {
      emitLater?.(move(step));
      return [...history];
    },
    eventSources: [source],
  });
  const events: AgentEvent[] = [];
  const r = await agent.run("task", { onEvent: (e) => events.push(e) });
  assert.equal(r.status, "done");
  emitLater?.(move(99));
  assert.equal(detached, 1, "detached once");
  const types = events.map((e) => e.type);
  assert.equal(types[0], "run_start");
  assert.equal(types.at(-1), "result");
  const moves = events.filter((e) => e.type === "memory");
  assert.deepEqual(
    moves.map((e) => (e.type === "memory" ? e.step : -1)),
    [1, 2],
  );
  assert.ok(moves.every((e) => typeof e.time === "number"));
});
