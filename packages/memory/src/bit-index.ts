// The first pass of vector search: sign bits of every embedding of one scope in one flat
// array, scanned for Hamming distances (in WebAssembly, see hamming-wasm.ts). At 100,000
// chunks of 256 bits a scan takes about 0.3 ms, many times faster than a bit-vector KNN inside
// SQLite; the SQLite file stays the source of truth.
import { type HammingFunctions, hammingFunctions } from "./hamming-wasm.js";

const PAGE = 65536;

export class BitIndex {
  /** 32-bit words per entry, rounded up to whole 64-bit words for the scan. */
  private readonly stride: number;
  private readonly memory = new WebAssembly.Memory({ initial: 1 });
  private readonly wasm: HammingFunctions;
  /**
   * Memory layout: `capacity` entries from address 0, then the query, the distances (u16 per
   * entry), a histogram of them (u32 per possible distance), and the entries picked (u32 each).
   */
  private capacity = 0;
  private bits = new Uint32Array(0);
  private rowids = new Float64Array(0);
  private size = 0;
  private readonly slots = new Map<number, number>();
  /** Slots of removed rows (rare): skipped when choosing the nearest. */
  private readonly dead = new Set<number>();

  constructor(readonly words: number) {
    this.stride = Math.ceil(words / 2) * 2;
    this.wasm = hammingFunctions(this.memory);
    this.reserve(1024);
  }

  private get queryAt(): number {
    return this.capacity * this.stride * 4;
  }

  private get distAt(): number {
    return this.queryAt + this.stride * 4;
  }

  /** Distances run from 0 to every bit differing. */
  private get bins(): number {
    return this.stride * 32 + 1;
  }

  private get countsAt(): number {
    return this.distAt + this.capacity * 2;
  }

  private get pickedAt(): number {
    return this.countsAt + this.bins * 4;
  }

  /** Grows the memory for `capacity` entries; the entries stay where they are. */
  private reserve(capacity: number): void {
    const bytes = capacity * this.stride * 4 + this.stride * 4 + capacity * 2 + this.bins * 4 + capacity * 4;
    const have = this.memory.buffer.byteLength;
    if (bytes > have) this.memory.grow(Math.ceil((bytes - have) / PAGE));
    this.capacity = capacity;
    this.bits = new Uint32Array(this.memory.buffer, 0, capacity * this.stride);
    const rowids = new Float64Array(capacity);
    rowids.set(this.rowids.subarray(0, this.size));
    this.rowids = rowids;
  }

  get length(): number {
    return this.size - this.dead.size;
  }

  /** Writes bytes as words at `word`, zero-padded to the stride (the padding never differs). */
  private write(word: number, bytes: Uint8Array): void {
    const words = new Uint32Array(this.stride);
    new Uint8Array(words.buffer).set(bytes.subarray(0, this.words * 4));
    new Uint32Array(this.memory.buffer, word * 4, this.stride).set(words);
  }

  add(rowid: number, bits: Uint8Array): void {
    if (this.size === this.capacity) this.reserve(this.capacity * 2);
    const old = this.slots.get(rowid);
    if (old !== undefined) this.dead.add(old);
    this.write(this.size * this.stride, bits);
    this.slots.set(rowid, this.size);
    this.rowids[this.size++] = rowid;
  }

  remove(rowid: number): void {
    const i = this.slots.get(rowid);
    if (i === undefined) return;
    this.dead.add(i);
    this.slots.delete(rowid);
  }

  /** The stored bits of one row, as 32-bit words (a copy). */
  get(rowid: number): Uint32Array | undefined {
    const i = this.slots.get(rowid);
    return i === undefined ? undefined : this.bits.slice(i * this.stride, i * this.stride + this.words);
  }

  /** Row ids of the `k` entries nearest to `query` by Hamming distance, nearest first. */
  nearest(query: Uint8Array, k: number): number[] {
    const n = this.size;
    if (n === 0 || k <= 0) return [];
    this.write(this.queryAt / 4, query);
    this.wasm.scan(n, this.stride / 2, this.queryAt, this.distAt);
    const dist = new Uint16Array(this.memory.buffer, this.distAt, n);
    const counts = new Uint32Array(this.memory.buffer, this.countsAt, this.bins).fill(0);
    this.wasm.histogram(n, this.distAt, this.countsAt);
    for (const i of this.dead) counts[dist[i]!]!--;
    // The smallest distance that admits k entries; then those entries, by distance.
    let threshold = 0;
    for (let acc = counts[0]!; acc < k && threshold < counts.length - 1; ) acc += counts[++threshold]!;
    const found = this.wasm.collect(n, this.distAt, threshold, this.pickedAt);
    const picked = new Uint32Array(this.memory.buffer, this.pickedAt, found);
    const start = new Uint32Array(threshold + 2);
    for (let d = 0; d <= threshold; d++) start[d + 1] = start[d]! + counts[d]!;
    const sorted = new Float64Array(start[threshold + 1]!);
    for (const i of picked) if (!this.dead.has(i)) sorted[start[dist[i]!]!++] = this.rowids[i]!;
    return Array.from(sorted.subarray(0, Math.min(k, sorted.length)));
  }
}
