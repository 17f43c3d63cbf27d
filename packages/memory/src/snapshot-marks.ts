// Snapshot marks: named points in a memory file's event log (a compaction point, the end of a
// session, a /compact), each with the chunk counts per layer the scope had then. A mark costs
// one small row, not a copy of the chunks: the map as it was at a mark (or after any step) is
// rebuilt from the log by memoryMapAt, which is what the dashboard replays.
import type { SqliteStore } from "./sqlite-store.js";
import type { Layer } from "./types.js";

export interface SnapshotMark {
  id: number;
  /** The last event of the log when the mark was made: replaying to it gives the map then. */
  seq: number;
  time: number;
  scope: string;
  /** Why: "compaction point", "session end", "/compact"… */
  reason: string;
  /** The agent's step in the conversation, when the mark was made during one. */
  step?: number;
  /** The scope's chunks in each layer at that point. */
  layers: Record<Layer, number>;
  chunks: number;
}

const TABLE = `CREATE TABLE IF NOT EXISTS snapshot_marks (
  id INTEGER PRIMARY KEY,
  seq INTEGER NOT NULL,
  time INTEGER NOT NULL,
  scope TEXT NOT NULL,
  reason TEXT NOT NULL,
  step INTEGER,
  layers TEXT NOT NULL
)`;

const EMPTY_LAYERS = (): Record<Layer, number> => ({ working: 0, short_term: 0, long_term: 0, archived: 0 });

/** A point of the log taken but not saved yet (see snapshotPoint). */
export type SnapshotPoint = Omit<SnapshotMark, "id">;

/**
 * The log's current point for `scope`, read only (the counts come from the (scope, layer) index,
 * no chunk is read, nothing is written): cheap enough for the middle of a step. Save points with
 * saveSnapshotMarks when the run is between steps.
 */
export function snapshotPoint(
  store: SqliteStore,
  mark: { scope: string; reason: string; step?: number; time?: number },
): SnapshotPoint {
  return store.db
    .transaction((): SnapshotPoint => {
      const layers = EMPTY_LAYERS();
      const rows = store.db
        .prepare("SELECT layer, count(*) AS n FROM chunks WHERE scope = ? GROUP BY layer")
        .all(mark.scope) as { layer: Layer; n: number }[];
      for (const r of rows) layers[r.layer] = r.n;
      return {
        // In the same read transaction as the counts: the two agree.
        seq: store.lastSeq(),
        time: mark.time ?? Date.now(),
        scope: mark.scope,
        reason: mark.reason,
        ...(mark.step !== undefined && Number.isInteger(mark.step) ? { step: mark.step } : {}),
        layers,
        chunks: rows.reduce((n, r) => n + r.n, 0),
      };
    })
    .deferred();
}

/** Saves points as marks, in one transaction (the table is made by the first save to a file). */
export function saveSnapshotMarks(store: SqliteStore, points: readonly SnapshotPoint[]): SnapshotMark[] {
  if (points.length === 0) return [];
  const db = store.db;
  return db
    .transaction((): SnapshotMark[] => {
      db.exec(TABLE);
      const insert = db.prepare(
        "INSERT INTO snapshot_marks (seq, time, scope, reason, step, layers) VALUES (?, ?, ?, ?, ?, ?)",
      );
      return points.map((p) => {
        const info = insert.run(p.seq, p.time, p.scope, p.reason, p.step ?? null, JSON.stringify(p.layers));
        return { id: Number(info.lastInsertRowid), ...p };
      });
    })
    .immediate();
}

/** Marks the log's current point for `scope` now (a point saved at once). */
export function markSnapshot(
  store: SqliteStore,
  mark: { scope: string; reason: string; step?: number; time?: number },
): SnapshotMark {
  return saveSnapshotMarks(store, [snapshotPoint(store, mark)])[0]!;
}

function hasTable(store: SqliteStore): boolean {
  return (
    store.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'snapshot_marks'").get() !==
    undefined
  );
}

/** The marks of one scope (or all), newest first. A file without any (older, read-only) has none. */
export function snapshotMarks(
  store: SqliteStore,
  options: { scope?: string; limit?: number } = {},
): SnapshotMark[] {
  if (!hasTable(store)) return [];
  const where = options.scope === undefined ? "" : "WHERE scope = ?";
  const rows = store.db
    .prepare(
      `SELECT id, seq, time, scope, reason, step, layers FROM snapshot_marks ${where} ORDER BY id DESC LIMIT ?`,
    )
    .all(...(options.scope === undefined ? [] : [options.scope]), Math.min(options.limit ?? 500, 5000)) as {
    id: number;
    seq: number;
    time: number;
    scope: string;
    reason: string;
    step: number | null;
    layers: string;
  }[];
  return rows.map((r) => {
    const layers = EMPTY_LAYERS();
    try {
      const parsed = JSON.parse(r.layers) as Record<string, unknown>;
      for (const l of Object.keys(layers) as Layer[])
        if (typeof parsed[l] === "number") layers[l] = parsed[l] as number;
    } catch {
      // A damaged row still says where it points; its counts read as zero.
    }
    return {
      id: r.id,
      seq: r.seq,
      time: r.time,
      scope: r.scope,
      reason: r.reason,
      ...(r.step !== null ? { step: r.step } : {}),
      layers,
      chunks: Object.values(layers).reduce((n, x) => n + x, 0),
    };
  });
}

/** The steps a scope's chunks came from (undefined: none carry a step). */
export function stepRange(store: SqliteStore, scope: string): { first: number; last: number } | undefined {
  const r = store.db
    .prepare("SELECT min(step) AS first, max(step) AS last FROM chunks WHERE scope = ? AND step IS NOT NULL")
    .get(scope) as { first: number | null; last: number | null };
  return r.first === null || r.last === null ? undefined : { first: r.first, last: r.last };
}

/**
 * The point of the log where `scope` was at `step`: just before the first chunk stored at a later
 * step was created (the end of the log if none was). A chunk carries the step memory stored it
 * at (which may be later than the message it holds: memory stores in the background).
 */
export function seqAfterStep(store: SqliteStore, scope: string, step: number): number {
  const next = store.db
    .prepare(
      `SELECT min(events.seq) AS seq FROM chunks JOIN events ON events.chunk_id = chunks.id
       WHERE chunks.scope = ? AND chunks.step > ? AND events.kind = 'created'`,
    )
    .get(scope, step) as { seq: number | null };
  return next.seq === null ? store.lastSeq() : next.seq - 1;
}
