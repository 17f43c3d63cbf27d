// The default store: one SQLite file (WAL, one transaction per batch of events), FTS5 for
// BM25 full-text search, and sqlite-vec for the first, bit-quantized pass of vector search.
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { BitIndex } from "./bit-index.js";
import { toBits } from "./embeddings.js";
import type { Hit, ListOptions, MemoryStore } from "./store.js";
import { contentWords } from "./text.js";
import type { Chunk, ChunkFilter, MemoryEvent, MemoryEventInput, Snapshot } from "./types.js";

const require = createRequire(import.meta.url);

export interface SqliteStoreOptions {
  /** File path, or ":memory:". */
  path: string;
  dimensions: number;
  readonly?: boolean;
}

interface Row {
  rowid: number;
  id: string;
  scope: string;
  type: string;
  content: string;
  created_at: number;
  updated_at: number;
  importance: number;
  access_count: number;
  last_access: number | null;
  goals: string;
  confidence: number;
  verification: string;
  tokens: number;
  short: string | null;
  short_tokens: number | null;
  layer: string;
  parent: string | null;
  sources: string;
  step: number | null;
  meta: string;
}

const COLUMNS =
  "rowid, id, scope, type, content, created_at, updated_at, importance, access_count, last_access, goals, confidence, verification, tokens, short, short_tokens, layer, parent, sources, step, meta";

function toChunk(r: Row): Chunk {
  return {
    id: r.id,
    scope: r.scope,
    type: r.type as Chunk["type"],
    content: r.content,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    importance: r.importance,
    accessCount: r.access_count,
    ...(r.last_access !== null ? { lastAccess: r.last_access } : {}),
    goals: JSON.parse(r.goals) as string[],
    confidence: r.confidence,
    verification: r.verification as Chunk["verification"],
    tokens: r.tokens,
    ...(r.short !== null ? { short: r.short } : {}),
    ...(r.short_tokens !== null ? { shortTokens: r.short_tokens } : {}),
    layer: r.layer as Chunk["layer"],
    ...(r.parent !== null ? { parent: r.parent } : {}),
    sources: JSON.parse(r.sources) as string[],
    ...(r.step !== null ? { step: r.step } : {}),
    meta: JSON.parse(r.meta) as Record<string, string>,
  };
}

function where(filter: ChunkFilter, alias = ""): { sql: string; params: unknown[] } {
  const p = alias ? `${alias}.` : "";
  const clauses: string[] = [];
  const params: unknown[] = [];
  const inList = (col: string, values: readonly string[]) => {
    clauses.push(`${p}${col} IN (${values.map(() => "?").join(",")})`);
    params.push(...values);
  };
  if (filter.scope !== undefined)
    inList("scope", Array.isArray(filter.scope) ? filter.scope : [filter.scope]);
  if (filter.types?.length) inList("type", filter.types);
  if (filter.layers?.length) inList("layer", filter.layers);
  if (filter.minImportance !== undefined) {
    clauses.push(`${p}importance >= ?`);
    params.push(filter.minImportance);
  }
  if (filter.goal !== undefined) {
    clauses.push(`EXISTS (SELECT 1 FROM json_each(${p}goals) WHERE value = ?)`);
    params.push(filter.goal);
  }
  if (filter.uncompressedOnly) clauses.push(`${p}parent IS NULL`);
  if (filter.stepIn) {
    clauses.push(`${p}step IN (SELECT value FROM json_each(?))`);
    params.push(JSON.stringify(filter.stepIn));
  }
  if (filter.steps) {
    clauses.push(`${p}step BETWEEN ? AND ?`);
    params.push(filter.steps[0], filter.steps[1]);
  }
  return { sql: clauses.length ? clauses.join(" AND ") : "1", params };
}

export class SqliteStore implements MemoryStore {
  readonly db: BetterSqlite3.Database;
  private readonly stmts;

  constructor(readonly options: SqliteStoreOptions) {
    const Database = require("better-sqlite3") as typeof BetterSqlite3;
    if (!options.readonly && options.path !== ":memory:" && options.path !== "")
      mkdirSync(dirname(options.path), { recursive: true });
    this.db = new Database(options.path, options.readonly ? { readonly: true, fileMustExist: true } : {});
    (require("sqlite-vec") as { load(db: unknown): void }).load(this.db);
    if (!options.readonly) {
      this.db.pragma("journal_mode = WAL");
      // WAL + NORMAL: a commit survives a killed process; only an OS crash may lose the last ones.
      this.db.pragma("synchronous = NORMAL");
      this.migrate();
    }
    this.db.pragma("busy_timeout = 5000");
    const db = this.db;
    this.stmts = {
      insert: db.prepare(
        `INSERT INTO chunks (id, scope, type, content, created_at, updated_at, importance, access_count, last_access, goals, confidence, verification, tokens, short, short_tokens, layer, parent, sources, step, meta, embedding)
         VALUES (@id, @scope, @type, @content, @createdAt, @updatedAt, @importance, @accessCount, @lastAccess, @goals, @confidence, @verification, @tokens, @short, @shortTokens, @layer, @parent, @sources, @step, @meta, @embedding)`,
      ),
      fts: db.prepare("INSERT INTO chunks_fts (rowid, content) VALUES (?, ?)"),
      ftsDelete: db.prepare("INSERT INTO chunks_fts (chunks_fts, rowid, content) VALUES ('delete', ?, ?)"),
      vec: db.prepare("INSERT INTO chunks_vec (rowid, scope, embedding) VALUES (?, ?, vec_bit(?))"),
      vecDelete: db.prepare("DELETE FROM chunks_vec WHERE rowid = ?"),
      event: db.prepare(
        "INSERT INTO events (seq, time, kind, chunk_id, reason, data) VALUES (@seq, @time, @kind, @chunkId, @reason, @data)",
      ),
      get: db.prepare(`SELECT ${COLUMNS} FROM chunks WHERE id = ?`),
      score: db.prepare("UPDATE chunks SET importance = ?, updated_at = ? WHERE id = ?"),
      layer: db.prepare("UPDATE chunks SET layer = ?, updated_at = ? WHERE id = ?"),
      parent: db.prepare("UPDATE chunks SET parent = ?, updated_at = ? WHERE id = ?"),
      access: db.prepare(
        "UPDATE chunks SET access_count = access_count + 1, last_access = ?, updated_at = ? WHERE id = ?",
      ),
      verify: db.prepare("UPDATE chunks SET verification = ?, confidence = ?, updated_at = ? WHERE id = ?"),
      delete: db.prepare("DELETE FROM chunks WHERE id = ?"),
      lastSeq: db.prepare("SELECT coalesce(max(seq), 0) AS seq FROM events"),
      floor: db.prepare("SELECT value FROM meta WHERE key = 'seq_floor'"),
    };
  }

  private readonly cache = new Map<string, BetterSqlite3.Statement>();
  /** Prepared statements are reused: compiling one costs more than running it. */
  private prep(sql: string): BetterSqlite3.Statement {
    let st = this.cache.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.cache.set(sql, st);
    }
    return st;
  }

  private migrate(): void {
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS chunks (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        scope TEXT NOT NULL,
        type TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        importance REAL NOT NULL,
        access_count INTEGER NOT NULL,
        last_access INTEGER,
        goals TEXT NOT NULL,
        confidence REAL NOT NULL,
        verification TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        short TEXT,
        short_tokens INTEGER,
        layer TEXT NOT NULL,
        parent TEXT,
        sources TEXT NOT NULL,
        step INTEGER,
        meta TEXT NOT NULL,
        embedding BLOB
      );
      CREATE INDEX IF NOT EXISTS chunks_scope ON chunks (scope, layer);
      CREATE INDEX IF NOT EXISTS chunks_parent ON chunks (parent);
      CREATE INDEX IF NOT EXISTS chunks_step ON chunks (scope, step);
      CREATE INDEX IF NOT EXISTS chunks_importance ON chunks (scope, importance);
      CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5 (content, content='chunks', content_rowid='rowid', tokenize='porter unicode61');
      CREATE TABLE IF NOT EXISTS events (
        seq INTEGER PRIMARY KEY,
        time INTEGER NOT NULL,
        kind TEXT NOT NULL,
        chunk_id TEXT NOT NULL,
        reason TEXT NOT NULL,
        data TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS events_chunk ON events (chunk_id);
    `);
    // Files made before short stand-ins existed.
    const cols = (this.db.pragma("table_info(chunks)") as { name: string }[]).map((c) => c.name);
    if (!cols.includes("short"))
      this.db.exec(
        "ALTER TABLE chunks ADD COLUMN short TEXT; ALTER TABLE chunks ADD COLUMN short_tokens INTEGER;",
      );
    const dims = this.prep("SELECT value FROM meta WHERE key = 'dimensions'").get() as
      | { value: string }
      | undefined;
    if (!dims) {
      this.db.exec(
        `CREATE VIRTUAL TABLE chunks_vec USING vec0 (scope TEXT PARTITION KEY, embedding bit[${this.options.dimensions}])`,
      );
      this.prep("INSERT INTO meta (key, value) VALUES ('dimensions', ?)").run(
        String(this.options.dimensions),
      );
    } else if (Number(dims.value) !== this.options.dimensions) {
      throw new Error(
        `memory store ${this.options.path} holds ${dims.value}-dimension embeddings; the embedder makes ${this.options.dimensions}`,
      );
    }
  }

  append(events: (MemoryEventInput | MemoryEvent)[], embeddings?: Map<string, Float32Array>): MemoryEvent[] {
    const out: MemoryEvent[] = [];
    try {
      this.appendTx(events, embeddings, out);
    } catch (err) {
      // Rolled back: the in-process caches may hold rows that never committed.
      this.indexes.clear();
      this.metaCache.clear();
      this.total = -1;
      throw err;
    }
    return out;
  }

  private appendTx(
    events: (MemoryEventInput | MemoryEvent)[],
    embeddings: Map<string, Float32Array> | undefined,
    out: MemoryEvent[],
  ): void {
    this.db.transaction(() => {
      let seq = this.lastSeq();
      for (const input of events) {
        seq = "seq" in input ? input.seq : seq + 1;
        const e = { ...input, seq } as MemoryEvent;
        this.applyOne(e, embeddings);
        const { seq: _s, time, kind, reason, ...data } = e;
        this.stmts.event.run({
          seq,
          time,
          kind,
          chunkId: e.kind === "created" ? e.chunk.id : (e as { id: string }).id,
          reason,
          data: JSON.stringify(data),
        });
        out.push(e);
      }
    })();
  }

  private applyOne(e: MemoryEvent, embeddings?: Map<string, Float32Array>): void {
    const s = this.stmts;
    if (e.kind !== "created") this.metaCache.delete(e.id);
    switch (e.kind) {
      case "created": {
        const c = e.chunk;
        const vector = embeddings?.get(c.id);
        const info = s.insert.run({
          ...c,
          lastAccess: c.lastAccess ?? null,
          short: c.short ?? null,
          shortTokens: c.shortTokens ?? null,
          goals: JSON.stringify(c.goals),
          parent: c.parent ?? null,
          sources: JSON.stringify(c.sources),
          step: c.step ?? null,
          meta: JSON.stringify(c.meta),
          embedding: vector ? Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength) : null,
        });
        const rowid = BigInt(info.lastInsertRowid);
        if (this.total >= 0) this.total++;
        s.fts.run(rowid, c.content);
        if (vector) {
          const bits = toBits(vector);
          s.vec.run(rowid, c.scope, Buffer.from(bits));
          this.indexes.get(c.scope)?.add(Number(rowid), bits);
        }
        return;
      }
      case "scored":
        s.score.run(e.importance, e.time, e.id);
        return;
      case "promoted":
      case "demoted":
      case "archived":
        s.layer.run(e.layer, e.time, e.id);
        return;
      case "compressed":
        s.parent.run(e.summaryId, e.time, e.id);
        return;
      case "recalled":
      case "accessed":
        s.access.run(e.time, e.time, e.id);
        return;
      case "verified":
        s.verify.run(e.verification, e.confidence, e.time, e.id);
        return;
      case "deleted": {
        const row = s.get.get(e.id) as Row | undefined;
        if (!row) return;
        s.ftsDelete.run(BigInt(row.rowid), row.content);
        s.vecDelete.run(BigInt(row.rowid));
        this.indexes.get(row.scope)?.remove(row.rowid);
        s.delete.run(e.id);
        if (this.total >= 0) this.total--;
        return;
      }
    }
  }

  get(id: string): Chunk | undefined {
    const r = this.stmts.get.get(id) as Row | undefined;
    return r ? toChunk(r) : undefined;
  }

  /**
   * Metadata of recently read chunks (content left out), for retrieval's candidates. Our own
   * events drop the entries they change; a write by another connection drops them all.
   */
  private readonly metaCache = new Map<string, { chunk: Chunk; rowid: number }>();
  private metaVersion = -1;

  private cachedMeta(): Map<string, { chunk: Chunk; rowid: number }> {
    const version = this.db.pragma("data_version", { simple: true }) as number;
    if (version !== this.metaVersion || this.metaCache.size > 50_000) {
      this.metaCache.clear();
      this.metaVersion = version;
    }
    return this.metaCache;
  }

  getMany(ids: string[], options: { content?: boolean } = {}): Chunk[] {
    if (ids.length === 0) return [];
    if (options.content === false) {
      // Shared, read-only objects: callers copy before changing anything.
      const cache = this.cachedMeta();
      const missing = ids.filter((id) => !cache.has(id));
      if (missing.length) {
        const cols = COLUMNS.split(", ")
          .map((c) =>
            c === "content" ? "'' AS content" : c === "short" ? "NULL AS short" : `chunks.${c} AS ${c}`,
          )
          .join(", ");
        const rows = this.prep(
          `SELECT ${cols} FROM json_each(?) AS want CROSS JOIN chunks ON chunks.id = want.value`,
        ).all(JSON.stringify(missing)) as Row[];
        for (const r of rows) cache.set(r.id, { chunk: toChunk(r), rowid: r.rowid });
      }
      return ids.flatMap((id) => {
        const hit = cache.get(id);
        return hit ? [hit.chunk] : [];
      });
    }
    const cols = COLUMNS.split(", ")
      .map((c) => `chunks.${c} AS ${c}`)
      .join(", ");
    const rows = this.prep(
      `SELECT ${cols} FROM json_each(?) AS want CROSS JOIN chunks ON chunks.id = want.value ORDER BY want.key`,
    ).all(JSON.stringify(ids)) as Row[];
    return rows.map(toChunk);
  }

  shorts(ids: string[]): Map<string, string> {
    const out = new Map<string, string>();
    if (ids.length === 0) return out;
    const rows = this.prep(
      "SELECT chunks.id AS id, chunks.short AS short FROM json_each(?) AS want CROSS JOIN chunks ON chunks.id = want.value",
    ).all(JSON.stringify(ids)) as { id: string; short: string | null }[];
    for (const r of rows) if (r.short !== null) out.set(r.id, r.short);
    return out;
  }

  contents(ids: string[]): Map<string, string> {
    const out = new Map<string, string>();
    if (ids.length === 0) return out;
    const rows = this.prep(
      "SELECT chunks.id AS id, chunks.content AS content FROM json_each(?) AS want CROSS JOIN chunks ON chunks.id = want.value",
    ).all(JSON.stringify(ids)) as { id: string; content: string }[];
    for (const r of rows) out.set(r.id, r.content);
    return out;
  }

  list(options: ListOptions = {}): Chunk[] {
    const w = where(options);
    const order =
      options.order === "oldest"
        ? "rowid ASC"
        : options.order === "importance"
          ? "importance DESC, rowid DESC"
          : "rowid DESC";
    const rows = this.prep(
      `SELECT ${COLUMNS} FROM chunks WHERE ${w.sql} ORDER BY ${order} LIMIT ? OFFSET ?`,
    ).all(...w.params, options.limit ?? -1, options.offset ?? 0) as Row[];
    return rows.map(toChunk);
  }

  count(filter: ChunkFilter = {}): number {
    const w = where(filter);
    return (this.prep(`SELECT count(*) AS n FROM chunks WHERE ${w.sql}`).get(...w.params) as { n: number }).n;
  }

  tokens(filter: ChunkFilter = {}): number {
    const w = where(filter);
    return (
      this.prep(`SELECT coalesce(sum(tokens), 0) AS n FROM chunks WHERE ${w.sql}`).get(...w.params) as {
        n: number;
      }
    ).n;
  }

  private readonly df = new Map<string, { d: number; total: number }>();
  private total = -1;
  private totalVersion = -1;

  /** Number of chunks, cached until another connection writes (ours keep it current). */
  private totalChunks(): number {
    const version = this.db.pragma("data_version", { simple: true }) as number;
    if (this.total < 0 || version !== this.totalVersion) {
      this.total = (this.prep("SELECT count(*) AS n FROM chunks").get() as { n: number }).n;
      this.totalVersion = version;
    }
    return this.total;
  }

  /**
   * Drops query terms found in most chunks: they add almost nothing to BM25 but make FTS5
   * score every chunk that holds them. Document frequencies are cached per term and
   * refreshed when the store has grown by a tenth.
   */
  private selective(terms: string[]): { terms: string[]; postings: number } {
    const MAX_TERMS = 32;
    const MAX_POSTINGS = 4000;
    const DF_CAP = 20_000;
    const total = this.totalChunks();
    if (total < 1000 && terms.length <= MAX_TERMS) return { terms, postings: 0 };
    // Document frequencies only grow and only their order matters here, so they are cached.
    // A very long query keeps its first and last words.
    if (this.df.size > 100_000) this.df.clear();
    if (terms.length > 128) terms = [...terms.slice(0, 64), ...terms.slice(-64)];
    const scored = terms.map((t) => {
      const cached = this.df.get(t);
      // Refreshed once the store has doubled since; a term not seen yet is asked again next time.
      if (cached && cached.total * 2 > total) return { t, d: cached.d };
      const q = `"${t.replace(/"/g, '""')}"`;
      // Counted up to a cap: beyond it a term is "common", its exact count does not matter.
      const d = (
        this.prep(
          `SELECT count(*) AS n FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ${DF_CAP})`,
        ).get(q) as { n: number }
      ).n;
      if (d > 0) this.df.set(t, { d, total });
      return { t, d };
    });
    // The rarest terms carry the query; terms in most chunks add cost, not ranking.
    const present = scored.filter((x) => x.d > 0).sort((a, b) => a.d - b.d);
    // Ranking cost grows with the postings read: rarest first, within a postings budget
    // (always at least the rarest term, however common).
    const keep: string[] = [];
    let postings = 0;
    for (const x of present) {
      if (keep.length >= MAX_TERMS || (keep.length > 0 && postings + x.d > MAX_POSTINGS)) break;
      keep.push(x.t);
      postings += x.d;
    }
    return { terms: keep, postings };
  }

  searchText(query: string, filter: ChunkFilter, limit: number): Hit[] {
    const { terms, postings } = this.selective([...new Set(contentWords(query))]);
    if (terms.length === 0) return [];
    // A query of only common terms cannot rank all their chunks cheaply, nor usefully:
    // it is ranked among the most recent chunks, about as many as a selective query reads.
    let minRowid = 0;
    if (postings > 8000) {
      const maxRowid = (this.prep("SELECT coalesce(max(rowid), 0) AS m FROM chunks").get() as { m: number })
        .m;
      minRowid = Math.max(0, maxRowid - Math.ceil((this.totalChunks() * 4000) / postings));
    }
    const match = terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(" OR ");
    const w = where(filter, "c");
    // Rank inside FTS first (a materialized CTE), then filter: the planner would otherwise
    // test MATCH row by row.
    const sql = `WITH hits AS MATERIALIZED (SELECT rowid, bm25(chunks_fts) AS rank FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid > ? ORDER BY rank LIMIT ?)
      SELECT c.id AS id, hits.rank AS rank FROM hits CROSS JOIN chunks c ON c.rowid = hits.rowid WHERE ${w.sql} ORDER BY hits.rank LIMIT ?`;
    let rows: { id: string; rank: number }[] = [];
    for (let pool = limit * 4; ; pool *= 8) {
      rows = this.prep(sql).all(match, minRowid, pool, ...w.params, limit) as { id: string; rank: number }[];
      if (rows.length >= limit || pool > 200_000) break;
      const total = (
        this.prep("SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH ?").get(match) as { n: number }
      ).n;
      if (total <= pool) break;
    }
    // bm25() is lower-is-better and negative; flip it.
    return rows.map((r) => ({ id: r.id, score: -r.rank }));
  }

  private readonly indexes = new Map<string, BitIndex>();
  private dataVersion = -1;

  /** The scope's bit index, built on first use; dropped when another connection writes. */
  private bitIndex(scope: string): BitIndex {
    const version = this.db.pragma("data_version", { simple: true }) as number;
    if (version !== this.dataVersion) {
      this.indexes.clear();
      this.dataVersion = version;
    }
    let index = this.indexes.get(scope);
    if (!index) {
      index = new BitIndex(Math.ceil(this.options.dimensions / 32));
      const rows = this.prep("SELECT rowid, embedding FROM chunks_vec WHERE scope = ?").iterate(
        scope,
      ) as Iterable<{
        rowid: number;
        embedding: Buffer;
      }>;
      for (const r of rows) index.add(Number(r.rowid), r.embedding);
      this.indexes.set(scope, index);
    }
    return index;
  }

  searchVector(vector: Float32Array, scope: string, limit: number, filter: ChunkFilter = {}): Hit[] {
    // First pass: Hamming distance on sign bits; second: exact cosine on the stored floats.
    const near = this.bitIndex(scope)
      .nearest(toBits(vector), limit * 2)
      .map((rowid) => ({ rowid }));
    if (near.length === 0) return [];
    const w = where({ ...filter, scope }, "c");
    // CROSS JOIN keeps the rowid lookups first (the planner would rather scan the scope index).
    const rows = this.prep(
      `SELECT c.id AS id, c.embedding AS embedding FROM json_each(?) AS near CROSS JOIN chunks c ON c.rowid = near.value WHERE ${w.sql}`,
    ).all(JSON.stringify(near.map((n) => n.rowid)), ...w.params) as {
      id: string;
      embedding: Buffer | null;
    }[];
    const hits: Hit[] = [];
    for (const r of rows) {
      if (!r.embedding) continue;
      const v = new Float32Array(r.embedding.buffer, r.embedding.byteOffset, r.embedding.byteLength / 4);
      let d = 0;
      for (let i = 0; i < v.length; i++) d += v[i]! * vector[i]!;
      hits.push({ id: r.id, score: d });
    }
    return hits.sort((a, b) => b.score - a.score).slice(0, limit);
  }

  signBits(ids: string[]): Map<string, Uint8Array> {
    const out = new Map<string, Uint8Array>();
    if (ids.length === 0) return out;
    const cache = this.cachedMeta();
    const rows: { id: string; rowid: number; scope: string }[] = [];
    const unknown: string[] = [];
    for (const id of ids) {
      const hit = cache.get(id);
      if (hit) rows.push({ id, rowid: hit.rowid, scope: hit.chunk.scope });
      else unknown.push(id);
    }
    if (unknown.length)
      rows.push(
        ...(this.prep(
          "SELECT chunks.id AS id, chunks.rowid AS rowid, chunks.scope AS scope FROM json_each(?) AS want CROSS JOIN chunks ON chunks.id = want.value",
        ).all(JSON.stringify(unknown)) as { id: string; rowid: number; scope: string }[]),
      );
    const missing: string[] = [];
    const indexes = new Map<string, BitIndex>();
    for (const r of rows) {
      let index = indexes.get(r.scope);
      if (!index) {
        index = this.bitIndex(r.scope);
        indexes.set(r.scope, index);
      }
      const w = index.get(r.rowid);
      if (w) out.set(r.id, new Uint8Array(w.buffer, 0, Math.ceil(this.options.dimensions / 8)));
      else missing.push(r.id);
    }
    for (const [id, v] of this.embeddings(missing)) out.set(id, toBits(v));
    return out;
  }

  embeddings(ids: string[]): Map<string, Float32Array> {
    const out = new Map<string, Float32Array>();
    if (ids.length === 0) return out;
    const rows = this.prep(
      "SELECT chunks.id AS id, chunks.embedding AS embedding FROM json_each(?) AS want CROSS JOIN chunks ON chunks.id = want.value",
    ).all(JSON.stringify(ids)) as { id: string; embedding: Buffer | null }[];
    // Copied: aligned and owned.
    for (const r of rows)
      if (r.embedding) out.set(r.id, new Float32Array(Uint8Array.from(r.embedding).buffer));
    return out;
  }

  events(options: { afterSeq?: number; chunkId?: string; limit?: number } = {}): MemoryEvent[] {
    const clauses = ["seq > ?"];
    const params: unknown[] = [options.afterSeq ?? 0];
    if (options.chunkId) {
      clauses.push("chunk_id = ?");
      params.push(options.chunkId);
    }
    const rows = this.prep(
      `SELECT seq, time, kind, reason, data FROM events WHERE ${clauses.join(" AND ")} ORDER BY seq LIMIT ?`,
    ).all(...params, options.limit ?? -1) as {
      seq: number;
      time: number;
      kind: string;
      reason: string;
      data: string;
    }[];
    return rows.map((r) => ({
      seq: r.seq,
      time: r.time,
      kind: r.kind,
      reason: r.reason,
      ...JSON.parse(r.data),
    }));
  }

  lastSeq(): number {
    const last = (this.stmts.lastSeq.get() as { seq: number }).seq;
    const floor = this.stmts.floor.get() as { value: string } | undefined;
    return Math.max(last, floor ? Number(floor.value) : 0);
  }

  snapshot(): Snapshot {
    return this.db.transaction(() => ({
      version: 1 as const,
      seq: this.lastSeq(),
      chunks: (this.prep(`SELECT ${COLUMNS} FROM chunks ORDER BY rowid`).all() as Row[]).map(toChunk),
    }))();
  }

  loadSnapshot(snapshot: Snapshot, embeddings: Map<string, Float32Array>): void {
    this.db.transaction(() => {
      this.indexes.clear();
      this.metaCache.clear();
      this.total = -1;
      this.db.exec("DELETE FROM chunks; DELETE FROM chunks_vec; DELETE FROM events;");
      this.db.exec("INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')");
      for (const c of snapshot.chunks)
        this.applyOne(
          { kind: "created", chunk: c, seq: 0, time: c.createdAt, reason: "snapshot" },
          embeddings,
        );
      this.prep(
        "INSERT INTO meta (key, value) VALUES ('seq_floor', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      ).run(String(snapshot.seq));
    })();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** The size of the vectors a memory file was made with (undefined: not a memory file yet). */
export function storedDimensions(path: string): number | undefined {
  const Database = require("better-sqlite3") as typeof BetterSqlite3;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare("SELECT value FROM meta WHERE key = 'dimensions'").get() as
      | { value: string }
      | undefined;
    return row ? Number(row.value) : undefined;
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}
