import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { toOpenAIMessage } from "./openai-wire.js";
import { RequestBodyEncoder } from "./request-body.js";
import type { Message } from "./types.js";

const expected = (fields: Record<string, unknown>, messages: Message[], tools?: unknown) => ({
  ...fields,
  messages: messages.map(toOpenAIMessage),
  ...(tools ? { tools } : {}),
});

function history(n: number): Message[] {
  const out: Message[] = [
    { role: "system", content: "sys → ünïcode" },
    { role: "user", content: "task" },
  ];
  for (let i = 0; i < n; i++) {
    out.push({
      role: "assistant",
      content: "",
      toolCalls: [{ id: `c${i}`, name: "read_file", arguments: '{"path":"a"}' }],
    });
    out.push({ role: "tool", toolCallId: `c${i}`, name: "read_file", content: `line ${i}\n"quoted"\t` });
  }
  return out;
}

describe("RequestBodyEncoder", () => {
  test("a growing history encodes to exactly what JSON.stringify would give, step after step", () => {
    const enc = new RequestBodyEncoder(toOpenAIMessage);
    const messages = history(0);
    const tools = [{ type: "function", function: { name: "read_file" } }];
    for (let step = 0; step < 30; step++) {
      const body = enc.encode({ model: "m", stream: true }, messages, { key: tools, wire: () => tools });
      assert.deepEqual(JSON.parse(body.toString()), expected({ model: "m", stream: true }, messages, tools));
      enc.release(body, true);
      messages.push(
        ...history(1)
          .slice(2)
          .map((m) => ({ ...m, content: `${m.content} step ${step}` })),
      );
    }
  });

  test("a changed head, a rewritten history or a shorter one is re-encoded from scratch", () => {
    const enc = new RequestBodyEncoder(toOpenAIMessage);
    const a = history(3);
    let body = enc.encode({ model: "m" }, a);
    enc.release(body, true);
    body = enc.encode({ model: "other", max_tokens: 5 }, a);
    assert.deepEqual(JSON.parse(body.toString()), expected({ model: "other", max_tokens: 5 }, a));
    enc.release(body, true);
    const b = [...a.slice(0, 3), { role: "user", content: "replaced" } as Message, ...a.slice(4)];
    body = enc.encode({ model: "other", max_tokens: 5 }, b);
    assert.deepEqual(JSON.parse(body.toString()), expected({ model: "other", max_tokens: 5 }, b));
    enc.release(body, true);
    const shorter = a.slice(0, 2);
    body = enc.encode({}, shorter);
    assert.deepEqual(JSON.parse(body.toString()), expected({}, shorter));
  });

  test("while a body is lent, another request gets its own copy and the first stays intact", () => {
    const enc = new RequestBodyEncoder(toOpenAIMessage);
    const a = history(2);
    const first = enc.encode({ model: "m" }, a);
    const snapshot = Buffer.from(first);
    const b = history(5);
    const second = enc.encode({ model: "m" }, b);
    assert.deepEqual(JSON.parse(second.toString()), expected({ model: "m" }, b));
    assert.ok(first.equals(snapshot), "the lent body was not overwritten");
    enc.release(second, true); // not the lent one: ignored
    const third = enc.encode({ model: "m" }, b);
    assert.ok(first.equals(snapshot), "still lent after releasing another body");
    assert.deepEqual(JSON.parse(third.toString()), expected({ model: "m" }, b));
    enc.release(first, false);
    const fourth = enc.encode({ model: "m" }, b);
    assert.deepEqual(JSON.parse(fourth.toString()), expected({ model: "m" }, b));
  });
});
