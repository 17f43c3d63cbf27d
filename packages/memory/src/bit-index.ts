// The first pass of vector search: sign bits of every embedding of one scope in one flat
// array, scanned with popcount. At 100,000 chunks (256 bits each) a scan takes about 1 ms,
// many times faster than a bit-vector KNN inside SQLite; the SQLite file stays the source of
// truth.

/** Per-byte popcounts of a 32-bit word (each byte 0..8), to be summed before one multiply. */
function bytePopcounts(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (x + (x >>> 4)) & 0x0f0f0f0f;
}

/** Adds the four byte counts of `x` (each byte must hold at most 63). */
function sumBytes(x: number): number {
  return Math.imul(x, 0x01010101) >>> 24;
}

export class BitIndex {
  /** Words per entry, rounded up to a multiple of 8 so the scan works in blocks of 8. */
  private readonly stride: number;
  private bits: Uint32Array;
  private rowids: Float64Array;
  private size = 0;
  private readonly slots = new Map<number, number>();
  /** Slots of removed rows (rare): skipped when choosing the nearest. */
  private readonly dead = new Set<number>();
  /** Scratch for the scan, reused between calls (grown with the index). */
  private dist = new Uint16Array(0);

  constructor(readonly words: number) {
    this.stride = Math.ceil(words / 8) * 8;
    this.bits = new Uint32Array(1024 * this.stride);
    this.rowids = new Float64Array(1024);
  }

  /** Bytes to 32-bit words, zero-padded to the stride (dimensions need not be a multiple of 32). */
  private toWords(bytes: Uint8Array): Uint32Array {
    const buf = new Uint8Array(this.stride * 4);
    buf.set(bytes.subarray(0, this.words * 4));
    return new Uint32Array(buf.buffer);
  }

  get length(): number {
    return this.size - this.dead.size;
  }

  add(rowid: number, bits: Uint8Array): void {
    if (this.size === this.rowids.length) {
      const b = new Uint32Array(this.bits.length * 2);
      b.set(this.bits);
      this.bits = b;
      const r = new Float64Array(this.rowids.length * 2);
      r.set(this.rowids);
      this.rowids = r;
    }
    const old = this.slots.get(rowid);
    if (old !== undefined) this.dead.add(old);
    this.bits.set(this.toWords(bits), this.size * this.stride);
    this.slots.set(rowid, this.size);
    this.rowids[this.size++] = rowid;
  }

  remove(rowid: number): void {
    const i = this.slots.get(rowid);
    if (i === undefined) return;
    this.dead.add(i);
    this.slots.delete(rowid);
  }

  /** The stored bits of one row, as 32-bit words (a view: do not change it). */
  get(rowid: number): Uint32Array | undefined {
    const i = this.slots.get(rowid);
    return i === undefined ? undefined : this.bits.subarray(i * this.stride, i * this.stride + this.words);
  }

  /** Row ids of the `k` entries nearest to `query` by Hamming distance, nearest first. */
  nearest(query: Uint8Array, k: number): number[] {
    const n = this.size;
    if (n === 0 || k <= 0) return [];
    const S = this.stride;
    const q = this.toWords(query);
    const bits = this.bits;
    if (this.dist.length < n) this.dist = new Uint16Array(this.rowids.length);
    const dist = this.dist;
    const counts = new Uint32Array(S * 32 + 1);
    // Blocks of 8 words: two sums of four byte-count words, each byte at most 32, so one
    // multiply per four words adds them up.
    for (let i = 0, o = 0; i < n; i++, o += S) {
      let h = 0;
      for (let j = 0; j < S; j += 8) {
        const a =
          bytePopcounts(bits[o + j]! ^ q[j]!) +
          bytePopcounts(bits[o + j + 1]! ^ q[j + 1]!) +
          bytePopcounts(bits[o + j + 2]! ^ q[j + 2]!) +
          bytePopcounts(bits[o + j + 3]! ^ q[j + 3]!);
        const b =
          bytePopcounts(bits[o + j + 4]! ^ q[j + 4]!) +
          bytePopcounts(bits[o + j + 5]! ^ q[j + 5]!) +
          bytePopcounts(bits[o + j + 6]! ^ q[j + 6]!) +
          bytePopcounts(bits[o + j + 7]! ^ q[j + 7]!);
        h += sumBytes(a) + sumBytes(b);
      }
      dist[i] = h;
      counts[h]!++;
    }
    for (const i of this.dead) counts[dist[i]!]!--;
    // Counting sort: the smallest distance that admits k entries, then the entries by distance.
    let threshold = 0;
    for (let acc = 0; threshold < counts.length; threshold++) {
      acc += counts[threshold]!;
      if (acc >= k) break;
    }
    const start = new Uint32Array(threshold + 2);
    for (let d = 0; d <= threshold; d++) start[d + 1] = start[d]! + counts[d]!;
    const total = start[threshold + 1]!;
    const sorted = new Float64Array(total);
    for (let i = 0; i < n; i++) {
      const d = dist[i]!;
      if (d <= threshold && !(this.dead.size && this.dead.has(i))) sorted[start[d]!++] = this.rowids[i]!;
    }
    return Array.from(sorted.subarray(0, Math.min(k, total)));
  }
}
