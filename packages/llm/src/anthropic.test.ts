import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AnthropicProvider, type AnthropicProviderOptions } from "./anthropic.js";
import { toAnthropic } from "./anthropic-wire.js";
import { type ServerScript, startScriptedServer } from "./testing/scripted-server.js";
import { type Message, ModelError, type StreamEvent, type ToolSchema } from "./types.js";

const TOOLS: ToolSchema[] = [
  {
    name: "read_file",
    description: "Read a file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
  { name: "list_dir", description: "List a directory", parameters: { type: "object", properties: {} } },
];
const PRICE = { input: 3, output: 15, cachedInput: 0.3 };

async function withServer(
  script: ServerScript,
  fn: (
    provider: (o?: Partial<AnthropicProviderOptions>) => AnthropicProvider,
    requests: Awaited<ReturnType<typeof startScriptedServer>>["requests"],
  ) => Promise<void>,
): Promise<void> {
  const server = await startScriptedServer(script);
  try {
    await fn(
      (o = {}) =>
        new AnthropicProvider({
          // The /v1 suffix is dropped: the SDK adds it itself.
          baseURL: server.url,
          apiKey: "sk-ant-test",
          model: "claude-test",
          pricing: PRICE,
          retry: { baseDelayMs: 5, maxDelayMs: 2000 },
          ...o,
        }),
      server.requests,
    );
  } finally {
    await server.close();
  }
}

describe("toAnthropic", () => {
  test("system extracted, tool results merged into one user turn, arguments parsed", () => {
    const messages: Message[] = [
      { role: "system", content: "rules" },
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: "Reading two.",
        toolCalls: [
          { id: "call.1", name: "read_file", arguments: '{"path":"a"}' },
          { id: "c2", name: "read_file", arguments: "{broken" },
        ],
      },
      { role: "tool", toolCallId: "call.1", name: "read_file", content: "A" },
      { role: "tool", toolCallId: "c2", name: "read_file", content: "no such file", isError: true },
      { role: "user", content: "and?" },
    ];
    const { system, messages: wire } = toAnthropic(messages);
    assert.equal(system, "rules");
    assert.deepEqual(wire, [
      { role: "user", content: [{ type: "text", text: "go" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Reading two." },
          { type: "tool_use", id: "call_1", name: "read_file", input: { path: "a" } },
          { type: "tool_use", id: "c2", name: "read_file", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_1", content: "A" },
          { type: "tool_result", tool_use_id: "c2", content: "no such file", is_error: true },
          { type: "text", text: "and?" },
        ],
      },
    ]);
  });
});

describe("AnthropicProvider over HTTP", () => {
  test("streams text and tool use; usage and cost", async () => {
    await withServer(
      [
        {
          content: "I will read it.",
          toolCalls: [
            { id: "toolu_1", name: "read_file", arguments: { path: "src/index.ts" } },
            { id: "toolu_2", name: "list_dir", arguments: {} },
          ],
          chunkSize: 3,
          usage: { inputTokens: 1000, outputTokens: 50, cachedInputTokens: 600 },
        },
      ],
      async (provider, requests) => {
        const events: StreamEvent[] = [];
        const res = await provider().complete({
          messages: [
            { role: "system", content: "You are terse." },
            { role: "user", content: "read index" },
          ],
          tools: TOOLS,
          onEvent: (e) => events.push(e),
        });
        assert.equal(res.message.content, "I will read it.");
        assert.deepEqual(res.message.toolCalls, [
          { id: "toolu_1", name: "read_file", arguments: '{"path":"src/index.ts"}' },
          { id: "toolu_2", name: "list_dir", arguments: "{}" },
        ]);
        assert.equal(res.finishReason, "tool_calls");
        assert.deepEqual(
          { ...res.usage, costUsd: undefined },
          { inputTokens: 1000, outputTokens: 50, cachedInputTokens: 600, costUsd: undefined },
        );
        assert.ok(Math.abs((res.usage.costUsd ?? 0) - (400 * 3 + 600 * 0.3 + 50 * 15) / 1e6) < 1e-12);
        const text = events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("");
        assert.equal(text, "I will read it.");
        const args0 = events
          .flatMap((e) => (e.type === "tool_call_delta" && e.index === 0 ? [e.argumentsDelta ?? ""] : []))
          .join("");
        assert.equal(args0, '{"path":"src/index.ts"}');
        const req = requests[0]!;
        assert.equal(req.path, "/v1/messages");
        assert.equal(req.headers["x-api-key"], "sk-ant-test");
        // Prompt-cache breakpoints: the system prompt, and the request's last block.
        assert.deepEqual(req.body.system, [
          { type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } },
        ]);
        assert.equal(req.body.max_tokens, 8192);
        assert.equal(req.body.stream, true);
        assert.deepEqual(req.body.tools[0], {
          name: "read_file",
          description: "Read a file",
          input_schema: TOOLS[0]!.parameters,
        });
        assert.deepEqual(req.body.messages, [
          {
            role: "user",
            content: [{ type: "text", text: "read index", cache_control: { type: "ephemeral" } }],
          },
        ]);
      },
    );
  });

  test("sent with the SDK's headers; a deprecated model is named once, and nothing is printed", async () => {
    await withServer([{ content: "a" }, { content: "b" }, { content: "c" }], async (provider, requests) => {
      const printed: unknown[] = [];
      const warn = console.warn;
      console.warn = (...args: unknown[]) => printed.push(args);
      try {
        const p = provider({ model: "claude-sonnet-4-5-20250929" });
        const events: StreamEvent[] = [];
        for (const stream of [true, true, false])
          await (stream ? p : provider({ model: "claude-sonnet-4-5", stream: false })).complete({
            messages: [{ role: "user", content: "x" }],
            tools: [],
            onEvent: (e) => events.push(e),
          });
        const notices = events.flatMap((e) => (e.type === "notice" ? [e.message] : []));
        // One per provider (a run has one): two here, for the two providers.
        assert.deepEqual(notices, [
          "claude-sonnet-4-5-20250929 is deprecated and reaches its end of life on November 30th, 2026 (docs.anthropic.com/en/docs/resources/model-deprecations)",
          "claude-sonnet-4-5 is deprecated and reaches its end of life on November 30th, 2026 (docs.anthropic.com/en/docs/resources/model-deprecations)",
        ]);
        assert.deepEqual(printed, [], "the SDK's own warning at every request");
      } finally {
        console.warn = warn;
      }
      for (const r of requests) {
        assert.equal(r.headers["x-api-key"], "sk-ant-test");
        assert.match(String(r.headers["anthropic-version"]), /^\d{4}-\d{2}-\d{2}$/);
        assert.match(String(r.headers["content-type"]), /^application\/json/);
      }
      assert.deepEqual(
        requests.map((r) => r.body.stream),
        [true, true, false],
      );
    });
  });

  test("non-streaming mode, no tools key when none, maxTokens and stop forwarded", async () => {
    await withServer(
      [{ content: "Final words.", usage: { inputTokens: 10, outputTokens: 2 } }],
      async (provider, requests) => {
        const res = await provider({ stream: false }).complete({
          messages: [{ role: "user", content: "hi" }],
          tools: [],
          maxTokens: 99,
          stop: ["\nObservation:"],
        });
        assert.equal(res.message.content, "Final words.");
        assert.equal(res.finishReason, "stop");
        assert.equal(res.usage.inputTokens, 10);
        const body = requests[0]!.body;
        assert.equal(body.stream, false);
        assert.equal("tools" in body, false);
        assert.equal(body.max_tokens, 99);
        assert.deepEqual(body.stop_sequences, ["\nObservation:"]);
      },
    );
  });

  test("a full tool round trip sends tool_result blocks", async () => {
    await withServer(
      [
        { toolCalls: [{ id: "toolu_9", name: "read_file", arguments: { path: "a" } }] },
        { content: "It says A." },
      ],
      async (provider, requests) => {
        const p = provider();
        const history: Message[] = [{ role: "user", content: "what is in a?" }];
        const first = await p.complete({ messages: history, tools: TOOLS });
        history.push(first.message, { role: "tool", toolCallId: "toolu_9", name: "read_file", content: "A" });
        const second = await p.complete({ messages: history, tools: TOOLS });
        assert.equal(second.message.content, "It says A.");
        assert.deepEqual(requests[1]!.body.messages.slice(1), [
          {
            role: "assistant",
            content: [{ type: "tool_use", id: "toolu_9", name: "read_file", input: { path: "a" } }],
          },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: "toolu_9",
                content: "A",
                cache_control: { type: "ephemeral" },
              },
            ],
          },
        ]);
      },
    );
  });

  test("429 then success: retry event with the server's delay", async () => {
    await withServer(
      [{ status: 429, headers: { "retry-after-ms": "80" }, errorMessage: "slow down" }, { content: "ok" }],
      async (provider, requests) => {
        const events: StreamEvent[] = [];
        const res = await provider().complete({
          messages: [{ role: "user", content: "x" }],
          tools: [],
          onEvent: (e) => events.push(e),
        });
        assert.equal(res.message.content, "ok");
        assert.equal(requests.length, 2);
        assert.deepEqual(
          events.filter((e) => e.type === "retry"),
          [{ type: "retry", attempt: 1, delayMs: 80, error: "HTTP 429: slow down" }],
        );
      },
    );
  });

  test("401 fails at once with a clear message", async () => {
    await withServer([{ status: 401, errorMessage: "invalid x-api-key" }], async (provider, requests) => {
      await assert.rejects(
        provider().complete({ messages: [{ role: "user", content: "x" }], tools: [] }),
        (err: unknown) => {
          assert.ok(err instanceof ModelError);
          assert.equal(err.status, 401);
          assert.match(
            err.message,
            /^anthropic request to http:\/\/127\.0\.0\.1:\d+\/v1\/messages \(model claude-test\) failed: HTTP 401: invalid x-api-key\. Hint: check the API key$/,
          );
          return true;
        },
      );
      assert.equal(requests.length, 1);
    });
  });

  test("a stalled stream times out with a clear error", async () => {
    await withServer([{ content: "abcdefgh", chunkSize: 2, stallAfterEvents: 3 }], async (provider) => {
      await assert.rejects(
        provider({ timeoutMs: 150, maxRetries: 0 }).complete({
          messages: [{ role: "user", content: "x" }],
          tools: [],
        }),
        /failed: timed out: no data from the server for 150 ms\. Hint: the server did not answer in time/,
      );
    });
  });

  test("aborting a streaming request rejects with AbortError", async () => {
    await withServer([{ content: "abcdefgh", chunkSize: 2, stallAfterEvents: 3 }], async (provider) => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      await assert.rejects(
        provider().complete({
          messages: [{ role: "user", content: "x" }],
          tools: [],
          signal: controller.signal,
        }),
        { name: "AbortError" },
      );
    });
  });

  test("a stream cut mid-way is retried", async () => {
    await withServer(
      [{ content: "aaaaaaaaaaaaaaaaaaaa", chunkSize: 2, cutAfterEvents: 4 }, { content: "whole" }],
      async (provider, requests) => {
        const res = await provider().complete({ messages: [{ role: "user", content: "x" }], tools: [] });
        assert.equal(res.message.content, "whole");
        assert.equal(requests.length, 2);
      },
    );
  });
});
