// The storage interface. The SQLite store is the default; a Postgres + pgvector store can
// implement the same contract. A store applies events (each one a state change) atomically
// and keeps the log, so state can always be rebuilt from a snapshot plus the events after it.
import type { Chunk, ChunkFilter, MemoryEvent, MemoryEventInput, Snapshot } from "./types.js";

export interface Hit {
  id: string;
  score: number;
}

export interface ListOptions extends ChunkFilter {
  limit?: number;
  offset?: number;
  /** Newest first by default. */
  order?: "newest" | "oldest" | "importance";
  /** false: metadata only, the content left empty (cheaper; shared objects, do not change them). */
  content?: boolean;
}

/** One item of a context a model was sent: the chunk, the form it went in, and why. */
export interface ContextItem {
  id: string;
  form: "full" | "stand-in";
  why: string;
}

export interface ContextRecord {
  /** How that request was built (whole history, or a compaction point and what came after). */
  mode: string;
  tokens: number;
  items: ContextItem[];
  /** The workspace of the run that sent it (records saved before it was kept have none). */
  workspace?: string;
}

export interface MemoryStore {
  /** Applies the events in one transaction and returns them with their sequence numbers. */
  append(events: (MemoryEventInput | MemoryEvent)[], embeddings?: Map<string, Float32Array>): MemoryEvent[];
  get(id: string): Chunk | undefined;
  /** In the order of `ids`; with `content: false` the content is left empty (cheaper). */
  getMany(ids: string[], options?: { content?: boolean }): Chunk[];
  contents(ids: string[]): Map<string, string>;
  /** The short stand-ins of chunks that have one. */
  shorts(ids: string[]): Map<string, string>;
  list(options?: ListOptions): Chunk[];
  count(filter?: ChunkFilter): number;
  /** Sum of token counts of the matching chunks. */
  tokens(filter?: ChunkFilter): number;
  /** Full-text candidates, best first (higher score is better). */
  searchText(query: string, filter: ChunkFilter, limit: number): Hit[];
  /** Nearest neighbours by embedding within one scope, best first (cosine similarity). */
  searchVector(vector: Float32Array, scope: string, limit: number, filter?: ChunkFilter): Hit[];
  embeddings(ids: string[]): Map<string, Float32Array>;
  /** Sign bits of the embeddings (see toBits), cheaper than the embeddings when only similarity estimates are needed. */
  signBits(ids: string[]): Map<string, Uint8Array>;
  events(options?: { afterSeq?: number; chunkId?: string; limit?: number }): MemoryEvent[];
  lastSeq(): number;
  snapshot(): Snapshot;
  /** Replaces the whole state with the snapshot (the log is cleared up to its seq). */
  loadSnapshot(snapshot: Snapshot, embeddings: Map<string, Float32Array>): void;
  /** Keeps what a scope's last context showed (one record per scope, replaced each time). */
  saveContext(scope: string, record: ContextRecord): void;
  /** The last context recorded for `scope`, or the newest of any scope. */
  lastContext(scope?: string): (ContextRecord & { scope: string; time: number }) | undefined;
  /** Bounded housekeeping of the indexes (a few ms at most), for idle moments. */
  compact(): void;
  close(): void;
}
