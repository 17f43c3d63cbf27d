import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { Message } from "@hands/llm";
import { ContextAssembler } from "./context.js";
import { classifyReply, FeedbackTracker, MAX_JUDGED, referenceKeys } from "./feedback.js";
import { Memory } from "./memory.js";

const dir = mkdtempSync(join(tmpdir(), "hands-feedback-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `f${n++}.db`);

test("reference keys are the specific words: paths, file names, identifiers, numbers, ids", () => {
  const keys = referenceKeys(
    "The config at config/db.yml sets DB_PORT to 5433; see parseConfig in loader.ts (id m0123456789). The end.",
  );
  for (const k of ["config/db.yml", "db_port", "5433", "parseconfig", "loader.ts", "m0123456789"])
    assert.ok(keys.has(k), `has ${k}`);
  for (const k of ["the", "config", "sets", "end", "see"]) assert.ok(!keys.has(k), `not ${k}`);
  assert.equal(referenceKeys("").size, 0);
  assert.equal(referenceKeys("just some plain words here").size, 0);
  // Huge texts are scanned only up to a bound.
  assert.ok(!referenceKeys(`${"x ".repeat(20_000)} FAR_AWAY_KEY`).has("far_away_key"));
});

test("a user's reply is classified as a correction, a confirmation, or neither", () => {
  const cases: [string, ReturnType<typeof classifyReply>][] = [
    ["No, that's wrong: the port is 5433.", "corrected"],
    ["nope", "corrected"],
    ["That's not right, use yarn", "corrected"],
    ["That’s wrong.", "corrected"],
    ["it still fails with the same error", "corrected"],
    ["You are wrong about the path", "corrected"],
    ["It didn't work", "corrected"],
    ["Yes, that works, thanks", "confirmed"],
    ["Perfect!", "confirmed"],
    ["  great, now add a test", "confirmed"],
    ["LGTM", "confirmed"],
    ["Now add a test for the parser", undefined],
    ["Notice the error in line 3", undefined],
    ["knowing that, continue", undefined],
    ["", undefined],
  ];
  for (const [text, want] of cases) assert.equal(classifyReply(text), want, text);
});

test("shown chunks the response references are used; retrieved ones it ignores are unused", async () => {
  const memory = new Memory({ path: file() });
  const port = await memory.add({
    type: "tool_result",
    content: "config/db.yml: port 5433, host db.internal",
  });
  const other = await memory.add({
    type: "tool_result",
    content: "README.md has 240 lines about setup_steps",
  });
  const recent = await memory.add({ type: "tool_result", content: "npm test: 12 passing, 0 failing" });
  const tracker = new FeedbackTracker(memory);
  const importance = (id: string) => memory.store.get(id)!.importance;
  const before = { port: importance(port.id), other: importance(other.id) };
  const answer: Message = {
    role: "assistant",
    content: "The database listens on 5433.",
    toolCalls: [{ id: "c1", name: "edit_file", arguments: JSON.stringify({ path: "config/db.yml" }) }],
  };
  tracker.observe(
    {
      shown: [
        { id: port.id, text: port.content, retrieved: true },
        { id: other.id, text: other.content, retrieved: true },
        { id: recent.id, text: recent.content, retrieved: false },
      ],
      fixed: ["You are a coding agent.", "Fix the database settings."],
    },
    [{ id: "m00000000a1", message: answer }],
  );
  assert.deepEqual(tracker.counts, { used: 1, unused: 1, confirmed: 0, corrected: 0 });
  const portEvents = memory.store.events({ chunkId: port.id });
  assert.ok(portEvents.some((e) => e.kind === "accessed" && e.reason === "referenced by a later step"));
  assert.equal(memory.store.get(port.id)!.accessCount, 1);
  assert.ok(importance(port.id) > before.port, "used gains");
  assert.ok(importance(other.id) <= before.other, "unused does not gain");
  // A chunk sent for recency and not referenced is left alone.
  assert.deepEqual(
    memory.store.events({ chunkId: recent.id }).map((e) => e.kind),
    ["created"],
  );
  memory.close();
});

test("words shared with the task, or by many shown chunks, prove nothing; an id mention does", async () => {
  const memory = new Memory({ path: file() });
  const chunks = [];
  for (let i = 0; i < 5; i++)
    chunks.push(await memory.add({ type: "tool_result", content: `src/common.ts line ${i}: ok_${i}x` }));
  const tracker = new FeedbackTracker(memory);
  const view = {
    shown: chunks.map((c) => ({ id: c.id, text: c.content, retrieved: true })),
    fixed: ["system", "Fix src/task_file.ts"],
  };
  // src/common.ts is in all five; src/task_file.ts is in the task.
  tracker.observe(view, [
    {
      id: "m00000000b1",
      message: { role: "assistant", content: "Editing src/common.ts and src/task_file.ts" },
    },
  ]);
  assert.equal(tracker.counts.used, 0);
  assert.equal(tracker.counts.unused, 5);
  tracker.observe(view, [
    { id: "m00000000b2", message: { role: "assistant", content: `As ${chunks[2]!.id} says, it is fine.` } },
  ]);
  assert.equal(tracker.counts.used, 1);
  // A recall of a chunk's id is left to recall's own feedback (no double credit).
  tracker.observe(view, [
    {
      id: "m00000000b3",
      message: {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "r", name: "recall", arguments: JSON.stringify({ id: chunks[3]!.id }) }],
      },
    },
  ]);
  assert.equal(tracker.counts.used, 1);
  // Each note ignored counts once, however many steps it is shown.
  assert.equal(tracker.counts.unused, 5);
  memory.close();
});

test("work per step is bounded, and malformed tool arguments are read as text", async () => {
  const memory = new Memory({ path: file() });
  const shown = [];
  for (let i = 0; i < MAX_JUDGED + 20; i++) {
    const c = await memory.add({ type: "tool_result", content: `value_${i} is set` });
    shown.push({ id: c.id, text: c.content, retrieved: true });
  }
  const tracker = new FeedbackTracker(memory);
  tracker.observe({ shown, fixed: [] }, [
    {
      id: "m00000000c1",
      message: {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "x", name: "write_file", arguments: '{"content": "value_3 value_40 <- not json' }],
      },
    },
  ]);
  assert.equal(tracker.counts.used + tracker.counts.unused, MAX_JUDGED);
  assert.equal(tracker.counts.used, 1, "value_3 is judged, value_40 is past the bound");
  memory.close();
});

test("a user's correction marks the previous answer corrected; a confirmation, confirmed", async () => {
  const memory = new Memory({ path: file() });
  const tracker = new FeedbackTracker(memory);
  const a1 = await memory.add({ type: "agent_response", content: "The port is 5432." });
  const u1 = await memory.add({ type: "user_input", content: "No, that's wrong: it is 5433." });
  const a2 = await memory.add({ type: "agent_response", content: "Right, 5433." });
  const u2 = await memory.add({ type: "user_input", content: "Yes, thanks." });
  const u3 = await memory.add({ type: "user_input", content: "Yes, and again." });
  const msg = (id: string, role: "assistant" | "user"): { id: string; message: Message } => ({
    id,
    message: { role, content: memory.store.get(id)!.content },
  });
  tracker.observe(undefined, [msg(a1.id, "assistant"), msg(u1.id, "user")]);
  tracker.observe(undefined, [msg(a2.id, "assistant")]);
  tracker.observe(undefined, [msg(u2.id, "user"), msg(u3.id, "user")]);
  assert.equal(memory.store.get(a1.id)!.verification, "corrected");
  assert.equal(memory.store.get(a2.id)!.verification, "confirmed");
  assert.ok(memory.store.get(a1.id)!.confidence < 0.5);
  assert.deepEqual(
    { confirmed: tracker.counts.confirmed, corrected: tracker.counts.corrected },
    { confirmed: 1, corrected: 1 },
    "one reply marks one answer once",
  );
  memory.close();
});

test("through the assembler: an old result the model uses gains, and a correction reaches the answer", async () => {
  const memory = new Memory({ path: file() });
  const tracker = new FeedbackTracker(memory);
  const asm = new ContextAssembler(memory, { budget: 1200, feedback: tracker });
  const history: Message[] = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Tidy the service settings." },
  ];
  for (let s = 0; s < 20; s++) {
    const id = `c${s}`;
    history.push({
      role: "assistant",
      content: "",
      toolCalls: [{ id, name: "read_file", arguments: `{"path":"src/part${s}.ts"}` }],
    });
    const fact = s === 2 ? "\nexport const SERVICE_TIMEOUT_MS = 4711;" : "";
    history.push({
      role: "tool",
      toolCallId: id,
      name: "read_file",
      content: `${"filler text\n".repeat(80)}${fact}`,
    });
    await asm.assemble(history, s + 1);
  }
  history.push({ role: "user", content: "Which timeout does the service use?" });
  await asm.assemble(history, 21);
  const note = asm.last?.items.find((i) => /SERVICE_TIMEOUT_MS/.test(i.text));
  assert.ok(note, "the old fact is a memory note");
  history.push({ role: "assistant", content: "SERVICE_TIMEOUT_MS is 4711 ms." });
  history.push({ role: "user", content: "No, that's wrong — it was changed to 5000." });
  await asm.assemble(history, 22);
  await asm.flush();
  const moves = memory.store.events({ chunkId: note.chunk.id });
  assert.ok(moves.some((e) => e.kind === "accessed" && e.reason === "referenced by a later step"));
  assert.ok(tracker.counts.unused > 0, "notes it ignored were marked");
  const answer = memory.store
    .list({ scope: memory.scope, types: ["agent_response"] })
    .find((c) => c.content.startsWith("SERVICE_TIMEOUT_MS is 4711"));
  assert.equal(answer?.verification, "corrected");
  memory.close();
});
