// The first pass of vector search: sign bits of every embedding of one scope in one flat
// array, scanned with popcount. At 100,000 chunks a scan takes about 2 ms, several times
// faster than a bit-vector KNN inside SQLite; the SQLite file stays the source of truth.

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

export class BitIndex {
  private bits: Uint32Array;
  private rowids: Float64Array;
  private size = 0;
  private readonly slots = new Map<number, number>();

  constructor(readonly words: number) {
    this.bits = new Uint32Array(1024 * words);
    this.rowids = new Float64Array(1024);
  }

  /** Bytes to 32-bit words, zero-padded (dimensions need not be a multiple of 32). */
  private words32(bytes: Uint8Array): Uint32Array {
    const buf = new Uint8Array(this.words * 4);
    buf.set(bytes.subarray(0, buf.length));
    return new Uint32Array(buf.buffer);
  }

  get length(): number {
    return this.size;
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
    const view = this.words32(bits);
    this.bits.set(view, this.size * this.words);
    this.slots.set(rowid, this.size);
    this.rowids[this.size++] = rowid;
  }

  remove(rowid: number): void {
    const i = this.slots.get(rowid);
    if (i !== undefined) this.rowids[i] = -1;
    this.slots.delete(rowid);
  }

  /** The stored bits of one row, as 32-bit words. */
  get(rowid: number): Uint32Array | undefined {
    const i = this.slots.get(rowid);
    return i === undefined ? undefined : this.bits.slice(i * this.words, (i + 1) * this.words);
  }

  /** Row ids of the `k` entries nearest to `query` by Hamming distance (ties: any order). */
  nearest(query: Uint8Array, k: number): number[] {
    const W = this.words;
    const q = this.words32(query);
    const n = this.size;
    const dist = new Uint16Array(n);
    const counts = new Uint32Array(W * 32 + 1);
    for (let i = 0; i < n; i++) {
      let h = 0;
      const o = i * W;
      for (let j = 0; j < W; j++) h += popcount(this.bits[o + j]! ^ q[j]!);
      dist[i] = h;
      if (this.rowids[i]! >= 0) counts[h]!++;
    }
    // Counting sort: the distance threshold that admits k entries.
    let acc = 0;
    let threshold = 0;
    for (; threshold < counts.length; threshold++) {
      acc += counts[threshold]!;
      if (acc >= k) break;
    }
    const hits: number[] = [];
    for (let i = 0; i < n; i++) if (dist[i]! <= threshold && this.rowids[i]! >= 0) hits.push(i);
    hits.sort((a, b) => dist[a]! - dist[b]!);
    const out = hits.slice(0, k).map((i) => this.rowids[i]!);
    return out;
  }
}
