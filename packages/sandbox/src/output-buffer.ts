// A byte buffer for one output stream that keeps only the head and the tail of what it is
// given. Memory stays flat no matter how much a command prints: the first half of the budget
// is filled once, the second half is a ring that always holds the most recent bytes.
import { StringDecoder } from "node:string_decoder";

/** Default bytes kept per stream (head + tail). */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

export class OutputBuffer {
  readonly maxBytes: number;
  private readonly headCap: number;
  private readonly tailCap: number;
  private head: Buffer;
  private headLen = 0;
  private tail: Buffer;
  /** Next write position in the tail ring. */
  private tailPos = 0;
  private tailLen = 0;
  private total = 0;

  constructor(maxBytes: number = DEFAULT_MAX_OUTPUT_BYTES) {
    if (!Number.isFinite(maxBytes) || maxBytes < 0) throw new RangeError(`invalid maxBytes: ${maxBytes}`);
    this.maxBytes = Math.floor(maxBytes);
    this.headCap = Math.ceil(this.maxBytes / 2);
    this.tailCap = this.maxBytes - this.headCap;
    // Allocated lazily and grown as needed so small outputs cost little memory.
    this.head = Buffer.alloc(0);
    this.tail = Buffer.alloc(0);
  }

  /** Total bytes ever pushed. */
  get totalBytes(): number {
    return this.total;
  }

  /** Bytes dropped from the middle. */
  get droppedBytes(): number {
    return this.total - this.headLen - this.tailLen;
  }

  get truncated(): boolean {
    return this.droppedBytes > 0;
  }

  push(chunk: Uint8Array): void {
    const data = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.total += data.length;
    let offset = 0;
    if (this.headLen < this.headCap) {
      const n = Math.min(this.headCap - this.headLen, data.length);
      this.head = ensureCapacity(this.head, this.headLen + n, this.headCap, this.headLen);
      data.copy(this.head, this.headLen, 0, n);
      this.headLen += n;
      offset = n;
    }
    if (offset >= data.length || this.tailCap === 0) return;
    const rest = data.subarray(offset);
    if (rest.length >= this.tailCap) {
      // The chunk alone fills the ring: keep its last tailCap bytes.
      if (this.tail.length < this.tailCap) this.tail = Buffer.alloc(this.tailCap);
      rest.copy(this.tail, 0, rest.length - this.tailCap);
      this.tailPos = 0;
      this.tailLen = this.tailCap;
      return;
    }
    if (this.tail.length < this.tailCap) {
      // Still growing linearly (never wrapped yet): tailPos === tailLen.
      const needed = this.tailLen + rest.length;
      if (needed <= this.tailCap) {
        this.tail = ensureCapacity(this.tail, needed, this.tailCap, this.tailLen);
        rest.copy(this.tail, this.tailLen);
        this.tailLen = needed;
        this.tailPos = needed % this.tailCap;
        return;
      }
      this.tail = ensureCapacity(this.tail, this.tailCap, this.tailCap, this.tailLen);
    }
    // Ring write with wrap-around.
    const first = Math.min(rest.length, this.tailCap - this.tailPos);
    rest.copy(this.tail, this.tailPos, 0, first);
    if (first < rest.length) rest.copy(this.tail, 0, first);
    this.tailPos = (this.tailPos + rest.length) % this.tailCap;
    this.tailLen = Math.min(this.tailCap, this.tailLen + rest.length);
  }

  /** The kept tail bytes in order. */
  private tailBytes(): Buffer {
    if (this.tailLen < this.tailCap || this.tailPos === 0) return this.tail.subarray(0, this.tailLen);
    return Buffer.concat([
      this.tail.subarray(this.tailPos, this.tailCap),
      this.tail.subarray(0, this.tailPos),
    ]);
  }

  /**
   * Decodes the kept bytes as UTF-8. When bytes were dropped, a marker line stands in for the
   * middle; the cut never splits a multi-byte character (partial characters at the cut are
   * dropped rather than turned into replacement characters).
   */
  toString(): string {
    const head = this.head.subarray(0, this.headLen);
    const tail = this.tailBytes();
    if (!this.truncated) {
      const decoder = new StringDecoder("utf8");
      return decoder.write(head) + decoder.write(tail) + decoder.end();
    }
    // StringDecoder.write returns only complete characters and holds back a partial one.
    const headText = new StringDecoder("utf8").write(head);
    let start = 0;
    while (start < tail.length && start < 3 && ((tail[start] ?? 0) & 0xc0) === 0x80) start++;
    const tailText = tail.subarray(start).toString("utf8");
    return `${headText}\n[… ${this.droppedBytes} bytes of output truncated …]\n${tailText}`;
  }
}

function ensureCapacity(buf: Buffer, needed: number, cap: number, used: number): Buffer {
  if (buf.length >= needed) return buf;
  const size = Math.min(cap, Math.max(needed, buf.length * 2, 4096));
  const next = Buffer.alloc(size);
  buf.copy(next, 0, 0, used);
  return next;
}
