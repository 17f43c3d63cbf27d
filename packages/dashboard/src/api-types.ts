// What the dashboard's server sends the browser (types only: both sides import them).
import type { AgentEvent, TraceLiveness, TraceProblem } from "@hands/agent";
import type { ToolCall } from "@hands/llm";
import type { MapCell, MemoryMap, MoveBin, MoveRow, SnapshotMark } from "@hands/memory";
import type { RunState } from "./timeline.js";

export interface RunSummary {
  /** The trace's file name without .jsonl (a run id, or a session id). */
  id: string;
  /** A session (several requests in one trace), a one-shot run, or a sub-agent's run (listed under its parent). */
  kind: "run" | "session" | "subagent";
  /** A sub-agent's run: the id of the run or session that started it. */
  parent?: string;
  workspace: string;
  firstRequest: string;
  model: string;
  status: RunState | "unreadable";
  /** Requests in the trace (1 for a one-shot run). */
  requests: number;
  steps: number;
  tokens: number;
  cachedTokens: number;
  costUsd: number;
  durationMs: number;
  start: number;
  updated: number;
  /** Lines that could not be read (torn, garbage, another version). */
  problems: number;
  /** Why the whole file could not be read. */
  error?: string;
}

export interface TracePayload {
  id: string;
  events: AgentEvent[];
  problems: TraceProblem[];
  /** Byte offset to follow the live trace from. */
  offset: number;
  updated: number;
  /** Whether a process is writing the trace now (its live mark and the process). */
  liveness: TraceLiveness;
}

export interface LiveBatch {
  events: AgentEvent[];
  problems: TraceProblem[];
}

/** One message a model request sent, as the run page shows it (content capped). */
export interface SentMessage {
  id: number;
  role: string;
  /** The first CONTENT_PREVIEW characters; `chars` says how long it is in full. */
  content: string;
  chars: number;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  name?: string;
  isError?: boolean;
  /** The model's reasoning sent back with the message, when there was any. */
  thinking?: string;
}

export interface SentMessagesPayload {
  messages: SentMessage[];
  /** Ids the request listed that the trace has no message line for (a damaged trace). */
  missing: number[];
}

export interface MemoryFile {
  name: string;
  bytes: number;
}

export interface MemoryMapPayload extends MemoryMap {
  file: string;
  files: MemoryFile[];
}

export interface MovesPayload {
  binMs: number;
  bins: MoveBin[];
}

export interface ContextPayload {
  scope: string;
  time: number;
  mode: string;
  tokens: number;
  items: {
    id: string;
    form: string;
    why: string;
    layer?: string;
    importance?: number;
    type?: string;
    tokens?: number;
    originals: number;
  }[];
}

export type { MoveRow };

export interface SnapshotsPayload {
  /** Newest first. */
  marks: SnapshotMark[];
  /** The steps the scope's chunks came from (with a scope; null: none carry a step). */
  steps?: { first: number; last: number } | null;
}

/** The map rebuilt from the log up to `seq` (memoryMapAt). */
export interface ReplayPayload {
  buckets: number;
  seq: number;
  /** The first move the log still holds. */
  from: number;
  cells: MapCell[];
}

export interface SandboxInfo {
  id: string;
  template: string;
  state: string;
  startedAt: string;
  endAt: string;
  cpuCount: number;
  memoryMB: number;
  metadata: Record<string, string>;
  /** The owning tenant's name and the backend (hands serve's extra fields; absent elsewhere). */
  tenant?: string;
  backend?: string;
  /** The sandbox's current figures (GET /sandboxes/{id}/metrics); null when there is no reading. */
  usage?: SandboxUsage | null;
  /** Why the figures could not be read. */
  usageError?: string;
}

export interface SandboxUsage {
  cpuUsedPct: number;
  memUsed: number;
  memTotal: number;
  diskUsed: number;
  /** Processes (hands serve's extra field). */
  pids?: number;
}

/** One entry of a sandbox's audit trail: when, what, and the event's own fields. */
export type SandboxTrailEntry = { time: string; event: string } & Record<string, unknown>;

export interface SandboxesPayload {
  /** The service the dashboard talks to (undefined: none configured). */
  service?: string;
  sandboxes: SandboxInfo[];
  /** The service's own gauges and counters from /metrics (name{labels} → value). */
  metrics: Record<string, number>;
  error?: string;
}

export interface ErrorPayload {
  error: string;
}
