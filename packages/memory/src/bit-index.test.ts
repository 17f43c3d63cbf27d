import assert from "node:assert/strict";
import { test } from "node:test";
import { BitIndex } from "./bit-index.js";

function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

function bytes(n: number, rnd: () => number): Uint8Array {
  return Uint8Array.from({ length: n }, () => Math.floor(rnd() * 256));
}

function hamming(a: Uint8Array, b: Uint8Array): number {
  let h = 0;
  for (let i = 0; i < a.length; i++) for (let x = a[i]! ^ b[i]!; x; x &= x - 1) h++;
  return h;
}

// Dimensions that fill the scan's blocks of 8 words, leave a partial block, and leave a
// partial word (the padding must never count as a difference).
for (const dims of [256, 96, 20, 1536]) {
  test(`nearest by Hamming distance equals a brute-force scan (${dims} bits)`, () => {
    const rnd = random(dims);
    const n = 3000;
    const index = new BitIndex(Math.ceil(dims / 32));
    const rows = new Map<number, Uint8Array>();
    for (let i = 0; i < n; i++) {
      const b = bytes(Math.ceil(dims / 8), rnd);
      // Bits past `dims` are not part of the vector.
      if (dims % 8) b[b.length - 1]! &= (1 << (dims % 8)) - 1;
      rows.set(1000 + i, b);
      index.add(1000 + i, b);
    }
    // Removed rows never come back, whatever their distance.
    for (let i = 0; i < n; i += 7) {
      index.remove(1000 + i);
      rows.delete(1000 + i);
    }
    assert.equal(index.length, rows.size);
    for (let q = 0; q < 5; q++) {
      const query = q === 0 ? rows.get(1001)! : bytes(Math.ceil(dims / 8), rnd);
      if (dims % 8) query[query.length - 1]! &= (1 << (dims % 8)) - 1;
      const k = 50;
      const got = index.nearest(query, k);
      assert.equal(got.length, k);
      const dist = got.map((r) => hamming(rows.get(r)!, query));
      assert.deepEqual(
        dist,
        [...dist].sort((a, b) => a - b),
        "nearest first",
      );
      const all = [...rows.values()].map((b) => hamming(b, query)).sort((a, b) => a - b);
      assert.deepEqual(dist, all.slice(0, k), "the k smallest distances");
      if (q === 0) assert.equal(got[0], 1001);
    }
    const w = index.get(1001)!;
    assert.deepEqual(new Uint8Array(w.buffer, w.byteOffset, Math.ceil(dims / 8)), rows.get(1001));
    assert.equal(index.get(1000), undefined, "removed");
  });
}

test("nearest asks for more than there is, or for nothing", () => {
  const index = new BitIndex(8);
  assert.deepEqual(index.nearest(new Uint8Array(32), 5), []);
  index.add(1, new Uint8Array(32).fill(255));
  index.add(2, new Uint8Array(32));
  assert.deepEqual(index.nearest(new Uint8Array(32), 5), [2, 1]);
  assert.deepEqual(index.nearest(new Uint8Array(32), 0), []);
  // Re-adding a row replaces it.
  index.add(1, new Uint8Array(32));
  assert.equal(index.length, 2);
  assert.deepEqual(index.nearest(new Uint8Array(32), 5).sort(), [1, 2]);
});

test("the index grows past its first capacity without losing rows", () => {
  const rnd = random(5);
  const index = new BitIndex(8);
  const first = bytes(32, rnd);
  index.add(7, first);
  for (let i = 0; i < 5000; i++) index.add(100 + i, bytes(32, rnd));
  assert.deepEqual(index.nearest(first, 1), [7]);
  assert.deepEqual(new Uint8Array(index.get(7)!.slice().buffer), first);
});
