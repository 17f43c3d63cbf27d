// Serialises a chat-completions request body. The history is append-only (messages never change
// once appended), so a session's bodies share a growing prefix: the messages are kept encoded in
// one reusable buffer and each request only encodes and appends what is new, then rewrites the
// short tail. Per-step cost stays proportional to the new content, not to the whole history
// (the body still has to be sent whole: the API is stateless). Encoding messages one by one also
// avoids one non-Latin-1 character making a whole joined string two-byte and slow to encode.
import type { Message } from "./types.js";

type Encode = (m: Message) => unknown;

const COMMA = 0x2c;
/** The shared buffer's first size; it then grows by half each time it fills. */
export const GROWTH_MIN = 64 * 1024;

export class RequestBodyEncoder {
  /** Encoded JSON per message, for bodies built outside the shared buffer. */
  private readonly cache = new WeakMap<Message, Buffer>();
  private buf = Buffer.alloc(0);
  /** The messages whose JSON sits in `buf` after `head`, in order, ending at byte `end`. */
  private encoded: Message[] = [];
  private head = "";
  private end = 0;
  /** The body currently lent to a request; a concurrent request builds its own copy. */
  private lent: Buffer | undefined;
  private toolsKey: unknown;
  private toolsJson: Buffer = Buffer.alloc(0);

  /** `initialBytes` (default 64 KiB): the buffer's first size; tests make it tiny to grow often. */
  constructor(
    private readonly encodeMessage: Encode,
    private readonly initialBytes = GROWTH_MIN,
  ) {}

  /**
   * `fields` are the other top-level parameters (model, stream, …); the encoded `tools` are
   * cached by the identity of `tools.key` and re-encoded when another key arrives.
   */
  encode(
    fields: Record<string, unknown>,
    messages: readonly Message[],
    tools?: { key: unknown; wire: () => unknown },
  ): Buffer {
    const fieldsJson = JSON.stringify(fields);
    const head = `${fieldsJson.length > 2 ? `${fieldsJson.slice(0, -1)},` : "{"}"messages":[`;
    if (tools && tools.key !== this.toolsKey) {
      this.toolsKey = tools.key;
      this.toolsJson = Buffer.from(`,"tools":${JSON.stringify(tools.wire())}`);
    }
    const tail = tools ? this.toolsJson : undefined;
    if (this.lent) return this.standalone(head, messages, tail);

    let from = this.sharedPrefix(head, messages);
    if (from === 0) {
      this.head = head;
      this.encoded = [];
      this.end = this.put(Buffer.from(head), 0);
    }
    for (; from < messages.length; from++) {
      const m = messages[from]!;
      if (from > 0) this.end = this.putByte(COMMA, this.end);
      this.end = this.put(this.json(m), this.end);
      this.encoded.push(m);
    }
    let at = this.putByte(0x5d /* ] */, this.end);
    if (tail) at = this.put(tail, at);
    at = this.putByte(0x7d /* } */, at);
    this.lent = this.buf.subarray(0, at);
    return this.lent;
  }

  /**
   * The request that sent `body` has finished, its bytes fully sent. `reusable: false` (after a
   * failure, when a socket might still be reading it) drops the shared buffer instead.
   */
  release(body: Buffer, reusable: boolean): void {
    if (body !== this.lent) return;
    if (!reusable) {
      this.buf = Buffer.alloc(0);
      this.encoded = [];
    }
    this.lent = undefined;
  }

  /** How many leading messages are already encoded in `buf` under the same head. */
  private sharedPrefix(head: string, messages: readonly Message[]): number {
    const n = this.encoded.length;
    if (head !== this.head || n === 0 || n > messages.length) return 0;
    for (let i = n - 1; i >= 0; i--) if (messages[i] !== this.encoded[i]) return 0;
    return n;
  }

  private json(m: Message): Buffer {
    let json = this.cache.get(m);
    if (json === undefined) {
      json = Buffer.from(JSON.stringify(this.encodeMessage(m)));
      this.cache.set(m, json);
    }
    return json;
  }

  /**
   * Makes room for `size` bytes, keeping the `live` bytes already written. `live` is the write
   * position, not `end`: a growth while the closing `]` or the tools tail is being written must
   * keep those bytes too (copying only up to `end` once sent uninitialised memory in their place).
   */
  private reserve(size: number, live: number): void {
    if (size <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(size, Math.floor(this.buf.length * 1.5), this.initialBytes));
    this.buf.copy(grown, 0, 0, live);
    this.buf = grown;
  }

  private put(bytes: Buffer, at: number): number {
    this.reserve(at + bytes.length, at);
    return at + bytes.copy(this.buf, at);
  }

  private putByte(byte: number, at: number): number {
    this.reserve(at + 1, at);
    this.buf[at] = byte;
    return at + 1;
  }

  private standalone(head: string, messages: readonly Message[], tail: Buffer | undefined): Buffer {
    const parts: Buffer[] = [Buffer.from(head)];
    messages.forEach((m, i) => {
      if (i > 0) parts.push(Buffer.from(","));
      parts.push(this.json(m));
    });
    parts.push(Buffer.from("]"));
    if (tail) parts.push(tail);
    parts.push(Buffer.from("}"));
    return Buffer.concat(parts);
  }
}
