// Budgeted, redundancy-aware selection: a greedy for budgeted coverage. Each round takes the
// candidate (in full or compressed form) with the best gain per token, where the gain of a
// chunk shrinks with its similarity to what is already chosen. Not top-k: a long chunk must
// earn its tokens, and a near-duplicate adds little.
import { cosine } from "./embeddings.js";

export interface Candidate {
  id: string;
  /** 0..1: how well it answers the query. */
  relevance: number;
  /** 0..1. */
  importance: number;
  tokens: number;
  /** Tokens of the compressed form, when there is one. */
  compressedTokens?: number;
  vector?: Float32Array;
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
  const maxSim = new Float64Array(n);
  const taken = new Uint8Array(n);
  const out: Selection[] = [];
  let left = budget;
  for (;;) {
    let best = -1;
    let bestForm: "full" | "compressed" = "full";
    let bestRatio = 0;
    let bestGain = 0;
    for (let i = 0; i < n; i++) {
      if (taken[i]) continue;
      const c = candidates[i]!;
      const g = value[i]! * (1 - lambda * Math.max(0, maxSim[i]!));
      if (g <= 0) continue;
      if (c.tokens <= left) {
        const r = g / c.tokens ** beta;
        if (r > bestRatio) [best, bestForm, bestRatio, bestGain] = [i, "full", r, g];
      }
      const ct = c.compressedTokens;
      if (ct !== undefined && ct < c.tokens && ct <= left) {
        const gc = g * kept;
        const r = gc / ct ** beta;
        if (r > bestRatio) [best, bestForm, bestRatio, bestGain] = [i, "compressed", r, gc];
      }
    }
    if (best < 0) break;
    const c = candidates[best]!;
    const t = bestForm === "full" ? c.tokens : c.compressedTokens!;
    taken[best] = 1;
    left -= t;
    out.push({ id: c.id, form: bestForm, tokens: t, gain: bestGain });
    if (c.vector && lambda > 0) {
      for (let i = 0; i < n; i++) {
        const v = candidates[i]!.vector;
        if (taken[i] || !v) continue;
        const s = cosine(c.vector, v);
        if (s > maxSim[i]!) maxSim[i] = s;
      }
    }
  }
  // A compressed pick can be upgraded to full if budget is left over at the end.
  for (const s of out) {
    if (s.form !== "compressed") continue;
    const c = candidates.find((x) => x.id === s.id)!;
    if (c.tokens - s.tokens <= left) {
      left -= c.tokens - s.tokens;
      s.form = "full";
      s.tokens = c.tokens;
    }
  }
  return out;
}
