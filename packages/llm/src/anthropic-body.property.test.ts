// Property: for every request of every session, the Anthropic body encoder's bytes parse to
// exactly the request toAnthropic + withCacheBreakpoints build from the whole history. Random
// sessions append messages of every kind (system prompts anywhere, user text, assistant text,
// tool calls and thinking blocks, tool results and errors, empty replies) with multi-byte,
// astral and lone-surrogate characters; requests come between appends with changing fields and
// tools; a history may be rewritten (compacted) into new message objects.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { AnthropicBodyEncoder } from "./anthropic-body.js";
import { toAnthropic, toAnthropicTools, withCacheBreakpoints } from "./anthropic-wire.js";
import type { Message, ToolSchema } from "./types.js";

const CHARS = ["a", "z", " ", '"', "\\", "\n", "\t", "\u0001", "é", "中", "😀", "\ud800", "/"];
const text = (max: number) =>
  fc.array(fc.constantFrom(...CHARS), { maxLength: max }).map((cs) => cs.join(""));

const TOOLS_A: ToolSchema[] = [{ name: "read_file", description: "Reads «a» file", parameters: {} }];
const TOOLS_B: ToolSchema[] = [
  ...TOOLS_A,
  { name: "run", description: "Runs 😀", parameters: { type: "object", required: ["command"] } },
];
const TOOL_SETS: Array<ToolSchema[] | undefined> = [undefined, TOOLS_A, TOOLS_B];

const thinkingBlock = fc.oneof(
  fc.record({ type: fc.constant("thinking" as const), thinking: text(20), signature: text(8) }),
  fc.record({ type: fc.constant("redacted_thinking" as const), data: text(12) }),
);
const thinking = fc.record({
  text: text(10),
  blocks: fc.array(thinkingBlock, { minLength: 1, maxLength: 2 }),
  source: fc.constant("blocks" as const),
});
const message: fc.Arbitrary<Message> = fc.oneof(
  // A reply that is only thinking: its last block takes no cache breakpoint.
  fc.record({ role: fc.constant("assistant" as const), content: fc.constantFrom("", " "), thinking }),
  fc.record({ role: fc.constant("system" as const), content: text(30) }),
  fc.record({ role: fc.constant("user" as const), content: text(40) }),
  fc.record({
    role: fc.constant("assistant" as const),
    content: fc.oneof(text(40), fc.constantFrom("", "  ")),
  }),
  fc.record(
    {
      role: fc.constant("assistant" as const),
      content: fc.constantFrom("", "x", "I will look."),
      toolCalls: fc.array(
        fc.record({
          id: text(6),
          name: fc.constantFrom("read_file", "run"),
          arguments: fc.oneof(text(20), fc.constantFrom('{"path":"a.py"}', "{}", "[1]", "")),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      thinking,
    },
    { requiredKeys: ["role", "content", "toolCalls"] },
  ),
  fc.record(
    {
      role: fc.constant("tool" as const),
      toolCallId: text(6),
      name: text(8),
      content: text(60),
      isError: fc.boolean(),
    },
    { requiredKeys: ["role", "toolCallId", "name", "content"] },
  ),
);

type Command =
  | { kind: "append"; messages: Message[] }
  | { kind: "request"; maxTokens: number; thinking: boolean; tools: number }
  | { kind: "rewrite"; keep: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .array(message, { minLength: 1, maxLength: 4 })
      .map((messages) => ({ kind: "append" as const, messages })),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("request" as const),
      maxTokens: fc.integer({ min: 1, max: 40_000 }),
      thinking: fc.boolean(),
      tools: fc.integer({ min: 0, max: 2 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("rewrite" as const), keep: fc.integer({ min: 0, max: 6 }) }),
  },
);

/** The body as the provider built it before: the whole history converted and serialised. */
function plainBody(
  fields: Record<string, unknown>,
  history: readonly Message[],
  tools?: ToolSchema[],
): unknown {
  const { system, messages } = withCacheBreakpoints(toAnthropic(history));
  return JSON.parse(
    JSON.stringify({
      ...fields,
      ...(system ? { system } : {}),
      messages,
      ...(tools ? { tools: toAnthropicTools(tools) } : {}),
    }),
  );
}

test("every request's body is the whole history's request, encoded once per message", () => {
  fc.assert(
    fc.property(fc.array(command, { minLength: 1, maxLength: 30 }), (commands) => {
      const encoder = new AnthropicBodyEncoder();
      let history: Message[] = [];
      for (const c of commands) {
        if (c.kind === "append") history.push(...c.messages);
        else if (c.kind === "rewrite") {
          // Compaction: a new history of new objects, partly equal in content to the old one.
          history = [{ role: "user", content: "summary" }, ...history.slice(-c.keep).map((m) => ({ ...m }))];
        } else {
          const fields = {
            model: "claude-opus-4-8",
            max_tokens: c.maxTokens,
            stream: true,
            ...(c.thinking
              ? { thinking: { type: "adaptive", display: "summarized" }, output_config: { effort: "high" } }
              : {}),
          };
          const tools = TOOL_SETS[c.tools];
          const bytes = encoder.encode(
            fields,
            history,
            tools ? { key: tools, wire: () => toAnthropicTools(tools) } : undefined,
          );
          assert.deepEqual(JSON.parse(bytes.toString("utf8")), plainBody(fields, history, tools));
        }
      }
    }),
    { numRuns: 300 },
  );
});

test("a message is encoded once, whichever request it is last in", () => {
  const encoder = new AnthropicBodyEncoder();
  const history: Message[] = [
    { role: "system", content: "terse" },
    { role: "user", content: "read a" },
  ];
  const first = JSON.parse(encoder.encode({ model: "m" }, history).toString());
  // Last in the first request: it carries the cache breakpoint.
  assert.deepEqual(first.messages[0].content[0].cache_control, { type: "ephemeral" });
  history.push({ role: "assistant", content: "ok" });
  const second = JSON.parse(encoder.encode({ model: "m" }, history).toString());
  assert.equal(second.messages[0].content[0].cache_control, undefined, "no longer last: no breakpoint");
  assert.deepEqual(second.messages[1].content[0], {
    type: "text",
    text: "ok",
    cache_control: { type: "ephemeral" },
  });
  // The user message's own bytes were not changed by having been last.
  history.push({ role: "user", content: "again" });
  const third = JSON.parse(encoder.encode({ model: "m" }, history).toString());
  assert.deepEqual(third.messages[0].content[0], { type: "text", text: "read a" });
});
