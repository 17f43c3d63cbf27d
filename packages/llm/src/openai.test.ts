import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { OpenAIProvider, type OpenAIProviderOptions } from "./openai.js";
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
const USER: Message[] = [{ role: "user", content: "hi" }];
const FAST = { baseDelayMs: 5, maxDelayMs: 2000 };

/** Runs `fn` against a fresh scripted server and closes it afterwards. */
async function withServer<T>(
  script: ServerScript,
  fn: (ctx: {
    url: string;
    requests: Awaited<ReturnType<typeof startScriptedServer>>["requests"];
    provider: (o?: Partial<OpenAIProviderOptions>) => OpenAIProvider;
  }) => Promise<T>,
): Promise<T> {
  const server = await startScriptedServer(script);
  try {
    return await fn({
      url: server.url,
      requests: server.requests,
      provider: (o = {}) =>
        new OpenAIProvider({ baseURL: server.url, apiKey: "sk-test", model: "gpt-4o", retry: FAST, ...o }),
    });
  } finally {
    await server.close();
  }
}

describe("OpenAIProvider over HTTP", () => {
  test("streams text: deltas, usage with cached tokens, cost", async () => {
    await withServer(
      [
        {
          content: "Hello from the scripted model!",
          chunkSize: 5,
          usage: { inputTokens: 100, outputTokens: 20, cachedInputTokens: 40 },
        },
      ],
      async ({ provider, requests }) => {
        const events: StreamEvent[] = [];
        const res = await provider().complete({ messages: USER, tools: [], onEvent: (e) => events.push(e) });
        assert.equal(res.message.content, "Hello from the scripted model!");
        assert.equal(res.message.toolCalls, undefined);
        assert.equal(res.finishReason, "stop");
        const deltas = events.filter((e) => e.type === "text_delta");
        assert.ok(deltas.length >= 6, `expected several deltas, got ${deltas.length}`);
        assert.equal(
          deltas.map((e) => (e.type === "text_delta" ? e.text : "")).join(""),
          res.message.content,
        );
        assert.equal(res.usage.inputTokens, 100);
        assert.equal(res.usage.outputTokens, 20);
        assert.equal(res.usage.cachedInputTokens, 40);
        // gpt-4o: 60 fresh × $2.5 + 40 cached × $1.25 + 20 out × $10, per million.
        assert.ok(Math.abs((res.usage.costUsd ?? 0) - (60 * 2.5 + 40 * 1.25 + 20 * 10) / 1e6) < 1e-12);
        assert.ok(res.durationMs > 0);
        const body = requests[0]!.body;
        assert.equal(body.stream, true);
        assert.deepEqual(body.stream_options, { include_usage: true });
        assert.equal("tools" in body, false, "no tools key when the list is empty");
        assert.equal(requests[0]!.headers.authorization, "Bearer sk-test");
      },
    );
  });

  test("a streamed request carries exactly the headers the SDK sends (its own request path, non-streaming)", async () => {
    await withServer(
      [{ content: "a" }, { content: "b" }, { content: "c" }],
      async ({ provider, requests }) => {
        const extraHeaders = { "X-Team": "hands", "OpenAI-Beta": "assistants=v2" };
        await provider({ extraHeaders }).complete({ messages: USER, tools: TOOLS });
        await provider({ extraHeaders }).complete({ messages: USER, tools: TOOLS });
        await provider({ extraHeaders, stream: false }).complete({ messages: USER, tools: TOOLS });
        const shown = (i: number) => {
          const { "content-length": length, ...rest } = requests[i]!.headers;
          assert.equal(Number(length), Buffer.byteLength(JSON.stringify(requests[i]!.body)));
          return rest;
        };
        const sdk = shown(2);
        assert.equal(sdk.authorization, "Bearer sk-test");
        assert.equal(sdk["x-team"], "hands");
        assert.match(String(sdk["user-agent"]), /^OpenAI\/JS /);
        assert.deepEqual(shown(0), sdk);
        assert.deepEqual(shown(1), sdk, "the second request of a client too");
        assert.equal(requests[0]!.body.stream, true);
      },
    );
  });

  test("non-streaming mode", async () => {
    await withServer(
      [{ content: "plain json", usage: { inputTokens: 7, outputTokens: 3 } }],
      async ({ provider, requests }) => {
        const events: StreamEvent[] = [];
        const res = await provider({ stream: false, model: "my-local-model" }).complete({
          messages: USER,
          tools: TOOLS,
          onEvent: (e) => events.push(e),
        });
        assert.equal(res.message.content, "plain json");
        assert.deepEqual(res.usage, { inputTokens: 7, outputTokens: 3 });
        assert.equal(res.usage.costUsd, undefined, "unknown model has no cost");
        assert.equal(requests[0]!.body.stream, false);
        assert.deepEqual(events, [{ type: "text_delta", text: "plain json" }]);
      },
    );
  });

  test("parallel tool calls interleaved across chunks are assembled by index", async () => {
    await withServer(
      [
        {
          content: "Reading both.",
          toolCalls: [
            { id: "call_a", name: "read_file", arguments: { path: "src/some/long/path/a.ts" } },
            { id: "call_b", name: "list_dir", arguments: { path: "packages/llm/src" } },
          ],
          chunkSize: 4,
          interleaveToolCalls: true,
        },
      ],
      async ({ provider, requests }) => {
        const events: StreamEvent[] = [];
        const res = await provider().complete({
          messages: USER,
          tools: TOOLS,
          onEvent: (e) => events.push(e),
        });
        assert.equal(res.finishReason, "tool_calls");
        assert.equal(res.message.content, "Reading both.");
        assert.deepEqual(res.message.toolCalls, [
          { id: "call_a", name: "read_file", arguments: '{"path":"src/some/long/path/a.ts"}' },
          { id: "call_b", name: "list_dir", arguments: '{"path":"packages/llm/src"}' },
        ]);
        const toolDeltas = events.filter((e) => e.type === "tool_call_delta");
        // Interleaving really happened: index 1 appears before index 0 is finished.
        const order = toolDeltas.map((e) => (e.type === "tool_call_delta" ? e.index : -1));
        assert.ok(order.lastIndexOf(0) > order.indexOf(1), `order ${order.join(",")}`);
        assert.deepEqual(requests[0]!.body.tools[0], {
          type: "function",
          function: { name: "read_file", description: "Read a file", parameters: TOOLS[0]!.parameters },
        });
      },
    );
  });

  test("maps history to the wire format and forwards request options", async () => {
    await withServer([{ content: "ok" }], async ({ provider, requests }) => {
      const messages: Message[] = [
        { role: "system", content: "be brief" },
        { role: "user", content: "read a" },
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "c1", name: "read_file", arguments: '{"path":"a"}' }],
        },
        { role: "tool", toolCallId: "c1", name: "read_file", content: "file body" },
        { role: "assistant", content: "done" },
      ];
      await provider({ extraHeaders: { "x-team": "hands" } }).complete({
        messages,
        tools: TOOLS,
        maxTokens: 123,
        temperature: 0.2,
        stop: ["END"],
      });
      const body = requests[0]!.body;
      assert.deepEqual(body.messages, [
        { role: "system", content: "be brief" },
        { role: "user", content: "read a" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: "file body" },
        { role: "assistant", content: "done" },
      ]);
      assert.equal(body.max_tokens, 123);
      assert.equal(body.temperature, 0.2);
      assert.deepEqual(body.stop, ["END"]);
      assert.equal(requests[0]!.headers["x-team"], "hands");
    });
  });

  test("recovers tool calls printed as text, only for known tools", async () => {
    await withServer(
      [
        {
          content:
            'Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "x.ts"}}\n</tool_call>',
        },
        { content: '{"name": "rm_rf", "arguments": {}}' },
      ],
      async ({ provider }) => {
        const p = provider();
        const res = await p.complete({ messages: USER, tools: TOOLS });
        assert.equal(res.message.content, "Let me look.");
        assert.equal(res.finishReason, "tool_calls");
        assert.equal(res.message.toolCalls?.length, 1);
        assert.equal(res.message.toolCalls?.[0]?.name, "read_file");
        assert.deepEqual(JSON.parse(res.message.toolCalls![0]!.arguments), { path: "x.ts" });
        const unknown = await p.complete({ messages: USER, tools: TOOLS });
        assert.equal(unknown.message.toolCalls, undefined);
        assert.equal(unknown.message.content, '{"name": "rm_rf", "arguments": {}}');
      },
    );
  });

  test("finish reason length is reported", async () => {
    await withServer([{ content: "cut", finishReason: "length" }], async ({ provider }) => {
      assert.equal((await provider().complete({ messages: USER, tools: [] })).finishReason, "length");
    });
  });
});

describe("OpenAIProvider failures", () => {
  test("429 with Retry-After: waits as told, emits a retry event, then succeeds", async () => {
    await withServer(
      [
        { status: 429, headers: { "retry-after": "1" }, errorMessage: "Rate limit reached" },
        { content: "after wait" },
      ],
      async ({ provider, requests }) => {
        const events: StreamEvent[] = [];
        const started = performance.now();
        const res = await provider().complete({ messages: USER, tools: [], onEvent: (e) => events.push(e) });
        const elapsed = performance.now() - started;
        assert.equal(res.message.content, "after wait");
        assert.equal(requests.length, 2);
        const retries = events.filter((e) => e.type === "retry");
        assert.equal(retries.length, 1);
        assert.deepEqual(retries[0], {
          type: "retry",
          attempt: 1,
          delayMs: 1000,
          error: "HTTP 429: Rate limit reached",
        });
        assert.ok(elapsed >= 990, `waited only ${elapsed} ms`);
      },
    );
  });

  test("retry-after-ms is honoured too", async () => {
    await withServer(
      [{ status: 503, headers: { "retry-after-ms": "150" } }, { content: "ok" }],
      async ({ provider }) => {
        const events: StreamEvent[] = [];
        const started = performance.now();
        await provider().complete({ messages: USER, tools: [], onEvent: (e) => events.push(e) });
        assert.ok(performance.now() - started >= 145);
        assert.equal(events.find((e) => e.type === "retry")?.type === "retry" && events[0]?.type, "retry");
        assert.deepEqual(
          events.filter((e) => e.type === "retry").map((e) => (e.type === "retry" ? e.delayMs : 0)),
          [150],
        );
      },
    );
  });

  test("500 on every attempt: a clear ModelError after maxRetries + 1 attempts", async () => {
    const turns = Array.from({ length: 4 }, () => ({ status: 500, errorMessage: "the engine is on fire" }));
    await withServer(turns, async ({ provider, requests, url }) => {
      const events: StreamEvent[] = [];
      await assert.rejects(
        provider({ maxRetries: 3 }).complete({ messages: USER, tools: [], onEvent: (e) => events.push(e) }),
        (err: unknown) => {
          assert.ok(err instanceof ModelError);
          assert.equal(err.status, 500);
          assert.equal(
            err.message,
            `openai request to ${url}/chat/completions (model gpt-4o) failed after 4 attempts: HTTP 500: the engine is on fire. Hint: the server failed; try again later`,
          );
          return true;
        },
      );
      assert.equal(requests.length, 4);
      assert.equal(events.filter((e) => e.type === "retry").length, 3);
    });
  });

  test("401 is not retried and the hint names the API key", async () => {
    await withServer(
      [{ status: 401, errorMessage: "Incorrect API key provided" }, { content: "never" }],
      async ({ provider, requests }) => {
        await assert.rejects(
          provider().complete({ messages: USER, tools: [] }),
          /failed: HTTP 401: Incorrect API key provided\. Hint: check the API key/,
        );
        assert.equal(requests.length, 1);
      },
    );
  });

  test("404 hints at the model name and base URL", async () => {
    await withServer([{ status: 404, errorMessage: "model not found" }], async ({ provider, url }) => {
      await assert.rejects(
        provider({ model: "gpt-40" }).complete({ messages: USER, tools: [] }),
        new RegExp(
          `HTTP 404: model not found\\. Hint: check the model name \\(gpt-40\\) and the base URL \\(${url}\\)`,
        ),
      );
    });
  });

  test("garbage JSON body: retried like a 5xx, then a clear ModelError", async () => {
    const garbage = { body: "{not json at all", contentType: "application/json" };
    await withServer([garbage, garbage], async ({ provider, requests }) => {
      await assert.rejects(
        provider({ stream: false, maxRetries: 1 }).complete({ messages: USER, tools: [] }),
        (err: unknown) => {
          assert.ok(err instanceof ModelError);
          assert.match(err.message, /failed after 2 attempts: malformed response/);
          return true;
        },
      );
      assert.equal(requests.length, 2);
    });
  });

  test("an HTML page instead of JSON", async () => {
    const html = "<!DOCTYPE html><html><head><title>Welcome to nginx</title></head><body>hi</body></html>";
    await withServer(
      [
        { body: html, contentType: "text/html" },
        { body: html, contentType: "text/html" },
      ],
      async ({ provider, url }) => {
        await assert.rejects(
          provider({ stream: false }).complete({ messages: USER, tools: [] }),
          new RegExp(
            `expected a chat completion object, got: HTML page "Welcome to nginx".*Hint: is ${url} an`,
          ),
        );
        await assert.rejects(
          provider().complete({ messages: USER, tools: [] }),
          /the server answered 200 but the event stream held no data/,
        );
      },
    );
  });

  test("a 502 HTML error page is retried and summarised", async () => {
    const page = {
      status: 502,
      body: "<html><title>502 Bad Gateway</title><body>bad</body></html>",
      contentType: "text/html",
    };
    await withServer([page, page], async ({ provider, requests }) => {
      await assert.rejects(
        provider({ maxRetries: 1 }).complete({ messages: USER, tools: [] }),
        /after 2 attempts: HTTP 502: HTML page "502 Bad Gateway"/,
      );
      assert.equal(requests.length, 2);
    });
  });

  test("a stream cut mid-way is retried; the retry succeeds", async () => {
    await withServer(
      [
        { content: "partial answer that never ends", chunkSize: 4, cutAfterEvents: 3 },
        { content: "complete" },
      ],
      async ({ provider, requests }) => {
        const events: StreamEvent[] = [];
        const res = await provider().complete({ messages: USER, tools: [], onEvent: (e) => events.push(e) });
        assert.equal(res.message.content, "complete");
        assert.equal(requests.length, 2);
        const kinds = events.map((e) => e.type);
        // Partial deltas, then the retry notice (which voids them), then the good deltas.
        assert.ok(kinds.indexOf("text_delta") < kinds.indexOf("retry"));
        assert.ok(kinds.lastIndexOf("text_delta") > kinds.indexOf("retry"));
      },
    );
  });

  test("a stream cut on every attempt ends in a clear ModelError", async () => {
    const cut = { content: "abcdefghijklmnop", chunkSize: 2, cutAfterEvents: 4 };
    await withServer([cut, cut], async ({ provider }) => {
      await assert.rejects(
        provider({ maxRetries: 1 }).complete({ messages: USER, tools: [] }),
        (err: unknown) => {
          assert.ok(err instanceof ModelError);
          assert.match(
            err.message,
            /failed after 2 attempts: (the connection closed unexpectedly|the event stream ended)/,
          );
          return true;
        },
      );
    });
  });

  test("a stream that ends cleanly without finishing is an error", async () => {
    await withServer([{ content: "abcdefgh", chunkSize: 2, endAfterEvents: 3 }], async ({ provider }) => {
      await assert.rejects(
        provider({ maxRetries: 0 }).complete({ messages: USER, tools: [] }),
        /the event stream ended before the response was complete/,
      );
    });
  });

  test("connection refused: retried, then an error asking whether the server runs", async () => {
    const server = await startScriptedServer([]);
    const url = server.url;
    await server.close();
    const events: StreamEvent[] = [];
    const provider = new OpenAIProvider({ baseURL: url, model: "m", maxRetries: 2, retry: FAST });
    await assert.rejects(
      provider.complete({ messages: USER, tools: [], onEvent: (e) => events.push(e) }),
      (err: unknown) => {
        assert.ok(err instanceof ModelError);
        assert.equal(err.status, undefined);
        assert.match(err.message, /failed after 3 attempts: connection/);
        assert.match(err.message, new RegExp(`Hint: is the server running at ${url}\\?`));
        return true;
      },
    );
    assert.equal(events.filter((e) => e.type === "retry").length, 2);
  });

  test("per-attempt timeout", async () => {
    await withServer([{ content: "late", delayMs: 3000 }], async ({ provider }) => {
      const started = performance.now();
      await assert.rejects(
        provider({ timeoutMs: 150, maxRetries: 0 }).complete({ messages: USER, tools: [] }),
        /failed: timed out/,
      );
      assert.ok(performance.now() - started < 2000);
    });
  });

  test("a stream that stalls mid-way times out instead of hanging, and is retried", async () => {
    await withServer(
      [{ content: "abcdefgh", chunkSize: 2, stallAfterEvents: 2 }, { content: "fresh" }],
      async ({ provider, requests }) => {
        const events: StreamEvent[] = [];
        const started = performance.now();
        const res = await provider({ timeoutMs: 200, maxRetries: 1 }).complete({
          messages: USER,
          tools: [],
          onEvent: (e) => events.push(e),
        });
        assert.equal(res.message.content, "fresh");
        assert.equal(requests.length, 2);
        const retry = events.find((e) => e.type === "retry");
        assert.equal(retry?.type === "retry" && retry.error, "timed out: no data from the server for 200 ms");
        assert.ok(performance.now() - started < 2000);
      },
    );
  });

  test("aborting stops a pending request at once", async () => {
    await withServer([{ content: "slow", delayMs: 5000 }], async ({ provider }) => {
      const controller = new AbortController();
      const started = performance.now();
      setTimeout(() => controller.abort(), 50);
      await assert.rejects(provider().complete({ messages: USER, tools: [], signal: controller.signal }), {
        name: "AbortError",
      });
      assert.ok(performance.now() - started < 2500, "well before the 5 s reply");
    });
  });

  test("aborting mid-stream rejects with AbortError, not a retry", async () => {
    await withServer(
      [{ content: "abcdefgh", chunkSize: 2, stallAfterEvents: 2 }],
      async ({ provider, requests }) => {
        const controller = new AbortController();
        const events: StreamEvent[] = [];
        const pending = provider().complete({
          messages: USER,
          tools: [],
          signal: controller.signal,
          onEvent: (e) => {
            events.push(e);
            if (e.type === "text_delta") controller.abort();
          },
        });
        await assert.rejects(pending, { name: "AbortError" });
        assert.equal(requests.length, 1);
        assert.equal(events.filter((e) => e.type === "retry").length, 0);
      },
    );
  });

  test("aborting stops a backoff at once", async () => {
    await withServer([{ status: 500 }, { content: "never" }], async ({ provider, requests }) => {
      const controller = new AbortController();
      const started = performance.now();
      const p = provider({ retry: { baseDelayMs: 20_000, maxDelayMs: 20_000, random: () => 1 } });
      const pending = p.complete({
        messages: USER,
        tools: [],
        signal: controller.signal,
        onEvent: (e) => {
          if (e.type === "retry") controller.abort();
        },
      });
      await assert.rejects(pending, { name: "AbortError" });
      assert.ok(performance.now() - started < 2500, "well before the 20 s backoff");
      assert.equal(requests.length, 1);
    });
  });
});

describe("OpenAIProvider reuse", () => {
  let server: Awaited<ReturnType<typeof startScriptedServer>>;
  before(async () => {
    server = await startScriptedServer(() => ({ content: "pong" }));
  });
  after(() => server.close());

  test("one provider serves many requests over keep-alive", async () => {
    const provider = new OpenAIProvider({ baseURL: server.url, model: "gpt-4o-mini" });
    for (let i = 0; i < 20; i++) {
      const res = await provider.complete({ messages: USER, tools: [] });
      assert.equal(res.message.content, "pong");
    }
    assert.equal(server.requests.length, 20);
  });
});
