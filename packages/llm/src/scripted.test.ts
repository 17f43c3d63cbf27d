import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ScriptedProvider } from "./scripted.js";
import type { Message, StreamEvent } from "./types.js";

const USER: Message[] = [{ role: "user", content: "hi" }];

describe("ScriptedProvider", () => {
  test("plays turns in order, emits events when asked, records requests", async () => {
    const provider = new ScriptedProvider(
      [
        { content: "one", usage: { inputTokens: 3, outputTokens: 1 } },
        {
          toolCalls: [
            { name: "read_file", arguments: { path: "a" } },
            { id: "fixed", name: "x", arguments: "{}" },
          ],
        },
      ],
      { emitEvents: true },
    );
    const events: StreamEvent[] = [];
    const messages = [...USER];
    const a = await provider.complete({ messages, tools: [], onEvent: (e) => events.push(e) });
    messages.push({ role: "user", content: "mutated after the call" });
    assert.equal(a.message.content, "one");
    assert.equal(a.finishReason, "stop");
    assert.deepEqual(a.usage, { inputTokens: 3, outputTokens: 1 });
    const b = await provider.complete({ messages, tools: [], maxTokens: 5, onEvent: (e) => events.push(e) });
    assert.deepEqual(b.message.toolCalls, [
      { id: "call_1", name: "read_file", arguments: '{"path":"a"}' },
      { id: "fixed", name: "x", arguments: "{}" },
    ]);
    assert.equal(b.finishReason, "tool_calls");
    assert.deepEqual(events, [
      { type: "text_delta", text: "one" },
      { type: "tool_call_delta", index: 0, id: "call_1", name: "read_file", argumentsDelta: '{"path":"a"}' },
      { type: "tool_call_delta", index: 1, id: "fixed", name: "x", argumentsDelta: "{}" },
    ]);
    assert.equal(provider.requests.length, 2);
    assert.equal(provider.requests[0]!.messages.length, 1, "recorded a copy");
    assert.equal(provider.requests[1]!.maxTokens, 5);
    assert.equal(provider.remaining, 0);
  });

  test("no events by default", async () => {
    const events: StreamEvent[] = [];
    await new ScriptedProvider([{ content: "quiet" }]).complete({
      messages: USER,
      tools: [],
      onEvent: (e) => events.push(e),
    });
    assert.deepEqual(events, []);
  });

  test("function steps see the request", async () => {
    const provider = new ScriptedProvider([(req) => ({ content: `you said ${req.messages[0]!.content}` })]);
    assert.equal((await provider.complete({ messages: USER, tools: [] })).message.content, "you said hi");
  });

  test("a single function answers every request", async () => {
    let n = 0;
    const provider = new ScriptedProvider(() => ({ content: String(++n) }));
    await provider.complete({ messages: USER, tools: [] });
    assert.equal((await provider.complete({ messages: USER, tools: [] })).message.content, "2");
  });

  test("throws a clear error when the script runs out", async () => {
    const provider = new ScriptedProvider([{ content: "only" }]);
    await provider.complete({ messages: USER, tools: [] });
    await assert.rejects(
      provider.complete({ messages: USER, tools: [] }),
      /the script has run out \(1 turns scripted, request #2 received\)/,
    );
  });

  test("scripted errors, corrections and abort", async () => {
    const provider = new ScriptedProvider([
      { error: "boom" },
      { content: "x", correction: "Observation: ERROR: y" },
    ]);
    await assert.rejects(provider.complete({ messages: USER, tools: [] }), /boom/);
    assert.equal(
      (await provider.complete({ messages: USER, tools: [] })).correction,
      "Observation: ERROR: y",
    );
    const slow = new ScriptedProvider([{ content: "late" }], { delayMs: 5000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    await assert.rejects(slow.complete({ messages: USER, tools: [], signal: controller.signal }), {
      name: "AbortError",
    });
  });
});
