// Property: for every request of every session, the incremental encoder's bytes are exactly
// Buffer.from(JSON.stringify(plain body)). Random sessions append messages of every kind and
// size — including ones sized so the body ends right at a buffer growth (64 KiB, then ×1.5),
// where the closing `]` or the tools tail is written — with multi-byte, astral and lone-surrogate
// characters, tools that come, go and change, failed requests (release(…, false)), a second
// request while a body is still lent, and rewritten (compacted) histories.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { toOpenAIMessage, toOpenAITools } from "./openai-wire.js";
import { GROWTH_MIN, RequestBodyEncoder } from "./request-body.js";
import type { Message, ToolSchema } from "./types.js";

const CHARS = ["a", "z", " ", '"', "\\", "\n", "\t", "\u0001", "é", "ß", "中", "€", "😀", "𝄞", "\ud800", "/"];
const text = (max: number) =>
  fc.array(fc.constantFrom(...CHARS), { maxLength: max }).map((cs) => cs.join(""));

const TOOLS_A: ToolSchema[] = [
  { name: "read_file", description: "Reads a file — «quoted»", parameters: { type: "object" } },
];
const TOOLS_B: ToolSchema[] = [
  ...TOOLS_A,
  { name: "write_file", description: "Writes 😀", parameters: { type: "object", required: ["path"] } },
];
const TOOL_SETS: Array<ToolSchema[] | undefined> = [undefined, TOOLS_A, TOOLS_B];

type Command =
  | { kind: "append"; messages: Message[] }
  | { kind: "aim"; offset: number; boundaries: number }
  | { kind: "request"; fields: number; tools: number; fresh: boolean; ok: boolean; overlap: boolean }
  | { kind: "rewrite"; keep: number };

const toolCall = fc.record({ id: text(6), name: fc.constantFrom("read_file", "run"), arguments: text(20) });
const message: fc.Arbitrary<Message> = fc.oneof(
  fc.record({ role: fc.constant("user" as const), content: text(40) }),
  fc.record({ role: fc.constant("assistant" as const), content: text(40) }),
  fc.record({
    role: fc.constant("assistant" as const),
    content: fc.constantFrom("", "x"),
    toolCalls: fc.array(toolCall, { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ role: fc.constant("tool" as const), toolCallId: text(6), name: text(8), content: text(60) }),
);

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .array(message, { minLength: 1, maxLength: 4 })
      .map((messages) => ({ kind: "append" as const, messages })),
  },
  {
    weight: 2,
    // Land the body's end within a few bytes of a growth point (before, at or after it).
    arbitrary: fc.record({
      kind: fc.constant("aim" as const),
      offset: fc.integer({ min: -70, max: 4 }),
      boundaries: fc.integer({ min: 0, max: 1 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("request" as const),
      fields: fc.integer({ min: 0, max: 3 }),
      tools: fc.integer({ min: 0, max: 2 }),
      fresh: fc.boolean(),
      ok: fc.boolean(),
      overlap: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("rewrite" as const), keep: fc.nat(6) }) },
);

const FIELDS: Array<Record<string, unknown>> = [
  { model: "m", stream: true, stream_options: { include_usage: true } },
  { model: "m", stream: false },
  { model: "другая", max_tokens: 100, temperature: 0.5, stop: ["\n😀"] },
  {},
];

function plain(
  fields: Record<string, unknown>,
  messages: Message[],
  tools: ToolSchema[] | undefined,
): Buffer {
  const body = {
    ...fields,
    messages: messages.map(toOpenAIMessage),
    ...(tools ? { tools: toOpenAITools(tools) } : {}),
  };
  return Buffer.from(JSON.stringify(body));
}

/** The buffer sizes at which the encoder grows: first `initial`, then ×1.5 each time. */
function growthPoints(initial: number, upTo: number): number[] {
  const out = [initial];
  while (out.at(-1)! < upTo) out.push(Math.floor(out.at(-1)! * 1.5));
  return out;
}

function runSession(initial: number, commands: Command[]): void {
  const enc = new RequestBodyEncoder(toOpenAIMessage, initial);
  let history: Message[] = [{ role: "system", content: "system ✓" }];
  let lastLength = 0;
  let n = 0;
  const check = (
    body: Buffer,
    fields: Record<string, unknown>,
    tools: ToolSchema[] | undefined,
    what: string,
  ) => {
    const want = plain(fields, history, tools);
    if (!body.equals(want)) {
      let at = 0;
      while (at < body.length && body[at] === want[at]) at++;
      assert.fail(
        `${what} #${n}: ${body.length} bytes, want ${want.length}; first difference at byte ${at}: ` +
          `${JSON.stringify(body.subarray(Math.max(0, at - 20), at + 20).toString("latin1"))}`,
      );
    }
  };
  for (const c of commands) {
    if (c.kind === "append") history = [...history, ...c.messages];
    else if (c.kind === "rewrite")
      history = [history[0]!, ...(c.keep ? history.slice(1).slice(-c.keep) : [])];
    else if (c.kind === "aim") {
      // Pads with one ASCII user message so the last body's size plus the message lands at
      // a growth point + offset (the tail, tools or not, is written around it).
      const points = growthPoints(initial, lastLength + 200).filter((p) => p > lastLength + 40);
      const target = (points[c.boundaries] ?? points[0]!) + c.offset;
      const overhead = JSON.stringify({ role: "user", content: "" }).length + 1;
      const pad = target - lastLength - overhead;
      if (pad > 0 && pad < 2_000_000) history = [...history, { role: "user", content: "p".repeat(pad) }];
    } else {
      n++;
      const fields = FIELDS[c.fields]!;
      const chosen = TOOL_SETS[c.tools];
      // A fresh array with the same tools: another key, the same wire form.
      const tools = chosen && c.fresh ? [...chosen] : chosen;
      const spec = tools ? { key: tools, wire: () => toOpenAITools(tools) } : undefined;
      const body = enc.encode(fields, history, spec);
      const copy = Buffer.from(body);
      check(body, fields, tools, "request");
      lastLength = body.length;
      if (c.overlap) {
        // A second request while the first body is lent: its own bytes, the first untouched.
        const more: Message[] = [...history, { role: "user", content: "and 😀 more" }];
        const saved = history;
        history = more;
        const second = enc.encode(fields, history, spec);
        check(second, fields, tools, "overlapping request");
        history = saved;
        enc.release(second, c.ok);
        assert.ok(body.equals(copy), `request #${n}: the lent body changed under a second request`);
      }
      enc.release(body, c.ok);
    }
  }
}

test("the encoder's bytes equal JSON.stringify of the plain body (tiny buffers: growth every few requests)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 8, max: 400 }),
      fc.array(command, { minLength: 1, maxLength: 60, size: "medium" }),
      runSession,
    ),
    { numRuns: 2500 },
  );
});

test("the encoder's bytes equal JSON.stringify of the plain body (real 64 KiB buffer and ×1.5 growth)", () => {
  fc.assert(
    fc.property(fc.array(command, { minLength: 1, maxLength: 30, size: "medium" }), (commands) =>
      runSession(GROWTH_MIN, commands),
    ),
    { numRuns: 400 },
  );
});

test("regression: a growth while the closing bracket and tools tail are written keeps those bytes", () => {
  // The body's messages end 3 bytes before 64 KiB: `]`, the tools and `}` cross the growth.
  const enc = new RequestBodyEncoder(toOpenAIMessage);
  const head = `{"model":"m","messages":[`;
  const overhead = head.length + JSON.stringify({ role: "user", content: "" }).length;
  const history: Message[] = [{ role: "user", content: "q".repeat(GROWTH_MIN - 3 - overhead) }];
  const tools = { key: TOOLS_B, wire: () => toOpenAITools(TOOLS_B) };
  const body = enc.encode({ model: "m" }, history, tools);
  assert.ok(body.equals(plain({ model: "m" }, history, TOOLS_B)));
});
