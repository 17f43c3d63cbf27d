// Read-side views of a memory file for people (the dashboard's memory map): chunks counted by
// layer and importance bucket, one bucket's chunks, and the log of moves over time. Every view
// is an aggregate or a page computed in SQL, so a file of 100,000 chunks costs one indexed scan,
// never one object per chunk.
import type { SqliteStore } from "./sqlite-store.js";
import type { Chunk, EventKind, Layer } from "./types.js";

export const LAYERS: readonly Layer[] = ["working", "short_term", "long_term", "archived"];

export interface MapCell {
  layer: Layer;
  /** 0 … buckets-1: importance in [bucket/buckets, (bucket+1)/buckets) (1.0 in the last). */
  bucket: number;
  chunks: number;
  tokens: number;
  accesses: number;
  /** Chunks with a short stand-in. */
  standIns: number;
  /** Summaries (chunks made from others) and originals a summary stands for. */
  summaries: number;
  compressed: number;
}

export interface MemoryMap {
  buckets: number;
  cells: MapCell[];
  /** Every scope in the file with its chunk count, largest first. */
  scopes: { scope: string; chunks: number }[];
  chunks: number;
  tokens: number;
  events: number;
  lastSeq: number;
}

const bucketSql = (buckets: number) =>
  `min(${buckets - 1}, max(0, cast(importance * ${buckets} as integer)))`;

function scopeClause(scope: string | undefined): { sql: string; params: unknown[] } {
  return scope === undefined ? { sql: "", params: [] } : { sql: "WHERE scope = ?", params: [scope] };
}

function checkBuckets(buckets: number): number {
  if (!Number.isInteger(buckets) || buckets < 1 || buckets > 100)
    throw new RangeError("buckets must be 1..100");
  return buckets;
}

/** Chunks by layer × importance bucket, of one scope or of all. */
export function memoryMap(store: SqliteStore, options: { scope?: string; buckets?: number } = {}): MemoryMap {
  const buckets = checkBuckets(options.buckets ?? 10);
  const where = scopeClause(options.scope);
  const rows = store.db
    .prepare(
      `SELECT layer, ${bucketSql(buckets)} AS bucket, count(*) AS chunks, coalesce(sum(tokens), 0) AS tokens,
        coalesce(sum(access_count), 0) AS accesses, count(short) AS standIns,
        sum(sources != '[]') AS summaries, count(parent) AS compressed
       FROM chunks ${where.sql} GROUP BY layer, bucket ORDER BY layer, bucket`,
    )
    .all(...where.params) as MapCell[];
  const scopes = store.db
    .prepare("SELECT scope, count(*) AS chunks FROM chunks GROUP BY scope ORDER BY chunks DESC, scope")
    .all() as { scope: string; chunks: number }[];
  const events = (store.db.prepare("SELECT count(*) AS n FROM events").get() as { n: number }).n;
  return {
    buckets,
    cells: rows,
    scopes,
    chunks: rows.reduce((n, c) => n + c.chunks, 0),
    tokens: rows.reduce((n, c) => n + c.tokens, 0),
    events,
    lastSeq: store.lastSeq(),
  };
}

export interface CellQuery {
  scope?: string;
  layer: Layer;
  bucket: number;
  buckets?: number;
  limit?: number;
  offset?: number;
}

/** One cell's chunks (metadata, the stand-in, the first characters), most important first. */
export function memoryCell(
  store: SqliteStore,
  q: CellQuery,
): { total: number; chunks: (Omit<Chunk, "content"> & { preview: string })[] } {
  const buckets = checkBuckets(q.buckets ?? 10);
  const clauses = ["layer = ?", `${bucketSql(buckets)} = ?`];
  const params: unknown[] = [q.layer, q.bucket];
  if (q.scope !== undefined) {
    clauses.push("scope = ?");
    params.push(q.scope);
  }
  const where = clauses.join(" AND ");
  const total = (
    store.db.prepare(`SELECT count(*) AS n FROM chunks WHERE ${where}`).get(...params) as { n: number }
  ).n;
  const ids = store.db
    .prepare(`SELECT id FROM chunks WHERE ${where} ORDER BY importance DESC, rowid DESC LIMIT ? OFFSET ?`)
    .pluck()
    .all(...params, Math.min(q.limit ?? 200, 1000), q.offset ?? 0) as string[];
  const previews = store.db
    .prepare(
      `SELECT id, substr(content, 1, 240) AS preview FROM chunks WHERE id IN (${ids.map(() => "?").join(",")})`,
    )
    .all(...ids) as { id: string; preview: string }[];
  const preview = new Map(previews.map((p) => [p.id, p.preview]));
  const chunks = store.getMany(ids, { content: false }).map((c) => {
    const { content: _content, ...meta } = c;
    return { ...meta, preview: preview.get(c.id) ?? "" };
  });
  return { total, chunks };
}

export interface MoveBin {
  /** Start of the bin, ms since the epoch. */
  time: number;
  kind: EventKind;
  count: number;
}

/** The log of moves binned over time (about `bins` bins from the first event to the last). */
export function memoryMoves(
  store: SqliteStore,
  options: { scope?: string; bins?: number } = {},
): { binMs: number; bins: MoveBin[] } {
  // The log's ends by its primary key (seq): two lookups, not a scan of every event.
  const span = store.db
    .prepare(
      "SELECT (SELECT time FROM events ORDER BY seq LIMIT 1) AS lo, (SELECT time FROM events ORDER BY seq DESC LIMIT 1) AS hi",
    )
    .get() as { lo: number | null; hi: number | null };
  if (span.lo !== null && span.hi !== null && span.hi < span.lo) [span.lo, span.hi] = [span.hi, span.lo];
  if (span.lo === null || span.hi === null) return { binMs: 0, bins: [] };
  const binMs = Math.max(1, Math.ceil((span.hi - span.lo + 1) / (options.bins ?? 60)));
  // A chunk deleted since has no row: its moves count under every scope filter only when unfiltered.
  const join =
    options.scope === undefined ? "" : "JOIN chunks ON chunks.id = events.chunk_id WHERE chunks.scope = ?";
  const bins = store.db
    .prepare(
      `SELECT cast((events.time - ?) / ? AS integer) * ? + ? AS time, kind, count(*) AS count FROM events ${join}
       GROUP BY 1, kind ORDER BY 1, kind`,
    )
    .all(
      span.lo,
      binMs,
      binMs,
      span.lo,
      ...(options.scope === undefined ? [] : [options.scope]),
    ) as MoveBin[];
  return { binMs, bins };
}

export interface MoveRow {
  seq: number;
  time: number;
  kind: EventKind;
  chunkId: string;
  reason: string;
}

/** The newest moves first (paged by seq), without the chunk bodies that `created` events carry. */
export function memoryMoveLog(
  store: SqliteStore,
  options: { beforeSeq?: number; limit?: number; chunkId?: string } = {},
): MoveRow[] {
  const clauses = ["seq < ?"];
  const params: unknown[] = [options.beforeSeq ?? Number.MAX_SAFE_INTEGER];
  if (options.chunkId) {
    clauses.push("chunk_id = ?");
    params.push(options.chunkId);
  }
  return store.db
    .prepare(
      `SELECT seq, time, kind, chunk_id AS chunkId, reason FROM events WHERE ${clauses.join(" AND ")}
       ORDER BY seq DESC LIMIT ?`,
    )
    .all(...params, Math.min(options.limit ?? 200, 2000)) as MoveRow[];
}

/**
 * The map as it was after event `seq`, rebuilt by replaying the log from its start (the state a
 * snapshot plus its later events gives, as Memory.restore does). `from` is the first seq the log
 * still holds: a log cut by a snapshot load cannot show moves from before it.
 */
export function memoryMapAt(
  store: SqliteStore,
  seq: number,
  options: { scope?: string; buckets?: number } = {},
): { buckets: number; seq: number; from: number; cells: MapCell[] } {
  const buckets = checkBuckets(options.buckets ?? 10);
  type State = { scope: string; layer: Layer; importance: number; tokens: number; compressed: boolean };
  const state = new Map<string, State>();
  const rows = store.db
    .prepare(
      `SELECT kind, chunk_id, json_extract(data, '$.chunk.scope'), json_extract(data, '$.chunk.layer'),
        json_extract(data, '$.chunk.importance'), json_extract(data, '$.chunk.tokens'),
        json_extract(data, '$.importance'), json_extract(data, '$.layer'), seq
       FROM events WHERE seq <= ? ORDER BY seq`,
    )
    .raw(true)
    .iterate(seq) as IterableIterator<
    [
      string,
      string,
      string | null,
      Layer | null,
      number | null,
      number | null,
      number | null,
      Layer | null,
      number,
    ]
  >;
  let from = 0;
  for (const [kind, id, scope, layer, importance, tokens, newImportance, newLayer, s] of rows) {
    if (!from) from = s;
    const c = state.get(id);
    if (kind === "created" && scope !== null && layer !== null)
      state.set(id, { scope, layer, importance: importance ?? 0, tokens: tokens ?? 0, compressed: false });
    else if (!c) continue;
    else if (kind === "scored" && newImportance !== null) c.importance = newImportance;
    else if ((kind === "promoted" || kind === "demoted" || kind === "archived") && newLayer !== null)
      c.layer = newLayer;
    else if (kind === "compressed") c.compressed = true;
    else if (kind === "deleted") state.delete(id);
  }
  const cells = new Map<string, MapCell>();
  for (const c of state.values()) {
    if (options.scope !== undefined && c.scope !== options.scope) continue;
    const bucket = Math.min(buckets - 1, Math.max(0, Math.floor(c.importance * buckets)));
    const key = `${c.layer}/${bucket}`;
    let cell = cells.get(key);
    if (!cell) {
      cell = {
        layer: c.layer,
        bucket,
        chunks: 0,
        tokens: 0,
        accesses: 0,
        standIns: 0,
        summaries: 0,
        compressed: 0,
      };
      cells.set(key, cell);
    }
    cell.chunks++;
    cell.tokens += c.tokens;
    if (c.compressed) cell.compressed++;
  }
  return { buckets, seq, from, cells: [...cells.values()] };
}

/** What the last assembled context of `scope` (or the newest) held, with its chunks' metadata by id. */
export function lastContextChunks(
  store: SqliteStore,
  scope?: string,
  workspace?: string,
): { context: NonNullable<ReturnType<SqliteStore["lastContext"]>>; chunks: Map<string, Chunk> } | undefined {
  const context = store.lastContext(scope, workspace !== undefined ? { workspace } : {});
  if (!context) return undefined;
  const ids = context.items.map((i) => i.id);
  const chunks = new Map(store.getMany(ids, { content: false }).map((c) => [c.id, c]));
  return { context, chunks };
}
