// prepare(): the SDK client starts loading before the first request, and that request is the
// same one, byte for byte, as without it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AnthropicProvider } from "./anthropic.js";
import { OpenAIProvider } from "./openai.js";
import { ReactProvider } from "./react.js";
import { startScriptedServer } from "./testing/scripted-server.js";
import type { ModelRequest, Provider } from "./types.js";

const request: ModelRequest = {
  messages: [{ role: "user", content: "hi" }],
  tools: [{ name: "read_file", description: "r", parameters: { type: "object" } }],
};

/** The SDK client promise a provider holds (private; what prepare() must have started). */
const clientOf = (p: Provider) => (p as unknown as { sdk?: Promise<unknown> }).sdk;

test("prepare() starts the SDK client; the first request is the one sent without it", async () => {
  const server = await startScriptedServer([{ content: "one" }, { content: "two" }]);
  try {
    const made = (prepared: boolean) => {
      const p = new OpenAIProvider({ model: "m", baseURL: server.url, apiKey: "k" });
      if (prepared) {
        assert.equal(clientOf(p), undefined);
        p.prepare();
        assert.ok(clientOf(p) instanceof Promise, "prepare() started loading the client");
      }
      return p;
    };
    const plain = await made(false).complete(request);
    const prepared = await made(true).complete(request);
    assert.deepEqual([plain.message.content, prepared.message.content], ["one", "two"]);
    assert.equal(server.requests.length, 2);
    const [a, b] = server.requests;
    assert.deepEqual(b!.body, a!.body);
    assert.deepEqual(b!.headers, a!.headers);
  } finally {
    await server.close();
  }
});

test("a ReAct provider prepares its inner provider; Anthropic prepares its own client", () => {
  const inner = new OpenAIProvider({ model: "m", baseURL: "http://127.0.0.1:9/v1", apiKey: "k" });
  new ReactProvider(inner).prepare();
  assert.ok(clientOf(inner) instanceof Promise);
  const anthropic = new AnthropicProvider({ model: "c", baseURL: "http://127.0.0.1:9", apiKey: "k" });
  anthropic.prepare();
  assert.ok(clientOf(anthropic) instanceof Promise);
});

test("a failed request after prepare() is the request's error, not an unhandled rejection", async () => {
  let unhandled: unknown;
  const onUnhandled = (e: unknown) => {
    unhandled = e;
  };
  process.on("unhandledRejection", onUnhandled);
  try {
    // Nothing listens on port 9 (discard): the connection is refused.
    const p = new OpenAIProvider({
      model: "m",
      baseURL: "http://127.0.0.1:9/v1",
      apiKey: "k",
      maxRetries: 0,
    });
    p.prepare();
    await assert.rejects(p.complete(request), /connect|refused|Connection/i);
    await new Promise((r) => setImmediate(r));
    assert.equal(unhandled, undefined);
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});
