// Budgeted, redundancy-aware selection: a greedy for budgeted coverage. Each round takes the
// candidate (in full or compressed form) with the best gain per token, where the gain of a
// chunk shrinks with its similarity to what is already chosen. Not top-k: a long chunk must
// earn its tokens, and a near-duplicate adds little. Gains only ever shrink as the selection
// grows, so the greedy is evaluated lazily (a stale score is an upper bound): only the
// candidates that reach the top are compared with the newly chosen ones.

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
  /** How much of its value a compressed form keeps (0..1). */
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

/** A binary max-heap on ratio. */
class Heap {
  readonly a: Entry[] = [];
  push(e: Entry): void {
    const a = this.a;
    a.push(e);
    let k = a.length - 1;
    while (k > 0) {
      const p = (k - 1) >> 1;
      if (a[p]!.ratio >= a[k]!.ratio) break;
      [a[p], a[k]] = [a[k]!, a[p]!];
      k = p;
    }
  }
  pop(): Entry | undefined {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (a.length && last) {
      a[0] = last;
      let k = 0;
      for (;;) {
        const l = 2 * k + 1;
        const r = l + 1;
        let m = k;
        if (l < a.length && a[l]!.ratio > a[m]!.ratio) m = l;
        if (r < a.length && a[r]!.ratio > a[m]!.ratio) m = r;
        if (m === k) break;
        [a[m], a[k]] = [a[k]!, a[m]!];
        k = m;
      }
    }
    return top;
  }
}

export function selectWithinBudget(
  candidates: Candidate[],
  budget: number,
  options: SelectOptions = {},
): Selection[] {
  const kept = options.compressedValue ?? 0.75;
  const lambda = options.redundancy ?? 0.6;
  const iw = options.importanceWeight ?? 0.25;
  const beta = options.costExponent ?? 0.8;
  const n = candidates.length;
  const value = candidates.map((c) => c.relevance * (1 - iw + iw * c.importance));
  const words = candidates.map((c) => (c.bits ? toWords(c.bits) : undefined));
  // Redundancy is the cosine to the most similar chosen item, estimated from sign bits:
  // cos(π · hamming / bits) falls as the distance grows, so the least distance is kept and the
  // cosine taken once per update (never below 0: a dissimilar item does not add value).
  const minDist = new Int32Array(n).fill(0x7fffffff);
  const redundancy = new Float64Array(n);
  const taken = new Uint8Array(n);
  const chosen: number[] = [];
  const heap = new Heap();
  const entry = (i: number, form: "full" | "compressed", tokens: number): Entry => {
    const g = value[i]! * (1 - lambda * redundancy[i]!) * (form === "full" ? 1 : kept);
    return { i, form, tokens, gain: g, ratio: g / Math.max(1, tokens) ** beta, seen: chosen.length };
  };
  for (let i = 0; i < n; i++) {
    const c = candidates[i]!;
    if (value[i]! <= 0) continue;
    heap.push(entry(i, "full", c.tokens));
    if (c.compressedTokens !== undefined && c.compressedTokens < c.tokens)
      heap.push(entry(i, "compressed", c.compressedTokens));
  }
  const out: Selection[] = [];
  let left = budget;
  for (let e = heap.pop(); e; e = heap.pop()) {
    if (taken[e.i] || e.tokens > left) continue;
    if (e.seen < chosen.length) {
      // Stale: bring its redundancy up to date with what was chosen since, and requeue.
      const v = words[e.i];
      if (v && lambda > 0) {
        let d = minDist[e.i]!;
        for (let k = e.seen; k < chosen.length; k++) {
          const w = words[chosen[k]!];
          if (w) d = Math.min(d, hamming(v, w));
        }
        if (d < minDist[e.i]!) {
          minDist[e.i] = d;
          redundancy[e.i] = Math.max(0, Math.cos((Math.PI * d) / (v.length * 32)));
        }
      }
      const fresh = entry(e.i, e.form, e.tokens);
      if (fresh.gain > 0) heap.push(fresh);
      continue;
    }
    taken[e.i] = 1;
    chosen.push(e.i);
    left -= e.tokens;
    out.push({ id: candidates[e.i]!.id, form: e.form, tokens: e.tokens, gain: e.gain });
  }
  // A compressed pick can be upgraded to full if budget is left over at the end.
  const index = new Map(candidates.map((c, i) => [c.id, i]));
  for (const s of out) {
    if (s.form !== "compressed") continue;
    const c = candidates[index.get(s.id)!]!;
    if (c.tokens - s.tokens <= left) {
      left -= c.tokens - s.tokens;
      s.form = "full";
      s.tokens = c.tokens;
    }
  }
  return out;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

function hamming(a: Uint32Array, b: Uint32Array): number {
  let h = 0;
  for (let i = 0; i < a.length; i++) h += popcount(a[i]! ^ b[i]!);
  return h;
}

/** Bytes as 32-bit words: a view when they are aligned whole words, else a zero-padded copy. */
function toWords(bits: Uint8Array): Uint32Array {
  if (bits.byteOffset % 4 === 0 && bits.length % 4 === 0)
    return new Uint32Array(bits.buffer, bits.byteOffset, bits.length / 4);
  const buf = new Uint8Array(Math.ceil(bits.length / 4) * 4);
  buf.set(bits);
  return new Uint32Array(buf.buffer);
}
