import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AnthropicProvider } from "./anthropic.js";
import { createProvider } from "./factory.js";
import { OpenAIProvider } from "./openai.js";
import { ReactProvider } from "./react.js";
import { startScriptedServer } from "./testing/scripted-server.js";

describe("createProvider", () => {
  test("builds each kind", () => {
    const openai = createProvider({ provider: "openai", model: "gpt-4o", baseURL: "http://x/v1/" });
    assert.ok(openai instanceof OpenAIProvider);
    assert.equal((openai as OpenAIProvider).baseURL, "http://x/v1");
    const anthropic = createProvider({ provider: "anthropic", model: "claude-x", baseURL: "http://y/v1" });
    assert.ok(anthropic instanceof AnthropicProvider);
    assert.equal((anthropic as AnthropicProvider).baseURL, "http://y");
    const react = createProvider({ provider: "react", model: "qwen" });
    assert.ok(react instanceof ReactProvider);
    assert.equal(react.name, "react");
    assert.equal(react.model, "qwen");
    assert.throws(() => createProvider({ provider: "nope" as never, model: "m" }), /unknown provider "nope"/);
  });

  test("the react provider does not recover text tool calls (it parses ReAct instead)", async () => {
    const server = await startScriptedServer([
      { content: 'Final Answer: {"name": "read_file", "arguments": {}}' },
    ]);
    try {
      const provider = createProvider({ provider: "react", model: "m", baseURL: server.url });
      const res = await provider.complete({
        messages: [{ role: "user", content: "x" }],
        tools: [{ name: "read_file", description: "r", parameters: { type: "object" } }],
      });
      assert.equal(res.message.toolCalls, undefined);
      assert.equal(res.message.content, '{"name": "read_file", "arguments": {}}');
    } finally {
      await server.close();
    }
  });
});
