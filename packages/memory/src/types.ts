// The memory's data model: chunks with metadata, the layers they live in, and the events that
// move them. Every change of state is an event, so the log alone can rebuild the memory.

export type ChunkType =
  | "user_input"
  | "agent_response"
  | "tool_call"
  | "tool_result"
  | "system_event"
  | "thought"
  /** A reasoning model's thinking: its own unverified reasoning, never a fact. */
  | "agent_reasoning"
  | "fact"
  | "summary";

/** working: sent with the next model call; short_term: recent buffer; long_term: stored, retrievable. */
export type Layer = "working" | "short_term" | "long_term" | "archived";

/** Tool results are verified; the model's own claims are not; the user can confirm or correct. */
export type Verification = "verified" | "unverified" | "confirmed" | "corrected";

export interface Chunk {
  id: string;
  /** The session (task run) it belongs to, or "ws:<workspace>" for cross-task memory. */
  scope: string;
  type: ChunkType;
  content: string;
  createdAt: number;
  updatedAt: number;
  importance: number;
  accessCount: number;
  lastAccess?: number;
  goals: string[];
  confidence: number;
  verification: Verification;
  tokens: number;
  /** A short stand-in (key sentences or words), made when the chunk is stored; points to this chunk. */
  short?: string;
  /** Tokens of `short`. */
  shortTokens?: number;
  layer: Layer;
  /** Set on an original once compressed: the summary that now stands for it. */
  parent?: string;
  /** Set on a summary: the chunks it was made from. */
  sources: string[];
  /** Agent step (or turn number) it came from. */
  step?: number;
  /** Free-form labels (tool name, call id, dialogue id…). */
  meta: Record<string, string>;
}

export type NewChunk = Pick<Chunk, "content" | "type"> &
  Partial<Omit<Chunk, "content" | "type" | "tokens" | "createdAt" | "updatedAt" | "accessCount">>;

interface EventBase {
  seq: number;
  time: number;
  reason: string;
}

export type MemoryEvent =
  | (EventBase & { kind: "created"; chunk: Chunk })
  | (EventBase & { kind: "scored"; id: string; importance: number })
  | (EventBase & { kind: "promoted" | "demoted" | "archived"; id: string; layer: Layer })
  | (EventBase & { kind: "compressed"; id: string; summaryId: string })
  | (EventBase & { kind: "recalled" | "accessed"; id: string })
  | (EventBase & { kind: "verified"; id: string; verification: Verification; confidence: number })
  | (EventBase & { kind: "deleted"; id: string });

type WithoutSeq<E> = E extends unknown ? Omit<E, "seq"> : never;
export type MemoryEventInput = WithoutSeq<MemoryEvent>;
export type EventKind = MemoryEvent["kind"];

export interface ChunkFilter {
  scope?: string | string[];
  types?: ChunkType[];
  layers?: Layer[];
  minImportance?: number;
  goal?: string;
  /** Exclude chunks that a summary already stands for. */
  uncompressedOnly?: boolean;
  /** Inclusive range of steps. */
  steps?: [number, number];
  /** Any of these steps. */
  stepIn?: number[];
}

export interface Snapshot {
  version: 1;
  /** The last event the snapshot includes. */
  seq: number;
  chunks: Chunk[];
}
