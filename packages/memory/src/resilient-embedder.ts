// An embedder that never loses a chunk: when the endpoint fails (down, slow, malformed), the
// texts get empty (zero) vectors — stored and found by full text and metadata, just not by
// similarity — and the endpoint is left alone for a while before it is tried again. The
// warning is given once per outage, not once per chunk.
import type { Embedder } from "./embeddings.js";

export interface ResilientEmbedderOptions {
  /** Told once each time the endpoint starts failing. */
  onError?: (error: Error) => void;
  /** How long a failed endpoint is skipped. */
  retryAfterMs?: number;
  /** Longest wait for one request. */
  timeoutMs?: number;
  clock?: () => number;
}

export class ResilientEmbedder implements Embedder {
  readonly name: string;
  readonly dimensions: number;
  private downUntil = 0;
  private down = false;
  /** Texts that got an empty vector (for reports and tests). */
  fallbacks = 0;

  constructor(
    private readonly primary: Embedder,
    private readonly options: ResilientEmbedderOptions = {},
  ) {
    this.name = primary.name;
    this.dimensions = primary.dimensions;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const now = (this.options.clock ?? Date.now)();
    if (!this.down || now >= this.downUntil) {
      const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 15_000);
      try {
        const vectors = await this.primary.embed(
          texts,
          signal ? AbortSignal.any([signal, timeout]) : timeout,
        );
        this.down = false;
        return vectors;
      } catch (err) {
        if (signal?.aborted) throw err;
        if (!this.down) this.options.onError?.(err instanceof Error ? err : new Error(String(err)));
        this.down = true;
        this.downUntil = now + (this.options.retryAfterMs ?? 60_000);
      }
    }
    this.fallbacks += texts.length;
    return texts.map(() => new Float32Array(this.dimensions));
  }
}
