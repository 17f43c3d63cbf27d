// The run view's timeline keeps what sub-agents, routing and hooks add to a step: the child's
// run and trace (the link the run page shows), the model chosen and why, hook outcomes.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AgentEvent } from "@hands/agent";
import { costByModel, Timeline } from "./timeline.js";

test("a task call links its sub-agent's trace; a step keeps its model choice and hooks", () => {
  const usage = { inputTokens: 10, outputTokens: 2, costUsd: 0.001 };
  const events = [
    {
      type: "run_start",
      runId: "r",
      task: "t",
      provider: "openai",
      model: "m",
      workspace: "/w",
      maxSteps: 5,
    },
    {
      type: "model_choice",
      step: 1,
      model: "gpt-4.1",
      role: "strong",
      reason: "2 failed tool calls in a row",
      changed: true,
    },
    { type: "model_request", step: 1, messageCount: 2, chars: 10 },
    { type: "tool_start", step: 1, callId: "c1", name: "task", args: { prompt: "look" } },
    {
      type: "subagent_start",
      step: 1,
      callId: "c1",
      runId: "task-1",
      task: "look",
      model: "sub",
      tools: ["read_file"],
      tracePath: "/d/traces/s.task-1.jsonl",
    },
    {
      type: "hook",
      step: 1,
      event: "preToolUse",
      hook: "check.sh",
      outcome: "failed",
      callId: "c1",
      message: "exited with code 3",
    },
    {
      type: "subagent_end",
      step: 1,
      callId: "c1",
      runId: "task-1",
      status: "done",
      steps: 2,
      usage,
      durationMs: 5,
    },
    {
      type: "tool_end",
      step: 1,
      callId: "c1",
      name: "task",
      isError: false,
      output: "report",
      resultChars: 6,
      truncated: false,
      durationMs: 5,
    },
  ].map((e, i) => ({ ...e, time: 1000 + i })) as AgentEvent[];
  const step = new Timeline(events).steps()[0]!;
  assert.deepEqual(step.choice, { model: "gpt-4.1", role: "strong", reason: "2 failed tool calls in a row" });
  assert.equal(step.tools.length, 1, "the sub-agent joins its call, not a call of its own");
  assert.deepEqual(step.tools[0]!.subagent, {
    runId: "task-1",
    model: "sub",
    tracePath: "/d/traces/s.task-1.jsonl",
    status: "done",
    usage,
    steps: 2,
  });
  // The run's cost split: the sub-agent's tokens under its own model (the step has no response yet).
  const run = new Timeline(events).runs[0]!;
  assert.deepEqual(
    costByModel(run).map((s) => [s.model, s.role, s.steps, s.input]),
    [["sub", "subagent", 2, usage.inputTokens]],
  );
  assert.deepEqual(step.hooks, [
    { hook: "check.sh", event: "preToolUse", outcome: "failed", message: "exited with code 3" },
  ]);
});
