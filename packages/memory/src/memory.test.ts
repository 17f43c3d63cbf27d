import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { ScriptedProvider } from "@hands/llm";
import { HashEmbedder, OpenAIEmbedder } from "./embeddings.js";
import { Memory } from "./memory.js";
import type { SqliteStore } from "./sqlite-store.js";
import { LlmSummarizer } from "./summarize.js";

const dir = mkdtempSync(join(tmpdir(), "hands-memory-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `m${n++}.db`);

test("retrieval finds the relevant chunk and stays within the budget", async () => {
  const m = new Memory({ path: file() });
  for (let i = 0; i < 200; i++)
    await m.add({
      type: "tool_result",
      content: `log line ${i}: compiled module number ${i} without warnings`,
    });
  await m.add({ type: "tool_result", content: "The database port is configured as 5433 in config/db.yml" });
  const r = await m.retrieve("which port does the database use?", { budget: 120 });
  assert.ok(r.tokens <= 120, `tokens ${r.tokens}`);
  assert.ok(r.items.some((i) => i.text.includes("5433")));
  // Budgeted selection: a zero budget gets nothing.
  assert.equal((await m.retrieve("database port", { budget: 0 })).items.length, 0);
  m.close();
});

test("importance follows the source order and the goal; feedback moves it", async () => {
  const m = new Memory({ path: file() });
  const text = "checked the value in src/app.ts";
  const sys = await m.add({ type: "system_event", content: text });
  const user = await m.add({ type: "user_input", content: text });
  const tool = await m.add({ type: "tool_result", content: text });
  const thought = await m.add({ type: "thought", content: text });
  const err = await m.add({ type: "tool_result", content: text, meta: { error: "1" } });
  const order = [sys, user, tool, thought, err].map((c) => c.importance);
  assert.deepEqual(
    [...order].sort((a, b) => b - a),
    order,
  );
  assert.ok(order[0]! > order[4]!);

  const rel = await m.add({ type: "thought", content: "parser crashes on unicode escapes" });
  const before = rel.importance;
  assert.ok(m.setGoal("fix the parser crash on unicode escapes") > 0);
  assert.ok(m.store.get(rel.id)!.importance > before, "goal change raises related chunks");
  const scored = m.store.events({ chunkId: rel.id }).filter((e) => e.kind === "scored");
  assert.equal(scored.at(-1)?.reason, "goal changed");

  const v = m.store.get(rel.id)!.importance;
  m.feedback(rel.id, "corrected");
  assert.ok(m.store.get(rel.id)!.importance < v);
  assert.equal(m.store.get(rel.id)!.verification, "corrected");
  m.close();
});

test("adaptive encoding: the bar rises as working memory fills, which stays within budget", async () => {
  const m = new Memory({ path: file(), policy: { workingBudget: 300, shortTermCapacity: 10 } });
  const first = await m.add({ type: "thought", content: "thinking about the next step to take" });
  assert.equal(first.layer, "working");
  for (let i = 0; i < 40; i++)
    await m.add({
      type: "tool_result",
      content: `output ${i} of the build: all ${i} targets are up to date`,
    });
  const late = await m.add({ type: "thought", content: "thinking about the next step to take" });
  assert.equal(late.layer, "short_term");
  assert.ok(m.store.tokens({ scope: m.scope, layers: ["working"] }) <= 300);
  assert.ok(m.store.count({ layers: ["short_term"] }) <= 10);
  assert.ok(m.store.count({ layers: ["long_term"] }) > 0);
  const demoted = m.store.events().filter((e) => e.kind === "demoted");
  assert.ok(demoted.length > 0 && demoted.every((e) => e.reason.length > 10));
  m.close();
});

test("compression keeps pointers; recall expands summaries of summaries to the originals", async () => {
  const m = new Memory({ path: file() });
  const a = await m.add({ type: "tool_result", content: `${"noise ".repeat(100)}the secret is 42` });
  const b = await m.add({ type: "tool_result", content: "second original text" });
  const s1 = await m.compress([a.id, b.id]);
  const c = await m.add({ type: "tool_result", content: "third original" });
  const s2 = await m.compress([s1.id, c.id]);
  assert.deepEqual(s2.sources, [s1.id, c.id]);
  assert.equal(m.store.get(a.id)!.parent, s1.id);
  const r = m.recall(s2.id)!;
  assert.deepEqual(r.originals.map((o) => o.content).sort(), [a.content, b.content, c.content].sort());
  assert.ok(m.store.events({ chunkId: s2.id }).some((e) => e.kind === "recalled"));
  m.close();
});

test("LLM summaries through a Provider, extractive when the model fails", async () => {
  const good = new Memory({
    path: file(),
    summarizer: new LlmSummarizer(new ScriptedProvider([{ content: "short summary" }])),
  });
  const x = await good.add({ type: "tool_result", content: "a long tool output" });
  assert.equal((await good.compress([x.id])).content, "short summary");
  good.close();
  const bad = new Memory({
    path: file(),
    summarizer: new LlmSummarizer(new ScriptedProvider([{ error: "down" }])),
  });
  const y = await bad.add({ type: "tool_result", content: "kept text" });
  assert.equal((await bad.compress([y.id])).content, "kept text");
  bad.close();
});

test("every move is logged with a reason; a snapshot plus the log replays to the same state", async () => {
  let t = 1_000;
  const m = new Memory({
    path: file(),
    clock: () => t++,
    policy: { workingBudget: 200, shortTermCapacity: 4 },
  });
  for (let i = 0; i < 5; i++)
    await m.add({ type: "tool_result", content: `early output ${i} ${"x ".repeat(40)}` });
  const snap = m.snapshot();
  for (let i = 0; i < 20; i++)
    await m.add({ type: "tool_result", content: `later output ${i} ${"word ".repeat(60)}` });
  const ids = m.store.list({ limit: 2 }).map((c) => c.id);
  await m.compress(ids);
  m.setGoal("later output");
  const events = m.store.events();
  assert.ok(events.every((e) => typeof e.reason === "string" && e.reason.length > 0));
  const kinds = new Set(events.map((e) => e.kind));
  for (const k of ["created", "demoted", "compressed", "scored"]) assert.ok(kinds.has(k as never), k);
  const replayed = await Memory.replay(snap, events, { path: file() });
  assert.deepEqual(replayed.snapshot(), m.snapshot());
  replayed.close();
  m.close();
});

test("the log keeps no second copy of a chunk's content, yet reads and replays whole, after a deletion too", async () => {
  let t = 1_000;
  const m = new Memory({
    path: file(),
    clock: () => t++,
    policy: { deleteArchivedAfterMs: 10, archiveAfterMs: 10, archiveBelow: 2 },
  });
  const big = "a tool output line that repeats\n".repeat(100);
  const kept = await m.add({ type: "tool_result", content: `kept ${big}` });
  const gone = await m.add({ type: "tool_result", content: `gone ${big}`, layer: "long_term" });
  // The stored entry of a creation holds the chunk's metadata, not its text.
  const raw = (m.store as SqliteStore).db
    .prepare("SELECT data FROM events WHERE kind = 'created'")
    .pluck()
    .all() as string[];
  assert.equal(raw.length, 2);
  for (const d of raw) {
    assert.ok(!d.includes(big) && d.length < big.length / 2, "no content in the log entry");
    assert.equal(typeof JSON.parse(d).chunk.tokens, "number");
  }
  const snap = { version: 1 as const, seq: 0, chunks: [] };
  // Archived, then deleted by policy: its row is gone, its content stays in the log.
  m.archive(gone.id, "test");
  t += 100;
  assert.equal(m.maintain().deleted, 1);
  assert.equal(m.store.get(gone.id), undefined);
  const events = m.store.events();
  const created = events.flatMap((e) => (e.kind === "created" ? [e.chunk] : []));
  assert.deepEqual(
    created.map((c) => c.content),
    [kept.content, gone.content],
  );
  assert.ok(
    events.every((e) => !("content" in e)),
    "a deletion reads as before",
  );
  const replayed = await Memory.replay(snap, events, { path: file() });
  assert.deepEqual(replayed.snapshot().chunks, m.snapshot().chunks);
  assert.equal(replayed.store.get(kept.id)?.content, kept.content);
  replayed.close();
  m.close();
});

test("lifecycle policy: idle decay and archive; deletion only when configured", async () => {
  let now = 0;
  const m = new Memory({
    path: file(),
    clock: () => now,
    policy: { idleAfterMs: 10, archiveAfterMs: 20, archiveBelow: 0.99, deleteArchivedAfterMs: 100 },
  });
  const c = await m.add({ type: "thought", content: "old idea", layer: "long_term" });
  now = 30;
  const r = m.maintain();
  assert.equal(r.archived, 1);
  assert.ok(r.decayed >= 1);
  assert.equal(m.store.get(c.id)!.layer, "archived");
  now = 200;
  assert.equal(m.maintain().deleted, 1);
  assert.equal(m.store.get(c.id), undefined);
  m.close();
});

test("cross-task memory: what one task learned is recalled at the start of a related one", async () => {
  const path = file();
  const first = new Memory({ path, scope: "run-1" });
  await first.learn("/repo", {
    task: "make the tests pass",
    outcome: "done: fixed the date parser",
    commands: ["npm test -- --grep parser"],
    facts: ["Tests live in test/unit and use mocha"],
  });
  first.close();
  const second = new Memory({ path, scope: "run-2" });
  const r = await second.recallWorkspace("/repo", "the parser tests fail again", 500);
  const text = r.items.map((i) => i.text).join("\n");
  assert.match(text, /npm test -- --grep parser/);
  assert.equal((await second.recallWorkspace("/other", "parser tests", 500)).items.length, 0);
  second.close();
});

test("OpenAI-compatible /embeddings over real HTTP", async () => {
  const seen: unknown[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      const parsed = JSON.parse(body) as { input: string[]; model: string };
      seen.push(parsed);
      const hash = new HashEmbedder(8);
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          data: parsed.input.map((t, index) => ({ index, embedding: [...hash.embedSync(t)] })).reverse(),
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  try {
    const e = new OpenAIEmbedder({ baseURL: url, model: "emb", dimensions: 8, batchSize: 2 });
    const vs = await e.embed(["alpha", "beta", "gamma"]);
    assert.equal(vs.length, 3);
    assert.deepEqual(
      [...vs[2]!],
      [...new HashEmbedder(8).embedSync("gamma")].map((x) => Math.fround(x)),
    );
    assert.equal(seen.length, 2);
    const m = new Memory({ path: file(), embedder: e });
    await m.add({ type: "fact", content: "the deploy key lives in vault" });
    assert.equal((await m.retrieve("deploy key", { budget: 100 })).items.length, 1);
    m.close();
    await assert.rejects(
      new OpenAIEmbedder({ baseURL: url, model: "emb", dimensions: 9 }).embed(["x"]),
      /dimensions/,
    );
  } finally {
    server.close();
  }
});
