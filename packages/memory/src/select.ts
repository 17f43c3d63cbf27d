// Budgeted, redundancy-aware selection: a greedy for budgeted coverage. Each round takes the
// candidate (in full or compressed form) with the best gain per token, where the gain of a
// chunk shrinks with its similarity to what is already chosen. Not top-k: a long chunk must
// earn its tokens, and a near-duplicate adds little. Gains only ever shrink as the selection
// grows, so the greedy is evaluated lazily (a stale score is an upper bound): only the
// candidates that reach the top are scored again.
import { HammingTable } from "./hamming-wasm.js";

/** The candidates' sign bits, for their distances to each chosen one (selections run one at a time). */
const table = new HammingTable();

/** Set bits of each byte value. */
const POPCOUNT = Uint8Array.from({ length: 256 }, (_, b) => {
  let k = 0;
  for (let x = b; x; x >>= 1) k += x & 1;
  return k;
});
/** Below this share of set bits, sign bits are of a sparse vector (see selectWithinBudget). */
const SPARSE = 0.3;

export interface Candidate {
  id: string;
  /** 0..1: how well it answers the query. */
  relevance: number;
  /** 0..1. */
  importance: number;
  tokens: number;
  /** Tokens of the compressed form, when there is one. */
  compressedTokens?: number;
  /** Sign bits of the embedding (see toBits): similarity from Hamming distance, fast. */
  bits?: Uint8Array;
}

export interface Selection {
  id: string;
  form: "full" | "compressed";
  tokens: number;
  gain: number;
}

export interface SelectOptions {
  /**
   * How much of its value a compressed form keeps (0..1). Default: the square root of its
   * share of the chunk's tokens (a stand-in a tenth the size keeps about a third).
   */
  compressedValue?: number;
  /** How strongly similarity to chosen chunks discounts a candidate. */
  redundancy?: number;
  /** Weight of importance against relevance. */
  importanceWeight?: number;
  /** Exponent on the cost: below 1 favours longer, fuller chunks a little. */
  costExponent?: number;
}

interface Entry {
  i: number;
  form: "full" | "compressed";
  tokens: number;
  ratio: number;
  gain: number;
  /** Number of chosen items this entry's gain accounts for. */
  seen: number;
}

/** A binary max-heap on ratio (sifting moves a hole, not pairs of entries). */
class Heap {
  readonly a: Entry[] = [];
  push(e: Entry): void {
    const a = this.a;
    let k = a.length;
    a.push(e);
    while (k > 0) {
      const p = (k - 1) >> 1;
      if (a[p]!.ratio >= e.ratio) break;
      a[k] = a[p]!;
      k = p;
    }
    a[k] = e;
  }
  pop(): Entry | undefined {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || !last) return top;
    let k = 0;
    for (;;) {
      const l = 2 * k + 1;
      if (l >= a.length) break;
      const r = l + 1;
      const m = r < a.length && a[r]!.ratio > a[l]!.ratio ? r : l;
      if (a[m]!.ratio <= last.ratio) break;
      a[k] = a[m]!;
      k = m;
    }
    a[k] = last;
    return top;
  }
}

// The loops over every candidate are functions of their own: they are what runs hot, and
// V8's optimizing compiler then compiles them alone; inside selectWithinBudget they made it
// compile the whole selection (--trace-opt: 60–120 ms of compile work on V8's threads in a
// 200-step run, for ~3 ms of running it).

/** Set bits of each candidate's sign bits into `ones`; returns their mean share of the bits. */
function countSetBits(candidates: readonly Candidate[], ones: Float64Array): number {
  let setShare = 0;
  let withBits = 0;
  for (let i = 0; i < candidates.length; i++) {
    const b = candidates[i]!.bits;
    if (!b) continue;
    let k = 0;
    for (const x of b) k += POPCOUNT[x]!;
    ones[i] = k;
    setShare += k / (b.length * 8);
    withBits++;
  }
  return setShare / Math.max(1, withBits);
}

interface RedundancyState {
  hasBits: Uint8Array;
  taken: Uint8Array;
  ones: Float64Array;
  redundancy: Float64Array;
  sparse: boolean;
  width: number;
}

/**
 * After candidate `a` is chosen: each candidate's redundancy becomes its similarity to `a` if
 * that is higher. `dist`: Hamming distances from `a`. Dense vectors: cos(π · hamming / bits),
 * never below 0; sparse ones: the overlap of the set bits (Jaccard; see selectWithinBudget).
 */
function raiseRedundancy(a: number, dist: ArrayLike<number>, st: RedundancyState): void {
  const { hasBits, taken, ones, redundancy, sparse, width } = st;
  for (let i = 0; i < redundancy.length; i++) {
    if (!hasBits[i] || taken[i]) continue;
    const d = dist[i]!;
    let r: number;
    if (!sparse) r = Math.max(0, Math.cos((Math.PI * d) / width));
    else {
      const both = (ones[a]! + ones[i]! - d) / 2;
      const either = ones[a]! + ones[i]! - both;
      r = either > 0 ? both / either : 0;
    }
    if (r > redundancy[i]!) redundancy[i] = r;
  }
}

export function selectWithinBudget(
  candidates: Candidate[],
  budget: number,
  options: SelectOptions = {},
): Selection[] {
  const kept = options.compressedValue;
  const lambda = options.redundancy ?? 0.6;
  const iw = options.importanceWeight ?? 0.25;
  const beta = options.costExponent ?? 0.8;
  const n = candidates.length;
  const value = candidates.map((c) => c.relevance * (1 - iw + iw * c.importance));
  // Redundancy is the similarity to the most similar chosen item, estimated from sign bits
  // (each time one is chosen, one scan of its Hamming distances to every candidate). Dense
  // vectors: cos(π · hamming / bits), never below 0 (a dissimilar item does not add value).
  // Sparse vectors (the hashed n-grams: a turn sets a few dozen of 256 coordinates) have
  // mostly zero coordinates, whose sign bits agree for any two texts — there the cosine
  // estimate says everything is alike, so the overlap of the set bits (Jaccard) is used.
  const bytes = candidates.reduce((m, c) => Math.max(m, c.bits?.length ?? 0), 0);
  const width = Math.ceil(bytes / 4) * 32;
  const similar = lambda > 0 && bytes > 0;
  const ones = new Float64Array(n);
  let setShare = 0;
  if (similar) {
    table.load(
      candidates.map((c) => c.bits),
      bytes,
    );
    setShare = countSetBits(candidates, ones);
  }
  const sparse = setShare < SPARSE;
  const redundancy = new Float64Array(n);
  const taken = new Uint8Array(n);
  const chosen: number[] = [];
  const heap = new Heap();
  // Cost of each form (tokens ** beta), computed once.
  const fullCost = new Float64Array(n);
  const shortCost = new Float64Array(n);
  const hasBits = new Uint8Array(n);
  const shortValue = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const c = candidates[i]!;
    shortValue[i] = kept ?? Math.sqrt(Math.min(1, (c.compressedTokens ?? 0) / Math.max(1, c.tokens)));
    fullCost[i] = Math.max(1, c.tokens) ** beta;
    shortCost[i] = Math.max(1, c.compressedTokens ?? 1) ** beta;
    hasBits[i] = c.bits ? 1 : 0;
  }
  const entry = (i: number, form: "full" | "compressed", tokens: number): Entry => {
    const full = form === "full";
    const g = value[i]! * (1 - lambda * redundancy[i]!) * (full ? 1 : shortValue[i]!);
    return {
      i,
      form,
      tokens,
      gain: g,
      ratio: g / (full ? fullCost[i]! : shortCost[i]!),
      seen: chosen.length,
    };
  };
  for (let i = 0; i < n; i++) {
    const c = candidates[i]!;
    if (value[i]! <= 0) continue;
    heap.push(entry(i, "full", c.tokens));
    if (c.compressedTokens !== undefined && c.compressedTokens < c.tokens)
      heap.push(entry(i, "compressed", c.compressedTokens));
  }
  const out: Selection[] = [];
  const redundancyState: RedundancyState = { hasBits, taken, ones, redundancy, sparse, width };
  let left = budget;
  for (let e = heap.pop(); e; e = heap.pop()) {
    if (taken[e.i] || e.tokens > left) continue;
    if (e.seen < chosen.length) {
      // Stale: scored before the latest choices; score it again and requeue.
      const fresh = entry(e.i, e.form, e.tokens);
      if (fresh.gain > 0) heap.push(fresh);
      continue;
    }
    taken[e.i] = 1;
    chosen.push(e.i);
    if (similar && hasBits[e.i]) raiseRedundancy(e.i, table.from(e.i), redundancyState);
    left -= e.tokens;
    out.push({ id: candidates[e.i]!.id, form: e.form, tokens: e.tokens, gain: e.gain });
  }
  // A compressed pick can be upgraded to full if budget is left over at the end (out[k] is
  // candidates[chosen[k]]).
  for (const [k, s] of out.entries()) {
    if (s.form !== "compressed") continue;
    const c = candidates[chosen[k]!]!;
    if (c.tokens - s.tokens <= left) {
      left -= c.tokens - s.tokens;
      s.form = "full";
      s.tokens = c.tokens;
    }
  }
  return out;
}
