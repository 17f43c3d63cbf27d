// A reasoning model's thinking in memory: its own chunk type with a low base importance, never
// a fact, never ahead of tool results, counted only where it is sent back, and dropped from
// replies before the current request.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AssistantMessage, Message } from "@hands/llm";
import { ContextAssembler, recallText } from "./context.js";
import { Memory } from "./memory.js";

const THINK = (s: number) =>
  `Hmm, the RETRY_LIMIT might be 3 here, I guess RETRY_LIMIT is set somewhere in step ${s}; `.repeat(12);

/** Steps of read_file whose replies carry long thinking that keeps naming RETRY_LIMIT. */
function session(steps: number, thinking: (s: number) => AssistantMessage["thinking"]): Message[] {
  const h: Message[] = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "What is RETRY_LIMIT set to?" },
  ];
  for (let s = 0; s < steps; s++) {
    const id = `c${s}`;
    const t = thinking(s);
    h.push({
      role: "assistant",
      content: "",
      toolCalls: [{ id, name: "read_file", arguments: `{"path":"src/f${s}.ts"}` }],
      ...(t ? { thinking: t } : {}),
    });
    const fact = s === 2 ? "\nexport const RETRY_LIMIT = 7;" : "";
    h.push({
      role: "tool",
      toolCallId: id,
      name: "read_file",
      content: `${"const x = 1;\n".repeat(60)}${fact}`,
    });
  }
  return h;
}

async function run(asm: ContextAssembler, history: Message[], task = 1): Promise<Message[]> {
  let sent: Message[] = [];
  for (let n = 4, step = 1; n <= history.length; n += 2, step++)
    sent = await asm.assemble(history.slice(0, n), step, task);
  return sent;
}

test("thinking is stored as the model's own reasoning: its own chunk, low importance, unverified", async () => {
  const memory = new Memory();
  const asm = new ContextAssembler(memory, { budget: 100_000 });
  await run(
    asm,
    session(4, (s) => ({ text: THINK(s), source: "field" })),
  );
  await asm.flush();
  const thoughts = memory.store.list({ types: ["agent_reasoning"] });
  assert.equal(thoughts.length, 4);
  const results = memory.store.list({ types: ["tool_result"] });
  const calls = memory.store.list({ types: ["tool_call"] });
  for (const t of thoughts) {
    assert.equal(t.verification, "unverified");
    assert.ok(t.confidence < 1);
    assert.match(t.content, /RETRY_LIMIT might be 3/);
    // Lower than anything the tools returned.
    for (const r of results) assert.ok(t.importance < r.importance, `${t.importance} vs ${r.importance}`);
    // It points at the reply it is the thinking of.
    assert.ok(calls.some((c) => c.id === t.meta.reasoningOf));
  }
  // The reply's own chunk holds its call, not its thinking.
  for (const c of calls) assert.doesNotMatch(c.content, /RETRY_LIMIT might be/);
  assert.equal(memory.store.count({ types: ["fact"] }), 0, "thinking is never a fact");
  memory.close();
});

test("thinking never crowds tool results out of the memory section, and never comes ahead of them", async () => {
  const memory = new Memory();
  // Small: every step past the first few is assembled from memory.
  const asm = new ContextAssembler(memory, { budget: 1500, cacheAware: false });
  const sent = await run(
    asm,
    session(14, (s) => ({ text: THINK(s), source: "field" })),
  );
  const section = sent.find((m) => m.role === "user" && m.content.startsWith("Memory —"))?.content ?? "";
  assert.match(section, /RETRY_LIMIT = 7/, "the tool result with the answer is in the memory section");
  const evidence = section.indexOf("RETRY_LIMIT = 7");
  const reasoning = section.indexOf("the model's own reasoning");
  if (reasoning >= 0) assert.ok(evidence < reasoning, "reasoning comes after the evidence");
  // The recall tool's search also puts the evidence first.
  await asm.flush();
  const recalled = await recallText(memory, "RETRY_LIMIT");
  const firstResult = recalled.indexOf("tool_result");
  const firstThought = recalled.indexOf("agent_reasoning");
  assert.ok(firstResult >= 0 && (firstThought < 0 || firstResult < firstThought), recalled.slice(0, 300));
  memory.close();
});

test("thinking counts against the budget only where it is sent back", async () => {
  const tokens = async (thinking: (s: number) => AssistantMessage["thinking"]) => {
    const memory = new Memory();
    const asm = new ContextAssembler(memory, { budget: 100_000 });
    await run(asm, session(4, thinking));
    await asm.flush();
    memory.close();
    return asm.lastTokens;
  };
  const none = await tokens(() => undefined);
  // Shown to people, not sent back (e.g. a final answer's reasoning_content): free.
  assert.equal(await tokens((s) => ({ text: THINK(s), source: "field" })), none);
  // Sent back in a field (DeepSeek in a tool loop), or as Anthropic's signed blocks: counted.
  const field = await tokens((s) => ({ text: THINK(s), source: "field", sendBackAs: "reasoning_content" }));
  assert.equal(field, none + 4 * Math.ceil(THINK(0).length / 4));
  const blocks = await tokens((s) => ({
    text: THINK(s),
    source: "blocks",
    blocks: [{ type: "thinking", thinking: THINK(s), signature: "sig".repeat(20) }],
  }));
  assert.equal(blocks, none + 4 * Math.ceil((THINK(0).length + 60) / 4));
});

test("a later request drops the thinking of earlier replies, keeps the current turn's, and stays prefix-stable", async () => {
  const memory = new Memory();
  const asm = new ContextAssembler(memory, { budget: 100_000 });
  const block = (s: number) => ({
    text: THINK(s),
    source: "blocks" as const,
    blocks: [{ type: "thinking" as const, thinking: THINK(s), signature: `sig${s}` }],
  });
  const first = session(3, block);
  first.push({ role: "assistant", content: "It is 7.", thinking: block(9) });
  await run(asm, first);
  const task = first.length;
  const later: Message[] = [
    ...first,
    { role: "user", content: "And where is it used?" },
    {
      role: "assistant",
      content: "",
      toolCalls: [{ id: "g1", name: "grep", arguments: '{"pattern":"RETRY_LIMIT"}' }],
      thinking: block(10),
    },
    { role: "tool", toolCallId: "g1", name: "grep", content: "src/f2.ts:1: RETRY_LIMIT" },
  ];
  const before = asm.lastTokens;
  const sent = await asm.assemble(later, 5, task);
  const again = await asm.assemble([...later, { role: "assistant", content: "In f2.ts." }], 6, task);
  // Before the request: no thinking left on any reply; in its turn: the blocks, as received.
  const at = sent.indexOf(later[task]!);
  assert.ok(at > 0);
  for (const m of sent.slice(0, at)) if (m.role === "assistant") assert.equal(m.thinking, undefined);
  assert.deepEqual((sent[at + 1] as AssistantMessage).thinking, block(10));
  assert.equal(sent[at + 1], later[task + 1], "the current turn's reply is the history's own object");
  // The next request repeats the same objects (the provider's cache sees the same prefix).
  for (const [i, m] of sent.entries()) assert.equal(again[i], m);
  // And the dropped thinking no longer counts.
  assert.ok(asm.lastTokens < before + 200, `${before} → ${asm.lastTokens}`);
  memory.close();
});

test("asksForDate: questions answered by a date, not others", async () => {
  const { asksForDate } = await import("./memory.js");
  for (const q of [
    "When did Caroline go to the support group?",
    "what year did she move?",
    "How long ago was the trip?",
  ])
    assert.ok(asksForDate(q), q);
  for (const q of ["What did Caroline paint?", "Where is whenever.ts?", "Who came when it rained?"])
    assert.ok(!asksForDate(q), q);
});

test("setBudget lowers the budget (never raises it) and the next step is assembled within it", async () => {
  const memory = new Memory();
  const asm = new ContextAssembler(memory, { budget: 100_000 });
  const history = session(12, () => undefined);
  await run(asm, history);
  assert.equal(asm.compactions, 0, "the whole history fits the first budget");
  assert.equal(asm.setBudget(200_000), 100_000);
  assert.equal(asm.setBudget(2500), 2500);
  const sent = await asm.assemble([...history, { role: "assistant", content: "thinking it over" }], 20);
  assert.equal(asm.compactions, 1);
  assert.ok(asm.lastTokens <= 2500, `${asm.lastTokens}`);
  assert.ok(sent.length < history.length);
  assert.equal(asm.setBudget(10), 1000, "never below the floor");
  memory.close();
});
