// Memory moves on the run's event stream: the memory reports every committed event to a
// bridge; while a run is attached (Agent eventSources), each one becomes a `memory` AgentEvent
// — small (no chunk content: the trace already has the messages), so --json and the trace
// stay light.
import type { AgentEventInput, EventSource } from "@hands/agent";
import type { MemoryEvent } from "@hands/memory";

type Emit = (event: AgentEventInput) => void;

export class MemoryEventBridge {
  private emit: Emit | undefined;

  /** @param step the current agent step (the memory's own step counter). */
  constructor(private readonly step: () => number) {}

  /** Pass as the Memory's `onEvent`. */
  readonly onEvent = (e: MemoryEvent): void => {
    if (this.emit) this.emit(memoryMove(e, this.step()));
  };

  /** Pass in the Agent's `eventSources`. */
  readonly source: EventSource = (emit) => {
    this.emit = emit;
    return () => {
      if (this.emit === emit) this.emit = undefined;
    };
  };
}

export function memoryMove(e: MemoryEvent, step: number): AgentEventInput {
  const base = { type: "memory" as const, step, seq: e.seq, reason: e.reason };
  switch (e.kind) {
    case "created":
      return {
        ...base,
        action: "created",
        chunkId: e.chunk.id,
        layer: e.chunk.layer,
        chunkType: e.chunk.type,
        tokens: e.chunk.tokens,
        importance: e.chunk.importance,
      };
    case "scored":
      return { ...base, action: "scored", chunkId: e.id, importance: e.importance };
    case "promoted":
    case "demoted":
    case "archived":
      return { ...base, action: e.kind, chunkId: e.id, layer: e.layer };
    case "compressed":
      return { ...base, action: "compressed", chunkId: e.id, summaryId: e.summaryId };
    case "verified":
      return { ...base, action: "verified", chunkId: e.id, verification: e.verification };
    default:
      return { ...base, action: e.kind, chunkId: e.id };
  }
}
