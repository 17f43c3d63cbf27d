import assert from "node:assert/strict";
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { HashEmbedder } from "./embeddings.js";
import { betterSqliteAddon, SqliteStore } from "./sqlite-store.js";
import type { Chunk, MemoryEventInput } from "./types.js";

const dir = mkdtempSync(join(tmpdir(), "hands-store-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `s${n++}.db`);
const embedder = new HashEmbedder();

function chunk(id: string, content: string, step: number): Chunk {
  return {
    id,
    scope: "s",
    type: "tool_result",
    content,
    createdAt: step,
    updatedAt: step,
    importance: 0.5,
    accessCount: 0,
    goals: [],
    confidence: 1,
    verification: "verified",
    tokens: Math.ceil(content.length / 4),
    layer: "long_term",
    sources: [],
    step,
    meta: {},
  };
}

/** Adds chunks in one transaction (fast enough to build stores of thousands in a test). */
function fill(store: SqliteStore, contents: string[], first = 0): string[] {
  const events: MemoryEventInput[] = [];
  const vectors = new Map<string, Float32Array>();
  const ids = contents.map((content, i) => {
    const c = chunk(`c${first + i}`, content, first + i);
    events.push({ kind: "created", chunk: c, time: c.createdAt, reason: "test" });
    vectors.set(c.id, embedder.embedSync(content));
    return c.id;
  });
  store.append(events, vectors);
  return ids;
}

test("a path in the query finds its chunk in a large store where its outer tokens are everywhere", () => {
  const store = new SqliteStore({ path: file(), dimensions: embedder.dimensions });
  // 6,000 chunks, each naming some src/…/….ts file: "src" and "ts" are in all of them.
  const contents = Array.from({ length: 6000 }, (_, i) => `read src/mod${i % 1500}/file${i}.ts ok`);
  contents[1234] = "the retry policy lives in src/net/retry_policy.ts and allows 3 attempts";
  contents[4321] = "the net module and the retry code are elsewhere: src/retry/net.ts";
  fill(store, contents);
  const hits = store.searchText("where is src/net/retry_policy.ts?", { scope: "s" }, 10);
  assert.equal(hits[0]?.id, "c1234");
  // "net" then "retry" in that order is the phrase; the other chunk has them apart and reversed.
  assert.ok(!hits.some((h) => h.id === "c4321"), JSON.stringify(hits));
  store.close();
});

test("a query of only common terms is ranked among its newest matches; a rare term anywhere", () => {
  const store = new SqliteStore({ path: file(), dimensions: embedder.dimensions });
  const contents = Array.from({ length: 12_000 }, (_, i) => `build output line ${i} finished`);
  contents[10] = "build output: the flaky snapshot test failed";
  fill(store, contents);
  // "build" is in every chunk: the best of the newest matches (about 4,000), not of all 12,000.
  const common = store.searchText("build", { scope: "s" }, 50);
  assert.equal(common.length, 50);
  const steps = store.getMany(
    common.map((h) => h.id),
    { content: false },
  );
  assert.ok(
    steps.every((c) => c.step! >= 12_000 - 4000),
    `oldest ${Math.min(...steps.map((c) => c.step!))}`,
  );
  // A rare term is found wherever it is, even next to the common ones.
  assert.equal(store.searchText("flaky build", { scope: "s" }, 5)[0]?.id, "c10");
  assert.equal(store.searchText("nowhere-to-be-found", { scope: "s" }, 5).length, 0);
  store.close();
});

test("a filter that drops the best matches still finds the rest: the pool grows while it was full", () => {
  const store = new SqliteStore({ path: file(), dimensions: embedder.dimensions });
  // The three chunks the filter keeps are long, so BM25 ranks them below all 497 short ones.
  const long = `widget ${"padding words that dilute the match ".repeat(40)}`;
  const contents = Array.from({ length: 500 }, (_, i) => (i < 3 ? long : `widget ${i}`));
  fill(store, contents);
  const hits = store.searchText("widget", { scope: "s", steps: [0, 2] }, 3);
  assert.deepEqual(hits.map((h) => h.id).sort(), ["c0", "c1", "c2"]);
  // Fewer matches than the pool, none kept by the filter: nothing, without a larger pool.
  assert.deepEqual(store.searchText("widget", { scope: "s", steps: [9000, 9001] }, 3), []);
  // A pool that held every match and fewer kept than asked for: those it kept.
  const two = store.searchText("widget", { scope: "s", steps: [1, 2] }, 40);
  assert.deepEqual(two.map((h) => h.id).sort(), ["c1", "c2"]);
  store.close();
});

test("metadata lists without content, kept current by our events and by another connection's", () => {
  const path = file();
  const a = new SqliteStore({ path, dimensions: embedder.dimensions });
  fill(a, ["alpha one", "beta two", "gamma three"]);
  const meta = a.list({ scope: "s", order: "oldest", content: false });
  assert.deepEqual(
    meta.map((c) => [c.id, c.content, c.step]),
    [
      ["c0", "", 0],
      ["c1", "", 1],
      ["c2", "", 2],
    ],
  );
  // Cached objects are reused; a change through our own events replaces them.
  assert.equal(a.getMany(["c1"], { content: false })[0], meta[1]);
  a.append([{ kind: "scored", id: "c1", importance: 0.9, time: 5, reason: "test" }]);
  assert.equal(a.getMany(["c1"], { content: false })[0]!.importance, 0.9);
  assert.equal(a.list({ scope: "s", order: "importance", limit: 1, content: false })[0]!.id, "c1");
  // Another connection's writes drop the caches (metadata, counts, vectors).
  const b = new SqliteStore({ path, dimensions: embedder.dimensions });
  b.append([{ kind: "scored", id: "c1", importance: 0.1, time: 6, reason: "test" }]);
  fill(b, ["delta four"], 3);
  assert.equal(a.getMany(["c1"], { content: false })[0]!.importance, 0.1);
  assert.equal(a.shorts(["c3"]).size, 0);
  assert.equal(a.searchVector(embedder.embedSync("delta four"), "s", 1)[0]?.id, "c3");
  assert.deepEqual(
    a.list({ scope: "s", stepIn: [3], content: false }).map((c) => c.id),
    ["c3"],
  );
  a.close();
  b.close();
});

test("compact merges the full-text index's segments, and every search finds what it found before", () => {
  const store = new SqliteStore({ path: file(), dimensions: embedder.dimensions });
  // One chunk per transaction, as an agent stores its steps: one index segment each.
  for (let i = 0; i < 120; i++) fill(store, [`step ${i} read src/mod${i % 7}.ts token${i % 13}`], i);
  // FTS5 numbers its data rows by segment (segment id in the bits above 37).
  const segments = () =>
    store.db
      .prepare("SELECT count(DISTINCT id >> 37) FROM chunks_fts_data WHERE id > 10")
      .pluck()
      .get() as number;
  const queries = ["token3", "src/mod5.ts", "step 77", "token12 src/mod1.ts"];
  const before = queries.map((q) => store.searchText(q, { scope: "s" }, 20));
  const many = segments();
  for (let i = 0; i < 20; i++) store.compact();
  assert.ok(segments() < many / 2, `${many} segments, then ${segments()}`);
  assert.deepEqual(
    queries.map((q) => store.searchText(q, { scope: "s" }, 20)),
    before,
  );
  store.close();
});

test("better-sqlite3's addon is found in its package: build/Release, else by its own search from there", () => {
  const here = createRequire(import.meta.url);
  const real = here.resolve("better-sqlite3/package.json");
  assert.equal(betterSqliteAddon(real), join(dirname(real), "build", "Release", "better_sqlite3.node"));
  /** A copy of the package (and of `bindings`, its own dependency), its addon in `addonDir`. */
  const layout = (name: string, addonDir?: string) => {
    const modules = join(dir, name, "node_modules");
    const pkg = join(modules, "better-sqlite3");
    mkdirSync(pkg, { recursive: true });
    copyFileSync(real, join(pkg, "package.json"));
    if (addonDir) {
      mkdirSync(join(pkg, addonDir), { recursive: true });
      copyFileSync(
        join(dirname(real), "build", "Release", "better_sqlite3.node"),
        join(pkg, addonDir, "better_sqlite3.node"),
      );
    }
    for (const dep of ["bindings", "file-uri-to-path"])
      cpSync(dirname(createRequire(real).resolve(`${dep}/package.json`)), join(modules, dep), {
        recursive: true,
      });
    return pkg;
  };
  // Its build put the addon in out/Release: found there, from better-sqlite3's folder; it loads.
  const pkg = layout("other-build", join("out", "Release"));
  const found = betterSqliteAddon(join(pkg, "package.json"));
  assert.equal(found, join(pkg, "out", "Release", "better_sqlite3.node"));
  const Database = here("better-sqlite3") as typeof import("better-sqlite3");
  const db = new Database(":memory:", { nativeBinding: found });
  assert.deepEqual(db.prepare("SELECT 6 * 7 AS n").get(), { n: 42 });
  db.close();
  // Nowhere to be found: better-sqlite3's own error, naming the places it looked.
  // (A folder of its own: node remembers the paths it has resolved.)
  const none = layout("no-build");
  assert.throws(() => betterSqliteAddon(join(none, "package.json")), /Could not locate the bindings file/);
});

const has = (db: SqliteStore["db"], sql: string) => {
  try {
    db.prepare(sql).get();
    return true;
  } catch {
    return false;
  }
};
const vecLoaded = (store: SqliteStore) => has(store.db, "SELECT vec_version()");

test("opening a memory file and searching it by vector loads no SQLite extension: the sign bits are a column of chunks", () => {
  const path = file();
  const made = new SqliteStore({ path, dimensions: 256 });
  fill(made, ["alpha parser tokens", "beta lexer states", "gamma parser tables", "delta writer"]);
  const query = embedder.embedSync("parser tables");
  const before = made.searchVector(query, "s", 3);
  made.close();
  const again = new SqliteStore({ path, dimensions: 256 });
  assert.deepEqual(again.searchVector(query, "s", 3), before);
  assert.equal(before[0]!.id, "c2");
  // A chunk added and one deleted afterwards are seen by the index already built.
  fill(again, ["parser tables again"], 10);
  again.append([{ kind: "deleted", id: "c2", time: 11, reason: "test" }]);
  assert.deepEqual(
    again.searchVector(query, "s", 2).map((h) => h.id),
    ["c10", "c0"],
  );
  assert.equal(vecLoaded(again), false, "sqlite-vec is not loaded");
  assert.equal(has(again.db, "SELECT * FROM chunks_vec"), false, "no vec0 table in a new file");
  again.close();
});

test("a file whose sign bits are in sqlite-vec's chunks_vec (made before the bits column): searched as before, read-only or migrated", () => {
  const path = file();
  const made = new SqliteStore({ path, dimensions: 256 });
  fill(
    made,
    Array.from({ length: 40 }, (_, i) => `entry ${i} ${i % 3 ? "parser" : "writer"} tokens ${i * 7}`),
  );
  const query = embedder.embedSync("parser tokens 21");
  const expected = made.searchVector(query, "s", 5);
  const bits = made.db.prepare("SELECT rowid, bits FROM chunks ORDER BY rowid").raw().all();
  made.close();
  // The earlier layout: chunks without the bits column, the bits in a vec0 table.
  const Database = createRequire(import.meta.url)("better-sqlite3") as typeof import("better-sqlite3");
  const old = new Database(path);
  (createRequire(import.meta.url)("sqlite-vec") as { load(db: unknown): void }).load(old);
  old.exec(
    "CREATE VIRTUAL TABLE chunks_vec USING vec0 (scope TEXT PARTITION KEY, embedding bit[256]); INSERT INTO chunks_vec (rowid, scope, embedding) SELECT rowid, scope, vec_bit(bits) FROM chunks; DROP INDEX chunks_bits; ALTER TABLE chunks DROP COLUMN bits;",
  );
  old.close();

  const readOnly = new SqliteStore({ path, dimensions: 256, readonly: true });
  assert.deepEqual(readOnly.searchVector(query, "s", 5), expected, "read-only: bits from the floats");
  assert.equal(vecLoaded(readOnly), false);
  readOnly.close();

  const migrated = new SqliteStore({ path, dimensions: 256 });
  assert.deepEqual(migrated.db.prepare("SELECT rowid, bits FROM chunks ORDER BY rowid").raw().all(), bits);
  assert.equal(
    has(migrated.db, "SELECT 1 FROM chunks_vec_rowids"),
    false,
    "the vec0 table and its shadows dropped",
  );
  assert.deepEqual(migrated.searchVector(query, "s", 5), expected);
  migrated.close();
  const next = new SqliteStore({ path, dimensions: 256 });
  assert.equal(vecLoaded(next), false, "a migrated file's next open loads no extension");
  assert.deepEqual(next.searchVector(query, "s", 5), expected);
  next.close();
});
