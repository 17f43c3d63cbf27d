// Metadata of chunks recently read (content left out), by id and by row id: retrieval reads the
// same candidates' metadata step after step, and building a Chunk from a row again costs more
// than the lookup. The store keeps it current: its own events drop the entries they change,
// another connection's writes drop everything.
import type { Chunk } from "./types.js";

export class MetaCache {
  private readonly byId = new Map<string, { chunk: Chunk; rowid: number }>();
  private readonly byRowid = new Map<number, Chunk>();

  constructor(private readonly capacity = 50_000) {}

  /** Shared, read-only objects: callers copy before changing anything. */
  get(id: string): { chunk: Chunk; rowid: number } | undefined {
    return this.byId.get(id);
  }

  atRow(rowid: number): Chunk | undefined {
    return this.byRowid.get(rowid);
  }

  /** The cached chunk for the row if there is one, else `make()` remembered. */
  remember(rowid: number, make: () => Chunk): Chunk {
    const hit = this.byRowid.get(rowid);
    if (hit) return hit;
    const chunk = make();
    this.byId.set(chunk.id, { chunk, rowid });
    this.byRowid.set(rowid, chunk);
    return chunk;
  }

  drop(id: string): void {
    const hit = this.byId.get(id);
    if (!hit) return;
    this.byId.delete(id);
    this.byRowid.delete(hit.rowid);
  }

  /** Bounded: emptied once full (entries are cheap to read again). */
  trim(): void {
    if (this.byId.size > this.capacity) this.clear();
  }

  clear(): void {
    this.byId.clear();
    this.byRowid.clear();
  }
}
