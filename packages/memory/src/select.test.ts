import assert from "node:assert/strict";
import { test } from "node:test";
import { HashEmbedder, toBits } from "./embeddings.js";
import { type Candidate, selectWithinBudget } from "./select.js";

const embedder = new HashEmbedder();
const cand = (id: string, text: string, relevance: number): Candidate => ({
  id,
  relevance,
  importance: 0.5,
  tokens: 20,
  bits: toBits(embedder.embedSync(text)),
});

test("a near-copy of a chosen item loses to a different one; unrelated items are not discounted", () => {
  // Hashed n-gram vectors are sparse: most sign bits are those of zeros and agree for any two
  // texts, so similarity comes from the bits they set, not from the Hamming distance alone.
  const picks = selectWithinBudget(
    [
      cand("a", "Caroline went to the LGBTQ support group yesterday, it was powerful.", 1),
      cand("copy", "Caroline went to the LGBTQ support group yesterday, so powerful.", 0.95),
      cand("other", "Melanie signed up for a pottery class with her kids.", 0.7),
    ],
    40,
    { costExponent: 1 },
  );
  assert.deepEqual(
    picks.map((p) => p.id),
    ["a", "other"],
  );
  // The gain of an unrelated pick keeps (nearly) its whole value.
  assert.ok(picks[1]!.gain > 0.9 * 0.7 * (1 - 0.25 + 0.25 * 0.5), `gain ${picks[1]!.gain}`);
});

test("dense sign bits: the cosine estimate from the Hamming distance", () => {
  const dense = (seed: number) => {
    const v = new Float32Array(256);
    let s = seed;
    for (let i = 0; i < v.length; i++) {
      s = (s * 1664525 + 1013904223) >>> 0;
      v[i] = s / 2 ** 32 - 0.5;
    }
    return v;
  };
  const base = dense(1);
  const near = base.map((x, i) => (i % 16 === 0 ? -x : x));
  const far = dense(2);
  const mk = (id: string, v: Float32Array, relevance: number): Candidate => ({
    id,
    relevance,
    importance: 0.5,
    tokens: 20,
    bits: toBits(v),
  });
  const picks = selectWithinBudget([mk("a", base, 1), mk("near", near, 0.95), mk("far", far, 0.7)], 40, {
    costExponent: 1,
  });
  assert.deepEqual(
    picks.map((p) => p.id),
    ["a", "far"],
  );
});
