// ContextWindow.fit on its own: whatever it leaves out, what it sends is a valid conversation
// (no tool result without its call, no call without its results), keeps the system prompt, the
// task and the newest step, fits the target, and shrinks the same message to the same object.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ContextOverflowError, type Message } from "@hands/llm";
import { ContextWindow } from "./context-window.js";

function history(steps: number, outputChars: number, callsPerStep = 1): Message[] {
  const out: Message[] = [
    { role: "system", content: "system prompt" },
    { role: "user", content: "the task" },
  ];
  for (let s = 0; s < steps; s++) {
    const calls = Array.from({ length: callsPerStep }, (_, c) => ({
      id: `c${s}_${c}`,
      name: "read_file",
      arguments: `{"path":"f${s}"}`,
    }));
    out.push({ role: "assistant", content: `step ${s}`, toolCalls: calls });
    for (const c of calls)
      out.push({
        role: "tool",
        toolCallId: c.id,
        name: "read_file",
        content: `${c.id}:${"x".repeat(outputChars)}`,
      });
    if (s % 7 === 3) out.push({ role: "user", content: "a correction" });
  }
  return out;
}

/** Every tool result follows its call's assistant message, and every call has its result. */
function assertPaired(sent: Message[]): void {
  let pending = new Set<string>();
  for (const m of sent) {
    if (m.role === "tool") {
      assert.ok(pending.delete(m.toolCallId), `orphan result ${m.toolCallId}`);
      continue;
    }
    assert.equal(pending.size, 0, `unanswered calls ${[...pending].join(",")}`);
    pending = new Set(m.role === "assistant" ? (m.toolCalls ?? []).map((c) => c.id) : []);
  }
  assert.equal(pending.size, 0);
}

const tokens = (ms: Message[]) =>
  ms.reduce(
    (n, m) =>
      n +
      Math.ceil(
        (m.content.length +
          (m.role === "assistant"
            ? (m.toolCalls ?? []).reduce((k, c) => k + c.name.length + c.arguments.length + 40, 0)
            : 0) +
          (m.role === "tool" ? m.toolCallId.length + m.name.length : 0)) /
          3,
      ) +
      8,
    0,
  );

test("after an overflow, what is sent is paired, keeps the system, task and newest step, and fits", () => {
  const dir = mkdtempSync(join(tmpdir(), "hands-window-"));
  try {
    for (const [steps, chars, calls, limit] of [
      [50, 3000, 1, 8000],
      [200, 300, 2, 4000],
      [30, 20_000, 3, 6000],
      [5, 100_000, 1, 3000],
    ] as const) {
      const window = new ContextWindow(dir);
      const all = history(steps, chars, calls);
      assert.equal(window.fit(all, 1, []), all, "unchanged before any overflow");
      window.overflowed(new ContextOverflowError("too long", 400, limit), all, []);
      const sent = window.fit(all, 1, []);
      assertPaired(sent);
      assert.equal(sent[0], all[0]);
      assert.equal(sent[1], all[1]);
      const newest = all.findLastIndex((m) => m.role === "assistant");
      assert.equal(
        sent[sent.length - (all.length - newest)],
        all[newest],
        "the newest call is kept as it was",
      );
      assert.ok(tokens(sent) <= limit, `${tokens(sent)} tokens > ${limit}`);
      // The same shrinking on the next step gives the same objects (the encoder's prefix reuse).
      const again = window.fit([...all], 1, []);
      assert.deepEqual(
        again.map((m, i) => m === sent[i]),
        again.map((m) => m.role !== "user" || !m.content.startsWith("[")),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("pointers name a saved file that holds the whole output", () => {
  const dir = mkdtempSync(join(tmpdir(), "hands-window-"));
  try {
    const window = new ContextWindow(dir);
    const all = history(12, 2000);
    window.overflowed(new ContextOverflowError("too long", 400, 6000), all, []);
    const sent = window.fit(all, 1, []);
    const pointer = sent.find((m) => m.role === "tool" && m.content.startsWith("[output of"));
    assert.ok(pointer && pointer.role === "tool");
    const path = /saved at (\S+);/.exec(pointer.content)![1]!;
    const original = all.find((m) => m.role === "tool" && m.toolCallId === pointer.toolCallId)!;
    assert.equal(readFileSync(path, "utf8"), original.content);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("each further overflow lowers the target; it stops at a floor", () => {
  const window = new ContextWindow();
  const all = history(40, 1000);
  const seen: number[] = [];
  let lowered = window.overflowed(new ContextOverflowError("too long", 400), all, []);
  while (lowered && seen.length < 50) {
    seen.push(window.limitTokens!);
    lowered = window.overflowed(new ContextOverflowError("too long", 400), window.fit(all, 1, []), []);
  }
  assert.ok(seen.length > 2 && seen.length < 50, `${seen.length} steps`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! < seen[i - 1]!);
});
