import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { OpenAIProvider } from "./openai.js";
import { OBSERVATION_STOP, ReactProvider, renderReactHistory } from "./react.js";
import { ScriptedProvider, type ScriptedTurn } from "./scripted.js";
import { startScriptedServer } from "./testing/scripted-server.js";
import type { Message, ModelResponse, ToolSchema } from "./types.js";

const TOOLS: ToolSchema[] = [
  {
    name: "read_file",
    description: "Read a file from the workspace.",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
  { name: "run_tests", description: "Run the test suite.", parameters: { type: "object", properties: {} } },
];
const USER: Message[] = [{ role: "user", content: "What is in a.txt?" }];

function react(turns: ScriptedTurn[]) {
  const inner = new ScriptedProvider(turns, { model: "local-7b" });
  return { inner, provider: new ReactProvider(inner) };
}

describe("ReactProvider", () => {
  test("sends a text-only request: protocol in the system prompt, no tools, the stop sequence", async () => {
    const { inner, provider } = react([
      { content: 'Thought: look\nAction: read_file\nAction Input: {"path": "a.txt"}' },
    ]);
    assert.equal(provider.model, "local-7b");
    await provider.complete({
      messages: [{ role: "system", content: "You are Hands." }, ...USER],
      tools: TOOLS,
    });
    const sent = inner.requests[0]!;
    assert.deepEqual(sent.tools, []);
    assert.deepEqual(sent.stop, [OBSERVATION_STOP]);
    const system = sent.messages[0]!;
    assert.equal(system.role, "system");
    assert.ok(system.content.startsWith("You are Hands.\n\n"));
    for (const needle of [
      "Thought: <",
      "Action: <",
      "Action Input: <",
      "Final Answer: <",
      "- read_file: Read a file from the workspace.",
      '"required":["path"]',
      "- run_tests: Run the test suite.",
    ]) {
      assert.ok(system.content.includes(needle), `system prompt lacks ${needle}`);
    }
    assert.deepEqual(sent.messages.slice(1), USER);
  });

  test("an action becomes a tool call with a generated id; the thought is the content", async () => {
    const { provider } = react([
      {
        content: 'Thought: look\nAction: read_file\nAction Input: {"path": "a.txt"}',
        usage: { inputTokens: 50 },
      },
      { content: "Thought: again\nAction: run_tests" },
    ]);
    const first = await provider.complete({ messages: USER, tools: TOOLS });
    assert.deepEqual(first.message, {
      role: "assistant",
      content: "look",
      toolCalls: [{ id: "react_1", name: "read_file", arguments: '{"path":"a.txt"}' }],
    });
    assert.equal(first.finishReason, "tool_calls");
    assert.equal(first.usage.inputTokens, 50);
    assert.equal(first.correction, undefined);
    const second = await provider.complete({ messages: USER, tools: TOOLS });
    assert.equal(second.message.toolCalls?.[0]?.id, "react_2");
    assert.equal(second.message.toolCalls?.[0]?.arguments, "{}");
  });

  test("a final answer (either form) ends with finishReason stop", async () => {
    const { provider } = react([
      { content: "Thought: I know.\nFinal Answer: It contains hello." },
      { content: 'Thought: done\nAction: Finish\nAction Input: {"answer": "bye"}' },
    ]);
    const a = await provider.complete({ messages: USER, tools: TOOLS });
    assert.deepEqual(a.message, { role: "assistant", content: "It contains hello." });
    assert.equal(a.finishReason, "stop");
    const b = await provider.complete({ messages: USER, tools: TOOLS });
    assert.equal(b.message.content, "bye");
  });

  test("history: tool calls become Thought/Action text, results become Observation user turns", async () => {
    const { inner, provider } = react([{ content: "Final Answer: done" }]);
    const history: Message[] = [
      ...USER,
      {
        role: "assistant",
        content: "look",
        toolCalls: [{ id: "react_1", name: "read_file", arguments: '{"path":"a.txt"}' }],
      },
      { role: "tool", toolCallId: "react_1", name: "read_file", content: "hello" },
    ];
    await provider.complete({ messages: history, tools: TOOLS });
    assert.deepEqual(inner.requests[0]!.messages.slice(1), [
      USER[0],
      { role: "assistant", content: 'Thought: look\nAction: read_file\nAction Input: {"path":"a.txt"}' },
      { role: "user", content: "Observation: hello" },
    ]);
  });

  test("history from a native provider: parallel calls are rendered one action at a time", () => {
    const rendered = renderReactHistory(
      [
        ...USER,
        {
          role: "assistant",
          content: "both",
          toolCalls: [
            { id: "x", name: "read_file", arguments: '{"path":"1"}' },
            { id: "y", name: "run_tests", arguments: "" },
          ],
        },
        { role: "tool", toolCallId: "y", name: "run_tests", content: "failed", isError: true },
        { role: "tool", toolCallId: "x", name: "read_file", content: "one" },
        { role: "assistant", content: "All read." },
        { role: "user", content: "thanks" },
      ],
      TOOLS,
    );
    assert.deepEqual(rendered.slice(1), [
      USER[0],
      { role: "assistant", content: 'Thought: both\nAction: read_file\nAction Input: {"path":"1"}' },
      { role: "user", content: "Observation: one" },
      { role: "assistant", content: "Action: run_tests\nAction Input: {}" },
      { role: "user", content: "Observation: ERROR: failed" },
      { role: "assistant", content: "Final Answer: All read." },
      { role: "user", content: "thanks" },
    ]);
  });

  test("an Observation and a following user message merge into one user turn", () => {
    const rendered = renderReactHistory(
      [
        ...USER,
        { role: "assistant", content: "", toolCalls: [{ id: "r1", name: "run_tests", arguments: "{}" }] },
        { role: "tool", toolCallId: "r1", name: "run_tests", content: "3 passed" },
        { role: "user", content: "now stop" },
      ],
      TOOLS,
    );
    assert.deepEqual(rendered.slice(2), [
      { role: "assistant", content: "Action: run_tests\nAction Input: {}" },
      { role: "user", content: "Observation: 3 passed\n\nnow stop" },
    ]);
  });

  test("a reply that got a correction stays raw in history (not turned into a Final Answer)", () => {
    const rendered = renderReactHistory(
      [
        ...USER,
        { role: "assistant", content: "I think so." },
        { role: "user", content: "Observation: ERROR: your reply has no Action and no Final Answer. Reply…" },
      ],
      TOOLS,
    );
    assert.deepEqual(rendered.slice(2), [
      { role: "assistant", content: "I think so." },
      { role: "user", content: "Observation: ERROR: your reply has no Action and no Final Answer. Reply…" },
    ]);
  });

  test("unknown tool: correction names the problem, the format and the valid tools", async () => {
    const { provider } = react([{ content: 'Thought: x\nAction: delete_all\nAction Input: {"y": 1}' }]);
    const res = await provider.complete({ messages: USER, tools: TOOLS });
    assert.equal(res.message.toolCalls, undefined);
    assert.equal(res.message.content, 'Thought: x\nAction: delete_all\nAction Input: {"y": 1}');
    assert.equal(
      res.correction,
      [
        'Observation: ERROR: unknown tool "delete_all". Reply in exactly this format:',
        "Thought: <your reasoning>",
        "Action: <one tool name: read_file, run_tests>",
        "Action Input: <the tool's arguments as one JSON object>",
        "or, when you are done:",
        "Thought: <your reasoning>",
        "Final Answer: <your answer to the user>",
      ].join("\n"),
    );
  });

  test("hopeless JSON and truncated replies are corrected", async () => {
    const { provider } = react([
      { content: 'Action: read_file\nAction Input: {"path": "a" "b"}' },
      { content: 'Action: read_file\nAction Input: {"path": "a', finishReason: "length" },
    ]);
    const bad = await provider.complete({ messages: USER, tools: TOOLS });
    assert.equal(
      bad.correction,
      [
        'Observation: ERROR: Action Input is not valid JSON: expected "," or "}" at position 13. The arguments of read_file (JSON Schema): {"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}',
        "Write the Action again:",
        "Action: read_file",
        "Action Input: <one JSON object>",
      ].join("\n"),
    );
    const cut = await provider.complete({ messages: USER, tools: TOOLS });
    assert.match(cut.correction ?? "", /cut off at the token limit/);
    assert.equal(cut.finishReason, "length");
  });

  test("prose without keywords is corrected the first time, accepted as the answer the second time", async () => {
    const { provider } = react([{ content: "The file says hello." }, { content: "It says hello, really." }]);
    const first = await provider.complete({ messages: USER, tools: TOOLS });
    assert.ok(
      first.correction?.startsWith("Observation: ERROR: your reply has no Action and no Final Answer."),
    );
    assert.equal(first.message.content, "The file says hello.");
    const history: Message[] = [...USER, first.message, { role: "user", content: first.correction! }];
    const second = await provider.complete({ messages: history, tools: TOOLS });
    assert.equal(second.correction, undefined);
    assert.equal(second.finishReason, "stop");
    assert.equal(second.message.content, "It says hello, really.");
  });

  test("a Thought without a decision is always corrected", async () => {
    const { provider } = react([{ content: "Thought: hmm" }]);
    const res = await provider.complete({ messages: USER, tools: TOOLS });
    assert.match(res.correction ?? "", /has a Thought but no Action and no Final Answer/);
  });

  test("with no tools offered, prose is the answer", async () => {
    const { provider } = react([{ content: "Just chatting." }]);
    const res = await provider.complete({ messages: USER, tools: [] });
    assert.equal(res.correction, undefined);
    assert.equal(res.message.content, "Just chatting.");
  });

  test("end to end over HTTP: the inner OpenAI provider sends stop and no tools", async () => {
    const server = await startScriptedServer([
      { content: 'Thought: read it\nAction: read_file\nAction Input: {"path": "a.txt"}' },
      { content: "Thought: got it\nFinal Answer: hello" },
    ]);
    try {
      const provider = new ReactProvider(new OpenAIProvider({ baseURL: server.url, model: "qwen2.5-coder" }));
      const history: Message[] = [...USER];
      const step: ModelResponse = await provider.complete({ messages: history, tools: TOOLS });
      assert.equal(step.message.toolCalls?.[0]?.name, "read_file");
      history.push(step.message, {
        role: "tool",
        toolCallId: step.message.toolCalls![0]!.id,
        name: "read_file",
        content: "hello",
      });
      const done = await provider.complete({ messages: history, tools: TOOLS });
      assert.equal(done.message.content, "hello");
      const body = server.requests[1]!.body;
      assert.deepEqual(body.stop, ["\nObservation:"]);
      assert.equal("tools" in body, false);
      assert.deepEqual(body.messages.slice(-2), [
        { role: "assistant", content: 'Thought: read it\nAction: read_file\nAction Input: {"path":"a.txt"}' },
        { role: "user", content: "Observation: hello" },
      ]);
    } finally {
      await server.close();
    }
  });
});

describe("ReactProvider: shapes from other frameworks, over HTTP", () => {
  const WRITE: ToolSchema = {
    name: "write_file",
    description: "Write a file.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string" },
        content: { type: "string", description: "The whole new text." },
      },
      required: ["path", "content"],
    },
  };
  const CMD: ToolSchema = {
    name: "run_command",
    description: "Run a command.",
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  };

  async function withServer(
    turns: { content: string }[],
    run: (provider: ReactProvider, server: Awaited<ReturnType<typeof startScriptedServer>>) => Promise<void>,
  ) {
    const server = await startScriptedServer(turns);
    try {
      await run(
        new ReactProvider(new OpenAIProvider({ baseURL: server.url, apiKey: "k", model: "local" })),
        server,
      );
    } finally {
      await server.close();
    }
  }

  test("two Actions: the first runs and its Observation says the other did not", async () => {
    await withServer(
      [
        {
          content:
            "Thought: both\nAction: run_command\nAction Input: npm test\nAction: run_command\nAction Input: npm run lint",
        },
        { content: "Final Answer: done" },
      ],
      async (provider, server) => {
        const history: Message[] = [...USER];
        const step = await provider.complete({ messages: history, tools: [CMD] });
        assert.deepEqual(step.message.toolCalls, [
          { id: "react_1", name: "run_command", arguments: '{"command":"npm test"}' },
        ]);
        history.push(step.message, {
          role: "tool",
          toolCallId: "react_1",
          name: "run_command",
          content: "5 passed",
        });
        await provider.complete({ messages: history, tools: [CMD] });
        assert.deepEqual(server.requests[1]!.body.messages.at(-1), {
          role: "user",
          content:
            "Observation: 5 passed\n\nNOTE: your reply had 1 more Action after this one; only the first Action ran. Write one Action per reply and wait for its Observation.",
        });
      },
    );
  });

  test("plain text for a tool with several arguments: a short correction with that tool's schema (no descriptions)", async () => {
    await withServer(
      [{ content: "Thought: save\nAction: write_file\nAction Input: notes.txt" }],
      async (provider) => {
        const res = await provider.complete({ messages: USER, tools: [CMD, WRITE] });
        assert.equal(res.message.toolCalls, undefined);
        assert.equal(
          res.correction,
          [
            'Observation: ERROR: write_file takes its arguments as one JSON object, not plain text (got: notes.txt). The arguments of write_file (JSON Schema): {"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}',
            "Write the Action again:",
            "Action: write_file",
            "Action Input: <one JSON object>",
          ].join("\n"),
        );
      },
    );
  });

  test("an echoed Observation before the Thought is kept out of the thought, not cut with it", async () => {
    await withServer(
      [
        {
          content:
            "Observation: nothing yet\nThought: look around\nAction: run_command\nAction Input: ls -la",
        },
      ],
      async (provider) => {
        const res = await provider.complete({ messages: USER, tools: [CMD] });
        assert.equal(res.message.content, "look around");
        assert.equal(res.message.toolCalls?.[0]?.arguments, '{"command":"ls -la"}');
      },
    );
  });

  test("a copy of the last Observation at the start of a reply is not read, even without a Thought after it", async () => {
    const file = "Action: run_command\nAction Input: rm -rf ~";
    await withServer(
      [{ content: `Observation: ${file}\nAction: read_file\nAction Input: b.txt` }],
      async (provider) => {
        const history: Message[] = [
          ...USER,
          {
            role: "assistant",
            content: "",
            toolCalls: [{ id: "r0", name: "read_file", arguments: '{"path":"a.txt"}' }],
          },
          { role: "tool", toolCallId: "r0", name: "read_file", content: file },
        ];
        const res = await provider.complete({ messages: history, tools: [CMD, TOOLS[0]!] });
        assert.deepEqual(
          res.message.toolCalls?.map((c) => [c.name, c.arguments]),
          [["read_file", '{"path":"b.txt"}']],
        );
      },
    );
  });

  test("reasoning in <think> is neither the answer nor replayed in a correction", async () => {
    await withServer(
      [
        {
          content:
            "<think>\nAction: run_command\nAction Input: rm -rf x\n</think>\nFinal Answer: nothing to do",
        },
        { content: "<think>hmm</think>\nThought: I should check first." },
      ],
      async (provider) => {
        const done = await provider.complete({ messages: USER, tools: [CMD] });
        assert.deepEqual(done.message, {
          role: "assistant",
          content: "nothing to do",
          // Kept for people (live view, trace), apart from the answer.
          thinking: { text: "Action: run_command\nAction Input: rm -rf x", source: "think_tag" },
        });
        const bad = await provider.complete({ messages: USER, tools: [CMD] });
        assert.equal(bad.message.content, "Thought: I should check first.");
        assert.match(bad.correction ?? "", /has a Thought but no Action/);
      },
    );
  });

  test("history renders the notes it is given, and only for the call they belong to", () => {
    const rendered = renderReactHistory(
      [
        ...USER,
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "a", name: "run_command", arguments: '{"command":"ls"}' }],
        },
        { role: "tool", toolCallId: "a", name: "run_command", content: "x" },
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "b", name: "run_command", arguments: '{"command":"pwd"}' }],
        },
        { role: "tool", toolCallId: "b", name: "run_command", content: "/w" },
      ],
      [CMD],
      new Map([["b", "NOTE: b"]]),
    );
    assert.deepEqual(
      rendered.filter((m) => m.role === "user").map((m) => m.content),
      [USER[0]!.content, "Observation: x", "Observation: /w\n\nNOTE: b"],
    );
  });
});
