import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AnthropicProvider } from "./anthropic.js";
import { thinkingModeFor } from "./anthropic-thinking.js";
import { OpenAIProvider, type OpenAIProviderOptions } from "./openai.js";
import { ReactProvider } from "./react.js";
import { reasoningParams, splitUnopenedThink, ThinkTagSplitter } from "./reasoning.js";
import {
  type ScriptedServerOptions,
  type ServerScript,
  startScriptedServer,
} from "./testing/scripted-server.js";
import { type Message, ModelError, type StreamEvent, type ToolSchema } from "./types.js";

const TOOLS: ToolSchema[] = [
  {
    name: "run_command",
    description: "Run a shell command",
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
];
const FAST = { baseDelayMs: 5, maxDelayMs: 50 };

async function withServer(
  script: ServerScript,
  fn: (s: Awaited<ReturnType<typeof startScriptedServer>>) => Promise<void>,
  options: Omit<ScriptedServerOptions, "script"> = {},
): Promise<void> {
  const server = await startScriptedServer({ script, ...options });
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

const openai = (url: string, o: Partial<OpenAIProviderOptions> = {}) =>
  new OpenAIProvider({ baseURL: url, apiKey: "sk-test", model: "deepseek-chat", retry: FAST, ...o });

/** One provider call that records its events. */
async function call(
  provider: { complete: OpenAIProvider["complete"] },
  messages: Message[],
  tools = TOOLS,
): Promise<{ res: Awaited<ReturnType<OpenAIProvider["complete"]>>; events: StreamEvent[] }> {
  const events: StreamEvent[] = [];
  const res = await provider.complete({ messages, tools, onEvent: (e) => events.push(e) });
  return { res, events };
}

const joined = (events: StreamEvent[], type: "thinking_delta" | "text_delta") =>
  events.map((e) => (e.type === type ? e.text : "")).join("");

describe("ThinkTagSplitter", () => {
  const whole = "  <think>\nLet me see: Action: run_command\n</think>\n\nThe answer is 4.";
  test("splits a leading think tag wherever the chunks break", () => {
    for (let size = 1; size <= whole.length; size++) {
      const s = new ThinkTagSplitter();
      let thinking = "";
      let answer = "";
      for (let i = 0; i < whole.length; i += size) {
        const p = s.push(whole.slice(i, i + size));
        thinking += p.thinking;
        answer += p.answer;
      }
      const e = s.end();
      thinking += e.thinking;
      answer += e.answer;
      assert.equal(thinking.trim(), "Let me see: Action: run_command", `chunk size ${size}`);
      assert.equal(answer, "The answer is 4.", `chunk size ${size}`);
    }
  });

  test("text that does not open with a tag is all answer, tags later in it included", () => {
    const s = new ThinkTagSplitter();
    const a = s.push("Use <think> tags like <think>this</think>.");
    const e = s.end();
    assert.equal(a.answer + e.answer, "Use <think> tags like <think>this</think>.");
    assert.equal(a.thinking + e.thinking, "");
  });

  test("an unclosed tag (cut at the token limit) leaves no answer; <thinking> works too", () => {
    const s = new ThinkTagSplitter();
    const a = s.push("<thinking>still going");
    const e = s.end();
    assert.equal(a.thinking + e.thinking, "still going");
    assert.equal(a.answer + e.answer, "");
    const short = new ThinkTagSplitter();
    assert.equal(short.push("<th").answer, "");
    assert.equal(short.end().answer, "<th");
  });

  test("a template that opened the tag in the prompt: only the closing tag in the reply", () => {
    assert.deepEqual(splitUnopenedThink("hmm, 2+2\n</think>\n\n4"), { thinking: "hmm, 2+2", answer: "4" });
    assert.equal(splitUnopenedThink("no tags here"), undefined);
  });
});

describe("reasoning over OpenAI-compatible HTTP", () => {
  test("reasoning_content deltas before a tool call: shown, kept, counted, sent back in the loop", async () => {
    await withServer(
      [
        {
          reasoning: "The user wants the files. I should list them.",
          toolCalls: [{ name: "run_command", arguments: { command: "ls" } }],
          chunkSize: 7,
          usage: { inputTokens: 50, outputTokens: 40, reasoningTokens: 30 },
        },
        { content: "Two files." },
      ],
      async (server) => {
        const provider = openai(server.url);
        const history: Message[] = [{ role: "user", content: "list files" }];
        const first = await call(provider, history);
        assert.equal(joined(first.events, "thinking_delta"), "The user wants the files. I should list them.");
        assert.equal(joined(first.events, "text_delta"), "");
        assert.equal(first.res.message.content, "");
        assert.equal(first.res.message.thinking?.text, "The user wants the files. I should list them.");
        assert.equal(first.res.message.thinking?.sendBackAs, "reasoning_content");
        assert.equal(first.res.usage.reasoningTokens, 30);
        assert.equal(first.res.message.toolCalls?.length, 1);
        history.push(first.res.message, {
          role: "tool",
          toolCallId: first.res.message.toolCalls![0]!.id,
          name: "run_command",
          content: "a\nb",
        });
        const second = await call(provider, history);
        assert.equal(second.res.message.content, "Two files.");
        const sent = server.requests[1]!.body.messages[1];
        assert.equal(sent.reasoning_content, "The user wants the files. I should list them.");
      },
      { reasoningEcho: "required" },
    );
  });

  test("a server that requires reasoning_content back refuses a loop that drops it", async () => {
    await withServer(
      [
        { reasoning: "think", toolCalls: [{ name: "run_command", arguments: { command: "ls" } }] },
        { content: "ok" },
      ],
      async (server) => {
        const provider = openai(server.url, { maxRetries: 0 });
        const first = await call(provider, [{ role: "user", content: "go" }]);
        const { thinking: _dropped, ...bare } = first.res.message;
        const history: Message[] = [
          { role: "user", content: "go" },
          bare,
          { role: "tool", toolCallId: bare.toolCalls![0]!.id, name: "run_command", content: "x" },
        ];
        await assert.rejects(
          call(provider, history),
          (e: unknown) => e instanceof ModelError && e.status === 400,
        );
      },
      { reasoningEcho: "required" },
    );
  });

  test("a final answer's reasoning is not sent back where the server rejects it", async () => {
    await withServer(
      [{ reasoning: "easy", content: "4" }, { content: "5" }],
      async (server) => {
        const provider = openai(server.url, { maxRetries: 0 });
        const history: Message[] = [{ role: "user", content: "2+2?" }];
        const first = await call(provider, history, []);
        assert.equal(first.res.message.thinking?.text, "easy");
        assert.equal(first.res.message.thinking?.sendBackAs, undefined);
        history.push(first.res.message, { role: "user", content: "2+3?" });
        const second = await call(provider, history, []);
        assert.equal(second.res.message.content, "5");
        assert.equal(server.requests[1]!.body.messages[1].reasoning_content, undefined);
      },
      { reasoningEcho: "rejected" },
    );
  });

  test("OpenRouter-style reasoning + reasoning_details: text shown once, details sent back as received", async () => {
    await withServer(
      [
        {
          reasoning: "Plan: run ls.",
          reasoningField: "reasoning_details",
          toolCalls: [{ name: "run_command", arguments: { command: "ls" } }],
          chunkSize: 4,
        },
        { content: "done" },
      ],
      async (server) => {
        const provider = openai(server.url, { model: "anthropic/claude-sonnet-4" });
        const first = await call(provider, [{ role: "user", content: "go" }]);
        assert.equal(joined(first.events, "thinking_delta"), "Plan: run ls.");
        const t = first.res.message.thinking;
        assert.equal(t?.text, "Plan: run ls.");
        assert.deepEqual(t?.details, [
          { type: "reasoning.text", text: "Plan: run ls.", index: 0, format: "unknown" },
        ]);
        await call(provider, [
          { role: "user", content: "go" },
          first.res.message,
          {
            role: "tool",
            toolCallId: first.res.message.toolCalls![0]!.id,
            name: "run_command",
            content: "x",
          },
        ]);
        const back = server.requests[1]!.body.messages[1];
        assert.deepEqual(back.reasoning_details, t?.details);
        assert.equal(back.reasoning, "Plan: run ls.");
      },
    );
  });

  test("Ollama-style `reasoning` field, non-streaming", async () => {
    await withServer([{ reasoning: "quick thought", content: "hi" }], async (server) => {
      const { res, events } = await call(
        openai(server.url, { stream: false }),
        [{ role: "user", content: "x" }],
        [],
      );
      assert.equal(res.message.content, "hi");
      assert.equal(res.message.thinking?.text, "quick thought");
      assert.equal(joined(events, "thinking_delta"), "quick thought");
    });
  });

  test("<think> inline: stripped from the answer and from text tool-call recovery", async () => {
    const fake = '{"name": "run_command", "arguments": {"command": "rm -rf /tmp/x"}}';
    await withServer(
      [{ content: `<think>\nMaybe I should call ${fake}\nNo.\n</think>\n\nNothing to do.`, chunkSize: 3 }],
      async (server) => {
        const { res, events } = await call(openai(server.url, { model: "qwen3-8b" }), [
          { role: "user", content: "x" },
        ]);
        assert.equal(res.message.toolCalls, undefined);
        assert.equal(res.message.content, "Nothing to do.");
        assert.equal(res.message.thinking?.source, "think_tag");
        assert.match(res.message.thinking?.text ?? "", /Maybe I should call/);
        assert.doesNotMatch(joined(events, "text_delta"), /think|Maybe/);
      },
    );
  });

  test("a real tool call printed after the thinking is still recovered", async () => {
    const real = '{"name": "run_command", "arguments": {"command": "ls"}}';
    await withServer([{ content: `<think>list first</think>${real}` }], async (server) => {
      const { res } = await call(openai(server.url, { model: "qwen3-8b" }), [{ role: "user", content: "x" }]);
      assert.equal(res.message.toolCalls?.[0]?.name, "run_command");
      assert.equal(res.message.thinking?.text, "list first");
    });
  });

  test("ReAct: a fake Action inside <think> does not become a tool call", async () => {
    await withServer(
      [
        {
          content:
            '<think>I might write\nAction: run_command\nAction Input: {"command": "rm -rf /"}\nbut no.</think>\nThought: nothing to run\nFinal Answer: all good',
        },
      ],
      async (server) => {
        const react = new ReactProvider(
          openai(server.url, { model: "deepseek-r1-distill", textToolCalls: false }),
        );
        const res = await react.complete({ messages: [{ role: "user", content: "check" }], tools: TOOLS });
        assert.equal(res.message.toolCalls, undefined);
        assert.equal(res.message.content, "all good");
        assert.match(res.message.thinking?.text ?? "", /^I might write\nAction: run_command/);
      },
    );
  });

  test("--reasoning maps to each server's switch; a server that refuses it gets a notice, not a 400", async () => {
    assert.deepEqual(reasoningParams("high", "https://api.openai.com/v1", "o3").fields, {
      reasoning_effort: "high",
    });
    assert.deepEqual(reasoningParams("off", "https://api.openai.com/v1", "gpt-5.1").fields, {
      reasoning_effort: "none",
    });
    assert.ok(reasoningParams("off", "https://api.openai.com/v1", "o4-mini").notice);
    assert.ok(reasoningParams("low", "https://api.openai.com/v1", "gpt-4o").notice);
    assert.deepEqual(reasoningParams("off", "https://api.deepseek.com", "deepseek-chat").fields, {
      thinking: { type: "disabled" },
    });
    assert.deepEqual(reasoningParams("off", "http://127.0.0.1:8000/v1", "Qwen/Qwen3-8B").fields, {
      chat_template_kwargs: { enable_thinking: false },
    });
    assert.deepEqual(reasoningParams("medium", "https://openrouter.ai/api/v1", "x/y").fields, {
      reasoning: { effort: "medium" },
    });
    await withServer(
      (req) =>
        req.body.reasoning_effort !== undefined
          ? { status: 400, errorMessage: "Unrecognized request argument supplied: reasoning_effort" }
          : { content: "fine" },
      async (server) => {
        const provider = openai(server.url, { model: "llama3", reasoning: "high" });
        const { res, events } = await call(provider, [{ role: "user", content: "x" }], []);
        assert.equal(res.message.content, "fine");
        assert.equal(server.requests[0]!.body.reasoning_effort, "high");
        assert.equal(server.requests[1]!.body.reasoning_effort, undefined);
        const notice = events.find((e) => e.type === "notice");
        assert.match(notice?.type === "notice" ? notice.message : "", /refused reasoning_effort/);
        await call(provider, [{ role: "user", content: "again" }], []);
        assert.equal(server.requests[2]!.body.reasoning_effort, undefined, "not sent again");
      },
    );
  });
});

describe("Anthropic extended thinking over HTTP", () => {
  const anthropic = (origin: string, reasoning?: "high" | "off") =>
    new AnthropicProvider({
      baseURL: origin,
      apiKey: "sk-ant",
      model: "claude-sonnet-4-5",
      retry: FAST,
      maxRetries: 0,
      ...(reasoning ? { reasoning } : {}),
    });
  const script: ServerScript = [
    {
      reasoning: "I need the listing first.",
      redactedThinking: true,
      content: "Listing.",
      toolCalls: [{ name: "run_command", arguments: { command: "ls" } }],
    },
    { content: "Two files." },
  ];

  // The two forms: a budget (claude-sonnet-4-5), adaptive thinking (claude-opus-4-8, which takes
  // nothing else and shows no thinking text unless asked for it summarized).
  const forms = [
    {
      model: "claude-sonnet-4-5",
      reasoning: "high" as const,
      sent(req: any) {
        assert.equal(req.thinking.type, "enabled");
        assert.equal(
          req.max_tokens - req.thinking.budget_tokens,
          4000,
          "max_tokens raised to fit the budget",
        );
        assert.equal(req.output_config, undefined);
      },
    },
    {
      model: "claude-opus-4-8",
      reasoning: "medium" as const,
      sent(req: any) {
        assert.deepEqual(req.thinking, { type: "adaptive", display: "summarized" });
        assert.deepEqual(req.output_config, { effort: "medium" });
        assert.equal(req.max_tokens, 8192 + 4000, "room for thinking on top of the answer");
      },
    },
  ];
  for (const form of forms)
    for (const stream of [true, false]) {
      test(`${form.model}: thinking shown, its blocks back unmodified with their signatures (${stream ? "stream" : "json"})`, async () => {
        await withServer(script, async (server) => {
          const provider = new AnthropicProvider({
            baseURL: server.origin,
            apiKey: "k",
            model: form.model,
            retry: FAST,
            maxRetries: 0,
            reasoning: form.reasoning,
            stream,
            maxTokens: 4000,
          });
          const events: StreamEvent[] = [];
          const history: Message[] = [{ role: "user", content: "files?" }];
          const first = await provider.complete({
            messages: history,
            tools: TOOLS,
            temperature: 0.2,
            onEvent: (e) => events.push(e),
          });
          const req = server.requests[0]!.body;
          form.sent(req);
          assert.equal(req.temperature, undefined);
          assert.ok(events.some((e) => e.type === "notice" && /ignores the temperature/.test(e.message)));
          assert.equal(joined(events, "thinking_delta"), "I need the listing first.");
          assert.equal(first.message.content, "Listing.");
          const t = first.message.thinking;
          assert.equal(t?.blocks?.length, 2);
          assert.equal(t?.blocks?.[1]?.type, "redacted_thinking");
          assert.match(t?.text ?? "", /I need the listing first\.\n\n\[redacted thinking\]/);
          history.push(first.message, {
            role: "tool",
            toolCallId: first.message.toolCalls![0]!.id,
            name: "run_command",
            content: "a b",
          });
          const second = await provider.complete({ messages: history, tools: TOOLS });
          assert.equal(second.message.content, "Two files.");
          form.sent(server.requests[1]!.body);
          const back = server.requests[1]!.body.messages[1].content;
          assert.deepEqual(
            back.map((b: { type: string }) => b.type),
            ["thinking", "redacted_thinking", "text", "tool_use"],
          );
        });
      });
    }

  test("the API's checks: missing or altered thinking in the tool loop is a 400", async () => {
    await withServer(
      [...(script as object[]), { content: "x" }, { content: "y" }] as ServerScript,
      async (server) => {
        const provider = anthropic(server.origin, "high");
        const first = await provider.complete({
          messages: [{ role: "user", content: "files?" }],
          tools: TOOLS,
        });
        const tool = (id: string): Message => ({
          role: "tool",
          toolCallId: id,
          name: "run_command",
          content: "a",
        });
        const id = first.message.toolCalls![0]!.id;
        const { thinking, ...without } = first.message;
        await assert.rejects(
          provider.complete({
            messages: [{ role: "user", content: "files?" }, without, tool(id)],
            tools: TOOLS,
          }),
          (e: unknown) =>
            e instanceof ModelError && e.status === 400 && /must start with a thinking block/.test(e.message),
        );
        const altered = {
          ...first.message,
          thinking: {
            ...thinking!,
            blocks: thinking!.blocks!.map((b) =>
              b.type === "thinking" ? { ...b, thinking: `${b.thinking} (edited)` } : b,
            ),
          },
        };
        await assert.rejects(
          provider.complete({
            messages: [{ role: "user", content: "files?" }, altered, tool(id)],
            tools: TOOLS,
          }),
          (e: unknown) =>
            e instanceof ModelError && e.status === 400 && /Invalid `signature`/.test(e.message),
        );
      },
    );
  });

  test("the thinking form by model: adaptive from Claude 4.6 on, a budget before and for other names", () => {
    const adaptive = [
      "claude-opus-4-6",
      "claude-sonnet-4-6",
      "claude-opus-4-7",
      "claude-opus-4-8",
      "claude-sonnet-5",
      "claude-opus-5-5",
      "claude-haiku-5-5-20261001",
      "claude-fable-5",
      "claude-mythos-preview",
      "anthropic.claude-opus-4-7-v1:0",
      "claude-opus-4-6@20260205",
    ];
    const budget = [
      "claude-3-7-sonnet-latest",
      "claude-3-5-sonnet-20241022",
      "us.anthropic.claude-3-5-sonnet-20241022-v2:0",
      "claude-sonnet-4-20250514",
      "claude-opus-4-1",
      "claude-sonnet-4-5",
      "claude-haiku-4-5-20251001",
      "claude-opus-4-5",
      "house-model",
      "claude",
    ];
    for (const m of adaptive) assert.equal(thinkingModeFor(m), "adaptive", m);
    for (const m of budget) assert.equal(thinkingModeFor(m), "budget", m);
  });

  test("a server that refuses the form the name suggested gets the other, once, and from then on", async () => {
    // A model of an Anthropic-compatible server that thinks only adaptively (a budget is sent first).
    await withServer(
      [{ content: "refused, not answered" }, { content: "one" }, { content: "two" }],
      async (server) => {
        const provider = new AnthropicProvider({
          baseURL: server.origin,
          apiKey: "k",
          model: "house-model",
          retry: FAST,
          maxRetries: 0,
          reasoning: "high",
        });
        const events: StreamEvent[] = [];
        const r = await provider.complete({
          messages: [{ role: "user", content: "x" }],
          tools: [],
          onEvent: (e) => events.push(e),
        });
        assert.equal(r.message.content, "one");
        assert.equal(server.requests[0]!.body.thinking.type, "enabled");
        assert.deepEqual(server.requests[1]!.body.thinking, { type: "adaptive", display: "summarized" });
        assert.deepEqual(server.requests[1]!.body.output_config, { effort: "high" });
        const notice = events.find((e) => e.type === "notice");
        assert.match(
          notice?.type === "notice" ? notice.message : "",
          /^--reasoning high: the server refused a thinking budget; sent with adaptive thinking instead \(.*thinking\.type\.enabled is not supported/,
        );
        await provider.complete({ messages: [{ role: "user", content: "y" }], tools: [] });
        assert.equal(server.requests.length, 3);
        assert.equal(server.requests[2]!.body.thinking.type, "adaptive", "straight to the form that worked");
      },
      { thinkingForms: { "house-model": "adaptive" } },
    );
    // A Claude name this places as adaptive, served by a server that knows only budgets.
    await withServer(
      [{ content: "refused" }, { content: "fine" }],
      async (server) => {
        const provider = new AnthropicProvider({
          baseURL: server.origin,
          apiKey: "k",
          model: "claude-sonnet-9",
          retry: FAST,
          maxRetries: 0,
          reasoning: "high",
        });
        const r = await provider.complete({ messages: [{ role: "user", content: "x" }], tools: [] });
        assert.equal(r.message.content, "fine");
        assert.equal(server.requests[0]!.body.thinking.type, "adaptive");
        assert.equal(server.requests[1]!.body.thinking.type, "enabled");
        assert.equal(server.requests[1]!.body.output_config, undefined, "no effort with a budget");
      },
      { thinkingForms: { "claude-sonnet-9": "budget" } },
    );
  });

  test("refused in both forms, or refused for something else: the error, after at most two requests", async () => {
    const refusal = {
      status: 400,
      errorMessage: "thinking.budget_tokens: this server takes no thinking at all",
    };
    await withServer(
      [refusal, { ...refusal, errorMessage: "adaptive thinking: no" }, { content: "never" }],
      async (server) => {
        await assert.rejects(
          anthropic(server.origin, "high").complete({
            messages: [{ role: "user", content: "x" }],
            tools: [],
          }),
          (e: unknown) =>
            e instanceof ModelError && e.status === 400 && /adaptive thinking: no/.test(e.message),
        );
        assert.equal(server.requests.length, 2);
      },
    );
    await withServer(
      [{ status: 400, errorMessage: "messages.0: bad content" }, { content: "never" }],
      async (server) => {
        await assert.rejects(
          anthropic(server.origin, "high").complete({
            messages: [{ role: "user", content: "x" }],
            tools: [],
          }),
          /bad content/,
        );
        assert.equal(server.requests.length, 1, "not retried in the other form");
      },
    );
  });

  test("reasoning off (or unset) sends no thinking parameter", async () => {
    await withServer([{ content: "a" }, { content: "b" }], async (server) => {
      await anthropic(server.origin, "off").complete({
        messages: [{ role: "user", content: "x" }],
        tools: [],
      });
      await anthropic(server.origin).complete({ messages: [{ role: "user", content: "x" }], tools: [] });
      assert.equal(server.requests[0]!.body.thinking, undefined);
      assert.equal(server.requests[1]!.body.thinking, undefined);
    });
  });
});
