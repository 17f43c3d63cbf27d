import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { OpenAIProvider } from "../openai.js";
import { startScriptedServer } from "./scripted-server.js";

function post(url: string, body: unknown) {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** A chat request a real server accepts, with `extra` fields. */
const chat = (extra: Record<string, unknown> = {}) => ({
  model: "m",
  messages: [{ role: "user", content: "hi" }],
  ...extra,
});

/** The JSON payloads of an SSE body, in order. */
function sseData(text: string): string[] {
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((block) =>
      block
        .split("\n")
        .find((l) => l.startsWith("data: "))!
        .slice(6),
    );
}

describe("scripted server", () => {
  test("GET /v1/models and unknown routes", async () => {
    const server = await startScriptedServer({ script: [], model: "tiny" });
    try {
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const models = (await (await fetch(`${server.url}/models`)).json()) as any;
      assert.deepEqual(
        models.data.map((m: { id: string }) => m.id),
        ["tiny"],
      );
      assert.equal((await fetch(`${server.origin}/nope`)).status, 404);
    } finally {
      await server.close();
    }
  });

  test("OpenAI SSE: role chunk, content pieces, tool-call deltas split across chunks, finish, usage, [DONE]", async () => {
    const server = await startScriptedServer([
      {
        content: "abcdef",
        chunkSize: 4,
        toolCalls: [{ id: "c1", name: "f", arguments: { k: "vvvvvv" } }],
        usage: { inputTokens: 9, outputTokens: 4 },
      },
    ]);
    try {
      const res = await post(
        `${server.url}/chat/completions`,
        chat({ stream: true, stream_options: { include_usage: true } }),
      );
      assert.equal(res.headers.get("content-type"), "text/event-stream");
      const data = sseData(await res.text());
      assert.equal(data.at(-1), "[DONE]");
      const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
      assert.ok(chunks.every((c) => c.object === "chat.completion.chunk" && c.id === chunks[0].id));
      assert.deepEqual(chunks[0].choices[0].delta, { role: "assistant", content: "" });
      assert.deepEqual(
        chunks.slice(1, 3).map((c) => c.choices[0].delta.content),
        ["abcd", "ef"],
      );
      const toolDeltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
      assert.deepEqual(toolDeltas[0], {
        index: 0,
        id: "c1",
        type: "function",
        function: { name: "f", arguments: "" },
      });
      assert.ok(toolDeltas.length >= 3, "arguments split over several chunks");
      assert.equal(toolDeltas.map((d: any) => d.function.arguments).join(""), '{"k":"vvvvvv"}');
      assert.equal(chunks.at(-2).choices[0].finish_reason, "tool_calls");
      assert.deepEqual(chunks.at(-1).choices, []);
      assert.deepEqual(chunks.at(-1).usage, { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 });
    } finally {
      await server.close();
    }
  });

  test("no usage chunk unless asked; non-streaming JSON; script exhaustion is a 400", async () => {
    const server = await startScriptedServer([{ content: "x" }, { content: "y" }]);
    try {
      const streamed = sseData(
        await (await post(`${server.url}/chat/completions`, chat({ stream: true }))).text(),
      );
      assert.equal(streamed.filter((d) => d.includes('"usage"')).length, 0);
      const json = (await (
        await post(`${server.url}/chat/completions`, chat({ stream: false }))
      ).json()) as any;
      assert.equal(json.object, "chat.completion");
      assert.equal(json.choices[0].message.content, "y");
      assert.equal(typeof json.usage.prompt_tokens, "number");
      const over = await post(`${server.url}/chat/completions`, chat());
      assert.equal(over.status, 400);
      assert.match(
        ((await over.json()) as any).error.message,
        /the script has run out \(2 turns, request #3\)/,
      );
      assert.equal(server.requests.length, 3);
    } finally {
      await server.close();
    }
  });

  test("Anthropic SSE event sequence", async () => {
    const server = await startScriptedServer([{ content: "hi", toolCalls: [{ name: "f", arguments: {} }] }]);
    try {
      const text = await (
        await post(`${server.origin}/v1/messages`, chat({ stream: true, max_tokens: 10 }))
      ).text();
      const types = text
        .split("\n\n")
        .filter(Boolean)
        .map((b) => b.split("\n")[0]);
      assert.deepEqual(types, [
        "event: message_start",
        "event: content_block_start",
        "event: content_block_delta",
        "event: content_block_stop",
        "event: content_block_start",
        "event: content_block_delta",
        "event: content_block_stop",
        "event: message_delta",
        "event: message_stop",
      ]);
      assert.match(text, /"stop_reason":"tool_use"/);
    } finally {
      await server.close();
    }
  });

  test("status, headers and raw bodies on request", async () => {
    const server = await startScriptedServer([
      { status: 429, headers: { "retry-after": "3" }, errorMessage: "slow" },
      { body: "<html>oops</html>", contentType: "text/html", status: 200 },
    ]);
    try {
      const limited = await post(`${server.url}/chat/completions`, chat());
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get("retry-after"), "3");
      assert.equal(((await limited.json()) as any).error.message, "slow");
      const page = await post(`${server.url}/chat/completions`, chat());
      assert.equal(await page.text(), "<html>oops</html>");
    } finally {
      await server.close();
    }
  });

  test("fast enough for benchmarks: 200 streamed steps through the real provider", async () => {
    const server = await startScriptedServer(() => ({
      content: "Thought: next\nAction: read_file",
      toolCalls: [{ name: "read_file", arguments: { path: "src/index.ts" } }],
    }));
    try {
      const provider = new OpenAIProvider({ baseURL: server.url, model: "bench" });
      const tools = [{ name: "read_file", description: "r", parameters: { type: "object" } }];
      await provider.complete({ messages: [{ role: "user", content: "warm up" }], tools });
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < 200; i++) {
        const res = await provider.complete({ messages: [{ role: "user", content: `step ${i}` }], tools });
        assert.equal(res.message.toolCalls?.length, 1);
      }
      const wall = performance.now() - started;
      const used = process.cpuUsage(cpu);
      // Client and server share this process; together they must stay far below 10 ms a step.
      if (process.env.HANDS_BENCH_LOG)
        console.log(
          `200 steps: ${wall.toFixed(0)} ms wall, ${((used.user + used.system) / 1000).toFixed(0)} ms CPU`,
        );
      assert.ok(wall < 5000, `200 steps took ${wall.toFixed(0)} ms`);
      assert.ok((used.user + used.system) / 1000 / 200 < 10, "CPU per step");
    } finally {
      await server.close();
    }
  });

  test("a body a real server would reject is answered 400, printed, and fails close()", async () => {
    const server = await startScriptedServer(() => ({ content: "never" }));
    const call = { id: "c1", type: "function", function: { name: "f", arguments: "{}" } };
    const bad: Array<[string, string, RegExp]> = [
      [
        "/v1/chat/completions",
        '{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[',
        /invalid JSON/,
      ],
      ["/v1/chat/completions", JSON.stringify({ messages: [{ role: "user", content: "x" }] }), /model/],
      [
        "/v1/chat/completions",
        JSON.stringify(chat({ messages: [{ role: "robot", content: "x" }] })),
        /role "robot"/,
      ],
      [
        "/v1/chat/completions",
        JSON.stringify(
          chat({
            messages: [
              { role: "assistant", content: null, tool_calls: [call] },
              { role: "user", content: "x" },
            ],
          }),
        ),
        /must be followed by tool messages/,
      ],
      [
        "/v1/chat/completions",
        JSON.stringify(
          chat({
            messages: [
              { role: "user", content: "x" },
              { role: "tool", tool_call_id: "zz", content: "r" },
            ],
          }),
        ),
        /answers no preceding tool call/,
      ],
      [
        "/v1/messages",
        JSON.stringify({
          model: "m",
          max_tokens: 5,
          messages: [
            { role: "user", content: "x" },
            { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
            { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: "r" }] },
          ],
        }),
        /tool_result "t2" answers no tool_use/,
      ],
      [
        "/v1/chat/completions",
        JSON.stringify(
          chat({ tools: [{ type: "function", function: { name: "read file", parameters: {} } }] }),
        ),
        /function\.name "read file" is not valid/,
      ],
      [
        "/v1/chat/completions",
        JSON.stringify(
          chat({ tools: [{ type: "function", function: { name: "f", parameters: { type: "string" } } }] }),
        ),
        /tools\[0\] \(f\): invalid schema: must be a JSON Schema of type "object"/,
      ],
      [
        "/v1/chat/completions",
        JSON.stringify(
          chat({
            tools: [
              {
                type: "function",
                function: { name: "f", parameters: { type: "object", properties: { p: "string" } } },
              },
            ],
          }),
        ),
        /properties\.p is not a schema/,
      ],
    ];
    try {
      for (const [path, body, why] of bad) {
        const res = await fetch(`${server.origin}${path}`, { method: "POST", body });
        assert.equal(res.status, 400, body);
        const answer = (await res.json()) as { error: { message: string } };
        assert.match(answer.error.message, why);
      }
    } catch (err) {
      await server.close().catch(() => {});
      throw err;
    }
    assert.deepEqual(
      server.invalid.map((r) => r.request),
      [1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    await assert.rejects(
      server.close(),
      /received 9 invalid request\(s\):\n {2}#1 \/v1\/chat\/completions: invalid JSON/,
    );
  });

  test("a valid history with answered tool calls passes, in both protocols", async () => {
    const server = await startScriptedServer(() => ({ content: "ok" }));
    const call = { id: "c1", type: "function", function: { name: "f", arguments: "{}" } };
    const openai = chat({
      messages: [
        { role: "system", content: "s" },
        { role: "user", content: "x" },
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: "c1", content: "r" },
      ],
    });
    assert.equal((await post(`${server.url}/chat/completions`, openai)).status, 200);
    const anthropic = {
      model: "m",
      max_tokens: 5,
      system: "s",
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "r" }] },
      ],
    };
    assert.equal((await post(`${server.origin}/v1/messages`, anthropic)).status, 200);
    await server.close();
  });
});
