// LLM summaries and an /embeddings endpoint, through the real wire protocol (the scripted
// OpenAI-compatible HTTP server); a failing endpoint never loses a chunk.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { createProvider, startScriptedServer } from "@hands/llm";
import { OpenAIEmbedder } from "./embeddings.js";
import { Memory } from "./memory.js";
import { ResilientEmbedder } from "./resilient-embedder.js";
import { LlmSummarizer } from "./summarize.js";

const dir = mkdtempSync(join(tmpdir(), "hands-endpoints-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `e${n++}.db`);
const provider = (url: string) =>
  createProvider({ provider: "openai", model: "summarizer", baseURL: url, apiKey: "k", maxRetries: 0 });

test("compress with an LLM summarizer: the model's summary, pointing back to the originals", async () => {
  const server = await startScriptedServer([{ content: "Port 5433 set in config/db.yml; tests pass." }]);
  try {
    const m = new Memory({ path: file(), summarizer: new LlmSummarizer(provider(server.url)) });
    const a = await m.add({ type: "tool_result", content: "config/db.yml now sets port: 5433" });
    const b = await m.add({ type: "tool_result", content: "npm test: 14 passing" });
    const s = await m.compress([a.id, b.id]);
    assert.equal(s.content, "Port 5433 set in config/db.yml; tests pass.");
    assert.equal(s.meta.summarizer, "llm:summarizer");
    const sent = JSON.stringify(server.requests[0]!.body.messages);
    assert.match(sent, /Summarize the notes/);
    assert.match(sent, /port: 5433/);
    assert.match(sent, /14 passing/);
    assert.deepEqual(
      m.recall(s.id)!.originals.map((o) => o.content),
      [a.content, b.content],
    );
    m.close();
  } finally {
    await server.close();
  }
});

test("a failing summary model falls back to an extractive summary, with a warning", async () => {
  const server = await startScriptedServer(() => ({ status: 500, errorMessage: "model down" }));
  try {
    const errors: string[] = [];
    const m = new Memory({
      path: file(),
      summarizer: new LlmSummarizer(provider(server.url), (e) => errors.push(e.message)),
    });
    const a = await m.add({
      type: "tool_result",
      content: "The build failed: missing symbol parse_header in src/io.c",
    });
    const s = await m.compress([a.id]);
    assert.match(s.content, /parse_header/);
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, /500/);
    assert.equal(m.recall(s.id)!.originals[0]!.content, a.content);
    m.close();
  } finally {
    await server.close();
  }
});

test("an /embeddings endpoint: its size is probed, its vectors drive similarity search", async () => {
  const server = await startScriptedServer({ script: [], embeddings: { dimensions: 24 } });
  try {
    const embedder = await OpenAIEmbedder.connect({ baseURL: server.url, model: "emb", apiKey: "sk-e" });
    assert.equal(embedder.dimensions, 24);
    const m = new Memory({ path: file(), embedder });
    await m.add({ type: "fact", content: "deploys go through the staging cluster first" });
    await m.add({ type: "fact", content: "the parser handles unicode escapes" });
    const hits = m.store.searchVector((await embedder.embed(["staging cluster deploys"]))[0]!, m.scope, 2);
    const best = m.store.get(hits[0]!.id)!;
    assert.match(best.content, /staging cluster/);
    const posts = server.requests.filter((r) => r.path === "/v1/embeddings");
    assert.ok(posts.length >= 4);
    assert.equal(posts[0]!.headers.authorization, "Bearer sk-e");
    assert.equal(posts[0]!.body.model, "emb");
    m.close();
  } finally {
    await server.close();
  }
});

test("a failing /embeddings endpoint loses no chunk: empty vectors, one warning per outage, retried later", async () => {
  let failing = false;
  const server = await startScriptedServer({
    script: [],
    embeddings: { dimensions: 16, status: () => (failing ? 503 : undefined) },
  });
  try {
    let now = 1_000_000;
    const errors: string[] = [];
    const embedder = new ResilientEmbedder(
      await OpenAIEmbedder.connect({ baseURL: server.url, model: "emb" }),
      { onError: (e) => errors.push(e.message), retryAfterMs: 60_000, clock: () => now },
    );
    const path = file();
    const m = new Memory({ path, embedder });
    failing = true;
    const lost = await m.add({ type: "tool_result", content: "the migration id is 20240611_add_users" });
    await m.add({ type: "tool_result", content: "second chunk while the endpoint is down" });
    const calls = server.requests.filter((r) => r.path === "/v1/embeddings").length;
    assert.equal(errors.length, 1, "one warning for the outage");
    assert.match(errors[0]!, /503/);
    assert.equal(embedder.fallbacks, 2);
    // Within the retry delay the endpoint is not asked again.
    await m.add({ type: "tool_result", content: "third" });
    assert.equal(server.requests.filter((r) => r.path === "/v1/embeddings").length, calls);
    // The chunk is stored, and full text still finds it.
    const found = await m.retrieve("migration id 20240611_add_users", { budget: 200 });
    assert.ok(found.items.some((i) => i.chunk.id === lost.id));
    // After the delay, a working endpoint is used again.
    failing = false;
    now += 61_000;
    await m.add({ type: "tool_result", content: "back up" });
    assert.equal(
      embedder.fallbacks,
      4,
      "three chunks and one query got empty vectors, the last chunk a real one",
    );
    assert.equal(errors.length, 1);
    m.close();
    // Nothing was lost on disk either.
    const reopened = new Memory({ path, embedder });
    assert.equal(reopened.store.count(), 4);
    reopened.close();
  } finally {
    await server.close();
  }
});

test("bad answers from an /embeddings endpoint are clear errors", async () => {
  const server = await startScriptedServer({ script: [], embeddings: { dimensions: 8 } });
  try {
    const e = await OpenAIEmbedder.connect({ baseURL: server.url, model: "emb", dimensions: 9 });
    await assert.rejects(e.embed(["x"]), /expected 9 dimensions, got 8/);
    await assert.rejects(
      OpenAIEmbedder.connect({ baseURL: `${server.url}/nope`, model: "emb" }),
      /embeddings request failed: HTTP 404/,
    );
  } finally {
    await server.close();
  }
});
