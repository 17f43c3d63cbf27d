// The default store: one SQLite file (WAL, one transaction per batch of events), FTS5 for
// BM25 full-text search, and each embedding's sign bits beside it for the first pass of vector
// search (a Hamming scan in WebAssembly, bit-index.ts).
import { closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
// Imported, not required at first use: the bin's bundle then holds better-sqlite3's JavaScript
// (compiled from its code cache) instead of resolving and compiling its dozen files when memory
// opens (~4 ms of a second run's start-up). Its native part is loaded by path (addonOptions).
import Database from "better-sqlite3";
import { BitIndex } from "./bit-index.js";
import { where } from "./chunk-filter-sql.js";
import { toBits } from "./embeddings.js";
import { MetaCache } from "./meta-cache.js";
import type { ContextRecord, Hit, ListOptions, MemoryStore } from "./store.js";
import { TextSearch } from "./text-search.js";
import type { Chunk, ChunkFilter, MemoryEvent, MemoryEventInput, Snapshot } from "./types.js";

// Made on first use: in the bundled bin, a module-level createRequire resolves this package's
// location when the module is imported (~2 ms of start-up).
let localRequire: NodeJS.Require | undefined;
const packageRequire = (): NodeJS.Require => (localRequire ??= createRequire(import.meta.url));

/**
 * better-sqlite3's addon, given to it by path. Left to itself it finds the file with the
 * `bindings` package, which searches from the calling file's folder — in the bin's bundle, not
 * better-sqlite3's — at ~1 ms of stack walking and file checks. Where its build does not put the
 * file in build/Release, that search runs from better-sqlite3's own folder.
 */
export function betterSqliteAddon(packageJson: string): string {
  const root = dirname(packageJson);
  const file = join(root, "build", "Release", "better_sqlite3.node");
  if (existsSync(file)) return file;
  const bindings = createRequire(packageJson)("bindings") as (o: object) => string;
  return bindings({ bindings: "better_sqlite3.node", module_root: root, path: true });
}

let addon: { nativeBinding: string } | undefined;
function addonOptions(): { nativeBinding: string } {
  addon ??= {
    nativeBinding: betterSqliteAddon(
      packageFile("better-sqlite3", fileURLToPath(import.meta.url)) ??
        packageRequire().resolve("better-sqlite3/package.json"),
    ),
  };
  return addon;
}

/**
 * `name`'s package.json as node's node_modules walk from `from` finds it, or undefined (then
 * require.resolve, which also knows NODE_PATH): a stat per folder, where require.resolve's
 * machinery took ~2.5 ms at a second run's start.
 */
export function packageFile(name: string, from: string): string | undefined {
  for (let dir = dirname(from); ; ) {
    if (basename(dir) !== "node_modules") {
      const file = join(dir, "node_modules", name, "package.json");
      if (existsSync(file)) return file;
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

export interface SqliteStoreOptions {
  /** File path, or ":memory:". */
  path: string;
  dimensions: number;
  readonly?: boolean;
  /** Read through a memory map once the file is this large (default 8 MiB; see mapIfLarge). */
  mapAboveBytes?: number;
}

/** A chunk row as an array (better-sqlite3's raw mode: no object with 21 keys per row). */
type Row = [
  rowid: number,
  id: string,
  scope: string,
  type: string,
  content: string,
  createdAt: number,
  updatedAt: number,
  importance: number,
  accessCount: number,
  lastAccess: number | null,
  goals: string,
  confidence: number,
  verification: string,
  tokens: number,
  short: string | null,
  shortTokens: number | null,
  layer: string,
  parent: string | null,
  sources: string,
  step: number | null,
  meta: string,
];

/** The columns of a Row, in its order. */
const COLUMNS =
  "rowid, id, scope, type, content, created_at, updated_at, importance, access_count, last_access, goals, confidence, verification, tokens, short, short_tokens, layer, parent, sources, step, meta";
/** Everything but the content (short stand-ins are small and retrieval shows them). */
const META_COLUMNS = COLUMNS.split(", ")
  .map((c) => (c === "content" ? "'' AS content" : `chunks.${c} AS ${c}`))
  .join(", ");

/** Most chunks have no goals, sources or labels: no parse for those. */
function parseJson<T>(text: string, empty: () => T): T {
  return text === "[]" || text === "{}" ? empty() : (JSON.parse(text) as T);
}

function toChunk(r: Row): Chunk {
  const [
    ,
    id,
    scope,
    type,
    content,
    createdAt,
    updatedAt,
    importance,
    accessCount,
    lastAccess,
    goals,
    confidence,
    verification,
    tokens,
    short,
    shortTokens,
    layer,
    parent,
    sources,
    step,
    meta,
  ] = r;
  const c: Chunk = {
    id,
    scope,
    type: type as Chunk["type"],
    content,
    createdAt,
    updatedAt,
    importance,
    accessCount,
    goals: parseJson<string[]>(goals, () => []),
    confidence,
    verification: verification as Chunk["verification"],
    tokens,
    layer: layer as Chunk["layer"],
    sources: parseJson<string[]>(sources, () => []),
    meta: parseJson<Record<string, string>>(meta, () => ({})),
  };
  if (lastAccess !== null) c.lastAccess = lastAccess;
  if (short !== null) c.short = short;
  if (shortTokens !== null) c.shortTokens = shortTokens;
  if (parent !== null) c.parent = parent;
  if (step !== null) c.step = step;
  return c;
}

export class SqliteStore implements MemoryStore {
  readonly db: Database.Database;
  private readonly stmts;

  constructor(readonly options: SqliteStoreOptions) {
    if (!options.readonly && options.path !== ":memory:" && options.path !== "") {
      mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
      // Created 0600 before SQLite opens it: SQLite gives the -wal and -shm files the same mode.
      closeSync(openSync(options.path, "a", 0o600));
    }
    this.db = new Database(options.path, {
      ...addonOptions(),
      ...(options.readonly ? { readonly: true, fileMustExist: true } : {}),
    });
    if (!options.readonly) {
      this.db.pragma("journal_mode = WAL");
      // WAL + NORMAL: a commit survives a killed process; only an OS crash may lose the last ones.
      this.db.pragma("synchronous = NORMAL");
      this.migrate();
    }
    this.db.pragma("busy_timeout = 5000");
    // A file opened read-only may predate the bits column: its bit index comes from the floats.
    this.bitsColumn = !options.readonly || this.columns().includes("bits");
    this.mapIfLarge();
    const db = this.db;
    // (A read-only store never inserts; an older file's has no bits column to name.)
    const bits = this.bitsColumn ? ", bits" : "";
    this.stmts = {
      insert: db.prepare(
        `INSERT INTO chunks (id, scope, type, content, created_at, updated_at, importance, access_count, last_access, goals, confidence, verification, tokens, short, short_tokens, layer, parent, sources, step, meta, embedding${bits})
         VALUES (@id, @scope, @type, @content, @createdAt, @updatedAt, @importance, @accessCount, @lastAccess, @goals, @confidence, @verification, @tokens, @short, @shortTokens, @layer, @parent, @sources, @step, @meta, @embedding${bits ? ", @bits" : ""})`,
      ),
      fts: db.prepare("INSERT INTO chunks_fts (rowid, content) VALUES (?, ?)"),
      ftsDelete: db.prepare("INSERT INTO chunks_fts (chunks_fts, rowid, content) VALUES ('delete', ?, ?)"),
      event: db.prepare(
        "INSERT INTO events (seq, time, kind, chunk_id, reason, data) VALUES (@seq, @time, @kind, @chunkId, @reason, @data)",
      ),
      get: db.prepare(`SELECT ${COLUMNS} FROM chunks WHERE id = ?`).raw(),
      score: db.prepare("UPDATE chunks SET importance = ?, updated_at = ? WHERE id = ?"),
      layer: db.prepare("UPDATE chunks SET layer = ?, updated_at = ? WHERE id = ?"),
      parent: db.prepare("UPDATE chunks SET parent = ?, updated_at = ? WHERE id = ?"),
      access: db.prepare(
        "UPDATE chunks SET access_count = access_count + 1, last_access = ?, updated_at = ? WHERE id = ?",
      ),
      verify: db.prepare("UPDATE chunks SET verification = ?, confidence = ?, updated_at = ? WHERE id = ?"),
      delete: db.prepare("DELETE FROM chunks WHERE id = ?"),
      lastSeq: db.prepare("SELECT coalesce(max(seq), 0) AS seq FROM events"),
      dataVersion: db.prepare("PRAGMA data_version").pluck(),
      floor: db.prepare("SELECT value FROM meta WHERE key = 'seq_floor'"),
    };
  }

  private readonly cache = new Map<string, Database.Statement>();
  /** Prepared statements are reused: compiling one costs more than running it. */
  private prep(sql: string): Database.Statement {
    let st = this.cache.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.cache.set(sql, st);
    }
    return st;
  }

  /** Chunk rows (the columns of a Row, in order). */
  private rows(sql: string, ...params: unknown[]): Row[] {
    return this.prep(sql)
      .raw(true)
      .all(...params) as Row[];
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
        embedding BLOB,
        bits BLOB
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
      CREATE TABLE IF NOT EXISTS contexts (scope TEXT PRIMARY KEY, time INTEGER NOT NULL, record TEXT NOT NULL);
    `);
    // compact() merges index segments in pairs: each segment is one more b-tree that every term
    // lookup searches, and small stores grow by many one-chunk segments.
    if (this.prep("SELECT v FROM chunks_fts_config WHERE k = 'usermerge'").pluck().get() !== 2)
      this.db.exec("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('usermerge', 2)");
    // Files made before short stand-ins existed.
    const cols = this.columns();
    if (!cols.includes("short"))
      this.db.exec(
        "ALTER TABLE chunks ADD COLUMN short TEXT; ALTER TABLE chunks ADD COLUMN short_tokens INTEGER;",
      );
    const dims = this.prep("SELECT value FROM meta WHERE key = 'dimensions'").get() as
      | { value: string }
      | undefined;
    if (!dims) {
      this.prep("INSERT INTO meta (key, value) VALUES ('dimensions', ?)").run(
        String(this.options.dimensions),
      );
    } else if (Number(dims.value) !== this.options.dimensions) {
      throw new Error(
        `memory store ${this.options.path} holds ${dims.value}-dimension embeddings; the embedder makes ${this.options.dimensions}`,
      );
    }
    if (!cols.includes("bits")) this.addBits();
    // Covers the bit index's read (scope, then rowid order: the order chunks were added, which
    // breaks ties between equal distances as before) without touching the rows.
    this.db.exec("CREATE INDEX IF NOT EXISTS chunks_bits ON chunks (scope, rowid, bits)");
  }

  private columns(): string[] {
    return (this.db.pragma("table_info(chunks)") as { name: string }[]).map((c) => c.name);
  }

  /**
   * Files made before the sign bits were a column of chunks kept them in sqlite-vec's
   * `chunks_vec` table, which only the bit index read. Loading that extension took 8–16 ms of
   * a second run's start-up (CPU, load ~5), before the first request; now only such a file's
   * first open by this version loads it, to drop the table. The bits come from the floats.
   */
  private addBits(): void {
    this.db.transaction(() => {
      this.db.exec("ALTER TABLE chunks ADD COLUMN bits BLOB");
      const set = this.db.prepare("UPDATE chunks SET bits = ? WHERE rowid = ?");
      // In pages: better-sqlite3 allows no write while a read is being iterated.
      const page = this.db
        .prepare(
          "SELECT rowid, embedding FROM chunks WHERE rowid > ? AND embedding IS NOT NULL ORDER BY rowid LIMIT 512",
        )
        .raw();
      for (
        let rows = page.all(0) as [number, Buffer][];
        rows.length;
        rows = page.all(rows.at(-1)![0]) as [number, Buffer][]
      )
        for (const [rowid, embedding] of rows) set.run(Buffer.from(toBits(floats(embedding))), rowid);
      if (this.db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'chunks_vec'").get()) {
        (packageRequire()("sqlite-vec") as { load(db: unknown): void }).load(this.db);
        this.db.exec("DROP TABLE chunks_vec");
      }
    })();
  }

  append(events: (MemoryEventInput | MemoryEvent)[], embeddings?: Map<string, Float32Array>): MemoryEvent[] {
    const out: MemoryEvent[] = [];
    try {
      this.appendTx(events, embeddings, out);
    } catch (err) {
      // Rolled back: the in-process caches may hold rows that never committed.
      this.dropCaches();
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
        const deletedContent = this.applyOne(e, embeddings);
        this.stmts.event.run({
          seq,
          time: e.time,
          kind: e.kind,
          chunkId: e.kind === "created" ? e.chunk.id : e.id,
          reason: e.reason,
          data: logData(e, deletedContent),
        });
        out.push(e);
      }
    })();
  }

  /** Applies one event to the tables; for a deletion, returns the content the chunk had. */
  private applyOne(e: MemoryEvent, embeddings?: Map<string, Float32Array>): string | undefined {
    const s = this.stmts;
    if (e.kind !== "created") this.metaCache.drop(e.id);
    switch (e.kind) {
      case "created": {
        const c = e.chunk;
        const vector = embeddings?.get(c.id);
        const bits = vector ? toBits(vector) : undefined;
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
          bits: bits ? Buffer.from(bits.buffer, bits.byteOffset, bits.byteLength) : null,
        });
        const rowid = BigInt(info.lastInsertRowid);
        if (this.total >= 0) this.total++;
        s.fts.run(rowid, c.content);
        if (bits) this.indexes.get(c.scope)?.add(Number(rowid), bits);
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
        const [rowid, , scope, , content] = row;
        s.ftsDelete.run(BigInt(rowid), content);
        this.indexes.get(scope)?.remove(rowid);
        s.delete.run(e.id);
        if (this.total >= 0) this.total--;
        return content;
      }
    }
  }

  get(id: string): Chunk | undefined {
    const r = this.stmts.get.get(id) as Row | undefined;
    return r ? toChunk(r) : undefined;
  }

  private dataVersion = -1;

  /**
   * Drops the in-process caches (candidate metadata, chunk count, bit indexes) when another
   * connection has written since they were filled; our own writes keep them current.
   */
  private fresh(): void {
    const version = this.stmts.dataVersion.get() as number;
    if (version !== this.dataVersion) {
      this.dataVersion = version;
      this.dropCaches();
    } else this.metaCache.trim();
  }

  private dropCaches(): void {
    this.metaCache.clear();
    this.indexes.clear();
    this.total = -1;
  }

  private readonly metaCache = new MetaCache();

  /** Chunks for metadata rows, the cached object when there is one. */
  private remember(rows: Row[]): Chunk[] {
    return rows.map((r) => this.metaCache.remember(r[0], () => toChunk(r)));
  }

  /** Metadata of chunks by id or row id, in that order: cached, the rest read in one query. */
  private metaOf<K>(keys: K[], column: "id" | "rowid", cached: (key: K) => Chunk | undefined): Chunk[] {
    const missing = keys.filter((k) => !cached(k));
    if (missing.length)
      this.remember(
        this.rows(
          `SELECT ${META_COLUMNS} FROM json_each(?) AS want CROSS JOIN chunks ON chunks.${column} = want.value`,
          JSON.stringify(missing),
        ),
      );
    const out: Chunk[] = [];
    for (const k of keys) {
      const c = cached(k);
      if (c) out.push(c);
    }
    return out;
  }

  getMany(ids: string[], options: { content?: boolean } = {}): Chunk[] {
    if (ids.length === 0) return [];
    if (options.content === false) {
      // Shared, read-only objects: callers copy before changing anything.
      this.fresh();
      return this.metaOf(ids, "id", (id) => this.metaCache.get(id)?.chunk);
    }
    const cols = COLUMNS.split(", ")
      .map((c) => `chunks.${c} AS ${c}`)
      .join(", ");
    return this.rows(
      `SELECT ${cols} FROM json_each(?) AS want CROSS JOIN chunks ON chunks.id = want.value ORDER BY want.key`,
      JSON.stringify(ids),
    ).map(toChunk);
  }

  shorts(ids: string[]): Map<string, string> {
    const out = new Map<string, string>();
    const missing: string[] = [];
    this.fresh();
    for (const id of ids) {
      const hit = this.metaCache.get(id);
      if (!hit) missing.push(id);
      else if (hit.chunk.short !== undefined) out.set(id, hit.chunk.short);
    }
    if (missing.length === 0) return out;
    const rows = this.prep(
      "SELECT chunks.id AS id, chunks.short AS short FROM json_each(?) AS want CROSS JOIN chunks ON chunks.id = want.value",
    ).all(JSON.stringify(missing)) as { id: string; short: string | null }[];
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
    const page = [...w.params, options.limit ?? -1, options.offset ?? 0];
    if (options.content === false) {
      // Row ids first (often from an index alone), then metadata only for rows not cached.
      this.fresh();
      const rowids = this.prep(`SELECT rowid FROM chunks WHERE ${w.sql} ORDER BY ${order} LIMIT ? OFFSET ?`)
        .pluck()
        .all(...page) as number[];
      return this.metaOf(rowids, "rowid", (r) => this.metaCache.atRow(r));
    }
    return this.rows(
      `SELECT ${COLUMNS} FROM chunks WHERE ${w.sql} ORDER BY ${order} LIMIT ? OFFSET ?`,
      ...page,
    ).map(toChunk);
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

  private total = -1;

  /** Number of chunks, cached until another connection writes (ours keep it current). */
  private totalChunks(): number {
    this.fresh();
    if (this.total < 0) this.total = (this.prep("SELECT count(*) AS n FROM chunks").get() as { n: number }).n;
    return this.total;
  }

  private readonly text = new TextSearch(
    (sql) => this.prep(sql),
    () => this.totalChunks(),
  );

  searchText(query: string, filter: ChunkFilter, limit: number): Hit[] {
    return this.text.search(query, filter, limit);
  }

  private readonly indexes = new Map<string, BitIndex>();
  private readonly bitsColumn: boolean;

  /** The scope's bit index, built on first use; dropped when another connection writes. */
  private bitIndex(scope: string): BitIndex {
    this.fresh();
    let index = this.indexes.get(scope);
    if (!index) {
      index = new BitIndex(Math.ceil(this.options.dimensions / 32));
      if (this.bitsColumn) {
        const rows = this.prep(
          "SELECT rowid, bits FROM chunks WHERE scope = ? AND bits IS NOT NULL ORDER BY rowid",
        )
          .raw(true)
          .iterate(scope) as Iterable<[number, Buffer]>;
        for (const [rowid, bits] of rows) index.add(rowid, bits);
      } else {
        const rows = this.prep(
          "SELECT rowid, embedding FROM chunks WHERE scope = ? AND embedding IS NOT NULL ORDER BY rowid",
        )
          .raw(true)
          .iterate(scope) as Iterable<[number, Buffer]>;
        for (const [rowid, embedding] of rows) index.add(rowid, toBits(floats(embedding)));
      }
      this.indexes.set(scope, index);
    }
    return index;
  }

  searchVector(vector: Float32Array, scope: string, limit: number, filter: ChunkFilter = {}): Hit[] {
    // First pass: Hamming distance on sign bits; second: exact cosine on the stored floats.
    const near = this.bitIndex(scope).nearest(toBits(vector), limit * 2);
    if (near.length === 0) return [];
    const w = where({ ...filter, scope }, "c");
    // CROSS JOIN keeps the rowid lookups first (the planner would rather scan the scope index).
    const rows = this.prep(
      `SELECT c.id AS id, c.embedding AS embedding FROM json_each(?) AS near CROSS JOIN chunks c ON c.rowid = near.value WHERE ${w.sql}`,
    ).all(JSON.stringify(near), ...w.params) as {
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
    this.fresh();
    const rows: { id: string; rowid: number; scope: string }[] = [];
    const unknown: string[] = [];
    for (const id of ids) {
      const hit = this.metaCache.get(id);
      if (hit) rows.push({ id, rowid: hit.rowid, scope: hit.chunk.scope });
      else unknown.push(id);
    }
    if (unknown.length)
      rows.push(
        ...(this.prep(
          "SELECT chunks.id AS id, chunks.rowid AS rowid, chunks.scope AS scope FROM json_each(?) AS want CROSS JOIN chunks ON chunks.id = want.value",
        ).all(JSON.stringify(unknown)) as { id: string; rowid: number; scope: string }[]),
      );
    const bytes = Math.ceil(this.options.dimensions / 8);
    const missing: string[] = [];
    const indexes = new Map<string, BitIndex>();
    for (const r of rows) {
      let index = indexes.get(r.scope);
      if (!index) {
        index = this.bitIndex(r.scope);
        indexes.set(r.scope, index);
      }
      const w = index.get(r.rowid);
      if (w) out.set(r.id, new Uint8Array(w.buffer, w.byteOffset, bytes));
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
    for (const r of rows) if (r.embedding) out.set(r.id, floats(r.embedding));
    return out;
  }

  events(options: { afterSeq?: number; chunkId?: string; limit?: number } = {}): MemoryEvent[] {
    const clauses = ["e.seq > ?"];
    const params: unknown[] = [options.afterSeq ?? 0];
    if (options.chunkId) {
      clauses.push("e.chunk_id = ?");
      params.push(options.chunkId);
    }
    // A "created" entry holds the chunk without its content (see logData): the content is the
    // chunk's row (content never changes), or, once the chunk is deleted, its "deleted" entry.
    const rows = this.prep(
      `SELECT e.seq AS seq, e.time AS time, e.kind AS kind, e.reason AS reason, e.data AS data, c.content AS content
       FROM events e LEFT JOIN chunks c ON e.kind = 'created' AND c.id = e.chunk_id
       WHERE ${clauses.join(" AND ")} ORDER BY e.seq LIMIT ?`,
    ).all(...params, options.limit ?? -1) as {
      seq: number;
      time: number;
      kind: string;
      reason: string;
      data: string;
      content: string | null;
    }[];
    return rows.map((r) => {
      const e = { seq: r.seq, time: r.time, kind: r.kind, reason: r.reason, ...JSON.parse(r.data) };
      if (e.kind === "created" && e.chunk.content === undefined)
        e.chunk.content = r.content ?? this.deletedContent(e.chunk.id);
      else if (e.kind === "deleted") delete e.content;
      return e as MemoryEvent;
    });
  }

  /** The content a deleted chunk had, from its "deleted" entry ("" if the log lacks it). */
  private deletedContent(id: string): string {
    const data = this.prep("SELECT data FROM events WHERE chunk_id = ? AND kind = 'deleted' LIMIT 1")
      .pluck()
      .get(id) as string | undefined;
    const content = data === undefined ? undefined : (JSON.parse(data) as { content?: unknown }).content;
    return typeof content === "string" ? content : "";
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
      chunks: this.rows(`SELECT ${COLUMNS} FROM chunks ORDER BY rowid`).map(toChunk),
    }))();
  }

  loadSnapshot(snapshot: Snapshot, embeddings: Map<string, Float32Array>): void {
    this.db.transaction(() => {
      this.dropCaches();
      this.db.exec("DELETE FROM chunks; DELETE FROM events;");
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

  /**
   * FTS5 adds one index segment per write and merges them only now and then (after 64 pages
   * written, or 16 segments on a level): a store growing by a step at a time keeps a dozen or
   * more, and every term lookup searches each. This merges some (at most 64 pages' work).
   */
  saveContext(scope: string, record: ContextRecord): void {
    this.prep("INSERT OR REPLACE INTO contexts (scope, time, record) VALUES (?, ?, ?)").run(
      scope,
      Date.now(),
      JSON.stringify(record),
    );
  }

  /**
   * The context last saved for `scope`, else the newest one — of `workspace` when given (one
   * memory file serves every workspace: another's context is not this one's last).
   */
  lastContext(
    scope?: string,
    options: { workspace?: string } = {},
  ): (ContextRecord & { scope: string; time: number }) | undefined {
    const row = (
      scope !== undefined
        ? this.prep("SELECT scope, time, record FROM contexts WHERE scope = ?").get(scope)
        : options.workspace !== undefined
          ? this.prep(
              "SELECT scope, time, record FROM contexts WHERE json_extract(record, '$.workspace') = ? ORDER BY time DESC LIMIT 1",
            ).get(options.workspace)
          : this.prep("SELECT scope, time, record FROM contexts ORDER BY time DESC LIMIT 1").get()
    ) as { scope: string; time: number; record: string } | undefined;
    return row
      ? { ...(JSON.parse(row.record) as ContextRecord), scope: row.scope, time: row.time }
      : undefined;
  }

  compact(): void {
    if (!this.options.readonly)
      this.db.exec("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('merge', 64)");
    this.mapIfLarge();
  }

  private mapped = false;

  /**
   * Reads through a memory map once the file outgrows SQLite's page cache: then there is no
   * read() call and no copy per page, which retrieval's scattered row lookups over a large
   * store would otherwise pay. A small file is held by the page cache anyway, and every
   * mapped page it touched would count as the process's resident memory (~4 MB in a
   * 200-step session, whose file stays under 3 MB) for no gain.
   */
  private mapIfLarge(): void {
    if (this.mapped) return;
    const pages = this.db.pragma("page_count", { simple: true }) as number;
    const pageSize = this.db.pragma("page_size", { simple: true }) as number;
    if (pages * pageSize < (this.options.mapAboveBytes ?? MAP_ABOVE_BYTES)) return;
    this.db.pragma("mmap_size = 1073741824");
    this.mapped = true;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * An event as the log keeps it: without seq, time, kind and reason (columns of their own); a
 * "created" entry without the chunk's content, which its row already holds — the log is not a
 * second copy of every tool output — and a "deleted" entry with it, so the log still tells the
 * whole story once the row is gone.
 */
function logData(e: MemoryEvent, deletedContent: string | undefined): string {
  const { seq: _s, time: _t, kind: _k, reason: _r, ...data } = e;
  if (e.kind === "created") {
    const { content: _c, ...chunk } = e.chunk;
    return JSON.stringify({ ...data, chunk });
  }
  return JSON.stringify(deletedContent === undefined ? data : { ...data, content: deletedContent });
}

/** A stored embedding's floats (copied: a blob's bytes need not be 4-byte aligned). */
function floats(blob: Buffer): Float32Array {
  return new Float32Array(Uint8Array.from(blob).buffer);
}

/** Files larger than this are read through a memory map (see mapIfLarge). */
const MAP_ABOVE_BYTES = 8 * 1024 * 1024;

/** The size of the vectors a memory file was made with (undefined: not a memory file yet). */
export function storedDimensions(path: string): number | undefined {
  const db = new Database(path, { ...addonOptions(), readonly: true, fileMustExist: true });
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
