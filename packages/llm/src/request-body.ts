// Serialises a chat-completions request body, reusing each message's encoded JSON from earlier
// steps. History messages never change once appended, so a long session pays JSON.stringify and
// UTF-8 encoding only for what is new; the rest is a memcpy. (The body must still be sent whole:
// the API is stateless.) Encoding parts separately also matters because one non-Latin-1
// character anywhere would otherwise make the whole joined string two-byte and slow to encode.
import type { Message } from "./types.js";

type Encode = (m: Message) => unknown;

const COMMA = Buffer.from(",");
const MESSAGES_END = Buffer.from("]");
const BODY_END = Buffer.from("}");

export class RequestBodyEncoder {
  private readonly cache = new WeakMap<Message, Buffer>();
  /**
   * One body buffer reused from request to request: bodies grow to hundreds of KB, and a fresh
   * one per step is external memory that V8 frees only at its next GC, so peak RSS would grow
   * with the session. Lent out by encode(), returned by release() once the request is done.
   */
  private pool: Buffer | undefined;
  private lent: Buffer | undefined;
  private toolsKey: unknown;
  private toolsJson: Buffer = Buffer.alloc(0);

  constructor(private readonly encodeMessage: Encode) {}

  /**
   * `fields` are the other top-level parameters (model, stream, …); the encoded `tools` are
   * cached by the identity of `tools.key` and re-encoded when another key arrives.
   */
  encode(
    fields: Record<string, unknown>,
    messages: readonly Message[],
    tools?: { key: unknown; wire: () => unknown },
  ): Buffer {
    const head = JSON.stringify(fields);
    const parts: Buffer[] = [Buffer.from(`${head.length > 2 ? `${head.slice(0, -1)},` : "{"}"messages":[`)];
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      let json = this.cache.get(m);
      if (json === undefined) {
        json = Buffer.from(JSON.stringify(this.encodeMessage(m)));
        this.cache.set(m, json);
      }
      if (i > 0) parts.push(COMMA);
      parts.push(json);
    }
    parts.push(MESSAGES_END);
    if (tools) {
      if (tools.key !== this.toolsKey) {
        this.toolsKey = tools.key;
        this.toolsJson = Buffer.from(`,"tools":${JSON.stringify(tools.wire())}`);
      }
      parts.push(this.toolsJson);
    }
    parts.push(BODY_END);
    let size = 0;
    for (const p of parts) size += p.length;
    if (this.lent) return Buffer.concat(parts, size); // another request is still using the pool
    if (!this.pool || this.pool.length < size)
      this.pool = Buffer.allocUnsafe(Math.max(size, (this.pool?.length ?? 0) * 1.5) | 0);
    let at = 0;
    for (const p of parts) at += p.copy(this.pool, at);
    this.lent = this.pool.subarray(0, size);
    return this.lent;
  }

  /**
   * The request that sent `body` has finished, its bytes fully sent. `reusable: false` (after a
   * failure, when a socket might still be reading it) drops the pooled buffer instead.
   */
  release(body: Buffer, reusable: boolean): void {
    if (body !== this.lent) return;
    if (!reusable) this.pool = undefined;
    this.lent = undefined;
  }
}
