import assert from "node:assert/strict";
import { test } from "node:test";
import type { Message } from "@hands/llm";
import { ContextAssembler, recallText } from "./context.js";
import { Memory } from "./memory.js";
import { estimateTokens } from "./text.js";

function session(steps: number): Message[] {
  const h: Message[] = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Fix the failing build. Constraint: never edit vendor/." },
  ];
  for (let s = 0; s < steps; s++) {
    const id = `c${s}`;
    h.push({
      role: "assistant",
      content: "",
      toolCalls: [{ id, name: "read_file", arguments: `{"path":"src/f${s}.ts"}` }],
    });
    const fact = s === 3 ? "\nconst RETRY_LIMIT = 7; // the retry limit" : "";
    h.push({
      role: "tool",
      toolCallId: id,
      name: "read_file",
      content: `${"line of code here\n".repeat(60)}${fact}`,
    });
  }
  return h;
}

const tokensOf = (ms: Message[]) =>
  ms.reduce(
    (n, m) =>
      n + estimateTokens(m.content + (m.role === "assistant" ? JSON.stringify(m.toolCalls ?? []) : "")) + 4,
    0,
  );

test("the context keeps system + task + latest step, fits the budget, and keeps tool pairs valid", async () => {
  const memory = new Memory();
  const asm = new ContextAssembler(memory, { budget: 2000 });
  const history = session(40);
  let sent: Message[] = [];
  for (let n = 4; n <= history.length; n += 2) sent = await asm.assemble(history.slice(0, n), n / 2);
  assert.equal(sent[0], history[0]);
  assert.equal(sent[1], history[1]);
  assert.equal(sent.at(-1), history.at(-1), "latest tool result is the history's own object");
  assert.ok(tokensOf(sent) <= 2000 * 1.05, `tokens ${tokensOf(sent)}`);
  assert.ok(sent.length < history.length);
  // Every tool message follows an assistant message that called it.
  for (const [i, m] of sent.entries()) {
    if (m.role !== "tool") continue;
    const prev = sent
      .slice(0, i)
      .reverse()
      .find((x) => x.role !== "tool");
    assert.ok(prev?.role === "assistant" && prev.toolCalls?.some((c) => c.id === m.toolCallId));
  }
  // The history was not changed.
  assert.deepEqual(history, session(40));
  await asm.flush();
  memory.close();
});

test("an old fact relevant to the current step comes back, or is one recall away", async () => {
  const memory = new Memory();
  const asm = new ContextAssembler(memory, { budget: 1500 });
  const history = session(30);
  for (let n = 4; n <= history.length; n += 2) await asm.assemble(history.slice(0, n), n / 2);
  history.push({ role: "user", content: "What is the RETRY_LIMIT value from earlier?" });
  const sent = await asm.assemble(history, 98);
  await asm.flush();
  const text = sent.map((m) => m.content).join("\n");
  const direct = text.includes("RETRY_LIMIT = 7");
  const id = text.match(/recall "(m[0-9a-f]{10})"/g)?.map((s) => s.slice(8, -1)) ?? [];
  const viaRecall = (await Promise.all(id.map((i) => recallText(memory, i)))).some((t) =>
    t.includes("RETRY_LIMIT = 7"),
  );
  assert.ok(direct || viaRecall);
  assert.match(await recallText(memory, "RETRY_LIMIT"), /RETRY_LIMIT = 7/);
  memory.close();
});

test("a step too large for the budget is shortened with a recall pointer, not dropped", async () => {
  const memory = new Memory();
  const asm = new ContextAssembler(memory, { budget: 600 });
  const history: Message[] = [
    { role: "system", content: "sys" },
    { role: "user", content: "task" },
    { role: "assistant", content: "", toolCalls: [{ id: "a", name: "run_command", arguments: "{}" }] },
    { role: "tool", toolCallId: "a", name: "run_command", content: `${"x".repeat(20000)}END` },
  ];
  const sent = await asm.assemble(history, 1);
  const last = sent.at(-1)!;
  assert.notEqual(last, history[3]);
  assert.match(last.content, /recall "m[0-9a-f]{10}"/);
  assert.ok(last.content.endsWith("END"));
  assert.equal(history[3]!.content.length, 20003);
  await asm.flush();
  assert.match(await asm.recall(last.content.match(/recall "(m[0-9a-f]{10})"/)![1]!), /END$/);
  memory.close();
});

test("cache-aware: the history goes as it is while it fits, then each request extends the last until a compaction point", async () => {
  const memory = new Memory();
  const asm = new ContextAssembler(memory, { budget: 3000 });
  const history = session(60);
  let prev: Message[] | undefined;
  let extended = 0;
  let compactions = 0;
  // sentChars is counted incrementally: it must equal the text of every request measured whole.
  const textOf = (m: Message) =>
    m.role === "assistant" && m.toolCalls?.length
      ? [m.content, ...m.toolCalls.map((c) => `${c.name}(${c.arguments})`)].filter(Boolean).join("\n")
      : m.content;
  let chars = 0;
  for (let n = 4; n <= history.length; n += 2) {
    const sent = await asm.assemble(history.slice(0, n), n / 2);
    chars += sent.reduce((k, m) => k + textOf(m).length, 0);
    assert.equal(asm.sentChars, chars, `step ${n / 2}: characters sent`);
    assert.ok(tokensOf(sent) <= 3000 * 1.05, `step ${n / 2}: ${tokensOf(sent)} tokens`);
    if (asm.compactions === 0) assert.deepEqual(sent, history.slice(0, n), "whole history while it fits");
    if (prev && asm.compactions === compactions) {
      // Append-only: the previous request is a prefix of this one, message for message.
      assert.ok(prev.every((m, i) => sent[i] === m));
      extended++;
    }
    compactions = asm.compactions;
    prev = sent;
  }
  assert.ok(compactions >= 2, `compactions ${compactions}`);
  assert.ok(extended > compactions * 2, `${extended} extended requests, ${compactions} compactions`);
  // After a context-overflow error: a lower budget, and the next step is a compaction point.
  assert.equal(asm.shrink(0.5), 1500);
  const before = asm.compactions;
  const sent = await asm.assemble([...history, { role: "assistant", content: "done" }], 61);
  assert.equal(asm.compactions, before + 1);
  assert.ok(tokensOf(sent) <= 1500 * 1.05);
  await asm.flush();
  memory.close();
});

test("a message whose text memory already holds is stored once, under one id", async () => {
  const memory = new Memory();
  const asm = new ContextAssembler(memory, { budget: 400 });
  const history: Message[] = [
    { role: "system", content: "sys" },
    { role: "user", content: "task" },
  ];
  for (let s = 0; s < 3; s++)
    history.push(
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: `c${s}`, name: "read_file", arguments: '{"path":"a.ts"}' }],
      },
      { role: "tool", toolCallId: `c${s}`, name: "read_file", content: "export const A = 1;\n".repeat(20) },
    );
  await asm.assemble(history, 3);
  await asm.flush();
  // system + task + one call + one result, though the history read the file three times.
  assert.equal(memory.store.count(), 4);
  const [result] = memory.store.list({ types: ["tool_result"] });
  assert.equal(result?.meta.path, "a.ts");
  assert.match(await asm.recall(result!.id), /export const A = 1;/);
  memory.close();
});

test("a step whose only new words are bare numbers brings no recall note; a word still does", async () => {
  const memory = new Memory({ policy: { shortTermCapacity: 4, compressAbove: 50 } });
  const asm = new ContextAssembler(memory, { budget: 3000 });
  const step = (s: number, content: string): Message[] => [
    { role: "assistant", content: "", toolCalls: [{ id: `x${s}`, name: "read_file", arguments: "{}" }] },
    { role: "tool", toolCallId: `x${s}`, name: "read_file", content },
  ];
  const history: Message[] = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Fix the failing build." },
  ];
  const isNote = (m: Message) => m.content.startsWith("Memory (automatic note");
  let sent: Message[] = [];
  // Each output names its own setting and port (setting_s = 7000 + s).
  for (let s = 1, before = 0; asm.compactions < 2 || asm.compactions === before; s++) {
    before = asm.compactions;
    history.push(...step(s, `${"line of code here\n".repeat(60)}setting_${s} = ${7000 + s}`));
    sent = await asm.assemble(history, s);
    assert.ok(s < 100);
  }
  const shown = sent.map((m) => m.content).join("\n");
  const away = [...Array(10).keys()].map((s) => s + 1).find((s) => !shown.includes(`setting_${s} `));
  assert.ok(away, "some step's output is out of the context");
  // Only a number is new (it matches that earlier output word for word): no note.
  history.push(...step(98, `${7000 + away}`));
  sent = await asm.assemble(history, 98);
  assert.equal(sent.filter(isNote).length, 0, "a bare number brought a note");
  // A word of that output: it comes back.
  history.push(...step(99, `which value has setting_${away}?`));
  sent = await asm.assemble(history, 99);
  const notes = sent.filter(isNote);
  assert.equal(notes.length, 1);
  assert.ok(notes[0]!.content.includes(`setting_${away} = ${7000 + away}`), notes[0]!.content.slice(0, 300));
  await asm.flush();
  memory.close();
});

test("a recall note shows earlier steps matching the latest step's new words, and nothing when none match", async () => {
  // A small short-term buffer: older outputs are summarized (summaries rank high on importance).
  const memory = new Memory({ policy: { shortTermCapacity: 4, compressAbove: 50 } });
  const asm = new ContextAssembler(memory, { budget: 3000 });
  const step = (s: number, content: string): Message[] => [
    { role: "assistant", content: "", toolCalls: [{ id: `x${s}`, name: "read_file", arguments: "{}" }] },
    { role: "tool", toolCallId: `x${s}`, name: "read_file", content },
  ];
  const history: Message[] = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Fix the failing build." },
  ];
  // Each output names its own setting (setting_s) among lines of code.
  const isNote = (m: Message) => m.content.startsWith("Memory (automatic note");
  let sent: Message[] = [];
  // Steps until the one right after a second compaction point (room for a note).
  for (let s = 1, before = 0; asm.compactions < 2 || asm.compactions === before; s++) {
    before = asm.compactions;
    history.push(...step(s, `${"line of code here\n".repeat(60)}setting_${s} = ${s}`));
    sent = await asm.assemble(history, s);
    assert.ok(s < 100);
  }
  const shown = sent.map((m) => m.content).join("\n");
  const away = [...Array(10).keys()].map((s) => s + 1).find((s) => !shown.includes(`setting_${s} `));
  assert.ok(away, "some step's output is out of the context");
  // Words found nowhere in memory: no note, though important chunks lie outside the context.
  history.push(...step(98, "zanzibar quokka marmalade"));
  sent = await asm.assemble(history, 98);
  assert.equal(sent.filter(isNote).length, 0, "no note without a full-text match");
  // A word of an earlier output that the context does not hold: that output comes back.
  history.push(...step(99, `which value has setting_${away}?`));
  sent = await asm.assemble(history, 99);
  const notes = sent.filter(isNote);
  assert.equal(notes.length, 1);
  assert.ok(notes[0]!.content.includes(`setting_${away} = ${away}`), notes[0]!.content.slice(0, 300));
  await asm.flush();
  memory.close();
});

test("a first step sent as it is stores its system prompt and task after the request, as they were", async () => {
  const memory = new Memory();
  const asm = new ContextAssembler(memory, { budget: 20_000, preamble: "What earlier tasks taught: x" });
  const history = session(1);
  const first = await asm.assemble(history.slice(0, 2), 1);
  // The request is what it was: the system prompt, the task, the preamble.
  assert.deepEqual(
    first.map((m) => m.content),
    [history[0]!.content, history[1]!.content, "What earlier tasks taught: x"],
  );
  // Nothing is stored on its way: the two chunks wait until the request has gone (setImmediate).
  assert.equal(memory.store.count({ scope: memory.scope }), 0);
  await asm.written();
  const stored = memory.store.list({ scope: memory.scope, order: "oldest", limit: 10 });
  assert.deepEqual(
    stored.map((c) => [c.type, c.content, c.meta.role, c.goals]),
    [
      ["system_event", history[0]!.content, "system", []],
      ["user_input", history[1]!.content, "task", []],
    ],
  );
  // The goal is the task from then on (later chunks carry it), and the next step waits for nothing.
  const second = await asm.assemble(history, 2);
  assert.deepEqual(second.slice(0, 3), first);
  await asm.flush();
  const later = memory.store.list({ scope: memory.scope, order: "oldest", limit: 10 }).slice(2);
  assert.ok(later.length > 0 && later.every((c) => c.goals[0] === history[1]!.content));
});

test("a first step that is a compaction point (memory holds the scope) stores them before", async () => {
  const memory = new Memory();
  await memory.add({ type: "user_input", content: "an earlier part of the conversation" });
  const asm = new ContextAssembler(memory, { budget: 20_000 });
  await asm.assemble(session(0), 1);
  assert.equal(memory.store.count({ scope: memory.scope }), 3);
  await asm.flush();
});
