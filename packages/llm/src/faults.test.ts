// Faults a run recovers from, each against the scripted HTTP server, through both SDK-backed
// providers: a server that never answers, a stream that stalls, a chunk that is not JSON, a
// body cut short. Each is retried like a 5xx, with a retry event saying why.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AnthropicProvider } from "./anthropic.js";
import { OpenAIProvider } from "./openai.js";
import { type ServerTurn, startScriptedServer } from "./testing/scripted-server.js";
import type { Provider, StreamEvent, ToolSchema } from "./types.js";

const FAST = { baseDelayMs: 1, maxDelayMs: 10 };
const TOOLS: ToolSchema[] = [{ name: "write_file", description: "w", parameters: { type: "object" } }];

type Kind = "openai" | "anthropic";

async function attempt(
  kind: Kind,
  turns: ServerTurn[],
  options: { timeoutMs?: number; stream?: boolean } = {},
) {
  const server = await startScriptedServer(turns);
  const common = { model: "m", apiKey: "k", retry: FAST, maxRetries: 2, ...options };
  const provider: Provider =
    kind === "openai"
      ? new OpenAIProvider({ baseURL: server.url, ...common })
      : new AnthropicProvider({ baseURL: server.origin, ...common });
  const events: StreamEvent[] = [];
  try {
    const started = performance.now();
    const response = await provider.complete({
      messages: [{ role: "user", content: "hi" }],
      tools: TOOLS,
      onEvent: (e) => events.push(e),
    });
    const retries = events.filter((e) => e.type === "retry").map((e) => (e as { error: string }).error);
    return { response, retries, requests: server.requests.length, ms: performance.now() - started };
  } finally {
    await server.close();
  }
}

for (const kind of ["openai", "anthropic"] as const) {
  describe(`${kind}: recoverable faults are retried`, () => {
    test("a server that never sends headers times out after the idle timeout", async () => {
      const r = await attempt(kind, [{ neverAnswer: true }, { content: "second try" }], { timeoutMs: 300 });
      assert.equal(r.response.message.content, "second try");
      assert.deepEqual(r.retries, ["timed out: no data from the server for 300 ms"]);
      assert.ok(r.ms < 3000, `${r.ms} ms`);
    });

    test("a stream that stalls between chunks times out and is retried", async () => {
      const r = await attempt(
        kind,
        [{ content: "abcdefgh", chunkSize: 2, stallAfterEvents: 3 }, { content: "fresh" }],
        {
          timeoutMs: 300,
        },
      );
      assert.equal(r.response.message.content, "fresh");
      assert.deepEqual(r.retries, ["timed out: no data from the server for 300 ms"]);
    });

    test("one event that is not valid JSON is retried, not fatal", async () => {
      const r = await attempt(kind, [
        { content: "abcdefgh", chunkSize: 2, corruptEvent: 2 },
        { content: "clean" },
      ]);
      assert.equal(r.response.message.content, "clean");
      assert.equal(r.retries.length, 1);
      assert.match(r.retries[0]!, /not valid JSON/);
    });

    test("an overload reported inside the stream is retried", async () => {
      const r = await attempt(kind, [
        { content: "abcdefgh", chunkSize: 2, errorEventAfter: 3 },
        { content: "later" },
      ]);
      assert.equal(r.response.message.content, "later");
      assert.equal(r.retries.length, 1);
      assert.match(r.retries[0]!, /Overloaded/);
    });

    test("an invalid-request error inside the stream is not retried", async () => {
      const server = [
        { content: "abc", errorEventAfter: 1, errorType: "invalid_request_error", errorMessage: "bad tool" },
      ];
      await assert.rejects(attempt(kind, server), /bad tool/);
    });

    test("a JSON body that stalls half-way times out and is retried", async () => {
      const r = await attempt(kind, [{ content: "whole", stallBodyAt: 20 }, { content: "whole" }], {
        stream: false,
        timeoutMs: 300,
      });
      assert.equal(r.response.message.content, "whole");
      assert.deepEqual(r.retries, ["timed out: no data from the server for 300 ms"]);
    });

    test("a JSON body cut short is retried", async () => {
      const r = await attempt(
        kind,
        [{ content: "whole answer", truncateBodyAt: 30 }, { content: "whole answer" }],
        {
          stream: false,
        },
      );
      assert.equal(r.response.message.content, "whole answer");
      assert.equal(r.requests, 2);
      assert.equal(r.retries.length, 1);
    });

    test("a stream cut mid-way is retried", async () => {
      const r = await attempt(kind, [
        { content: "abcdefgh", chunkSize: 2, cutAfterEvents: 3 },
        { content: "again" },
      ]);
      assert.equal(r.response.message.content, "again");
      assert.equal(r.retries.length, 1);
    });

    test("tool-call arguments of 20 MB stream in well under 2 s (linear time)", async () => {
      const content = "x".repeat(20_000_000);
      const args = JSON.stringify({ path: "big.txt", content });
      // One delta for the whole argument string: the case that was quadratic.
      const started = performance.now();
      const r = await attempt(kind, [
        { toolCalls: [{ id: "c1", name: "write_file", arguments: args }], chunkSize: 1e9 },
      ]);
      const ms = performance.now() - started;
      assert.equal(r.response.message.toolCalls?.[0]?.arguments.length, args.length);
      assert.ok(ms < 2000, `20 MB took ${ms.toFixed(0)} ms`);
    });
  });
}
