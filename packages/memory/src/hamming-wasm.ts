// Hamming distances of every stored bit vector to a query, in WebAssembly: i64.popcnt is one
// machine instruction where JavaScript needs a dozen operations per 32 bits (100,000 vectors of
// 256 bits: about 0.3 ms instead of 1.5 ms), and the two passes that pick the nearest from
// them. Hand-assembled from this listing:
//
//   (import "env" "mem" (memory 1))
//   ;; out[i] (u16) = popcount(vector i xor q), for the n vectors stored from address 0
//   (func (export "scan") (param $n i32) (param $words i32) (param $q i32) (param $out i32)
//     (local $p i32) (local $j i32) (local $qp i32) (local $h i64)
//     block
//       loop                                    ;; one vector per turn
//         (br_if 1 (i32.eqz (local.get $n)))
//         (local.set $h (i64.const 0))
//         (local.set $qp (local.get $q))
//         (local.set $j (local.get $words))
//         loop                                  ;; one 64-bit word per turn
//           (local.set $h (i64.add (local.get $h)
//             (i64.popcnt (i64.xor (i64.load (local.get $p)) (i64.load (local.get $qp))))))
//           (local.set $p (i32.add (local.get $p) (i32.const 8)))
//           (local.set $qp (i32.add (local.get $qp) (i32.const 8)))
//           (br_if 0 (local.tee $j (i32.sub (local.get $j) (i32.const 1))))
//         end
//         (i32.store16 (local.get $out) (i32.wrap_i64 (local.get $h)))
//         (local.set $out (i32.add (local.get $out) (i32.const 2)))
//         (local.set $n (i32.sub (local.get $n) (i32.const 1)))
//         br 0
//       end
//     end)
//   ;; counts[d] (u32) += 1 for each of the n distances d (u16) at $dist
//   (func (export "histogram") (param $n i32) (param $dist i32) (param $counts i32)
//     (local $a i32)
//     block
//       loop
//         (br_if 1 (i32.eqz (local.get $n)))
//         (local.set $a (i32.add (local.get $counts)
//           (i32.shl (i32.load16_u (local.get $dist)) (i32.const 2))))
//         (i32.store (local.get $a) (i32.add (i32.load (local.get $a)) (i32.const 1)))
//         (local.set $dist (i32.add (local.get $dist) (i32.const 2)))
//         (local.set $n (i32.sub (local.get $n) (i32.const 1)))
//         br 0
//       end
//     end)
//   ;; writes to $out (u32) the indices of the distances at most $t; returns how many
//   (func (export "collect") (param $n i32) (param $dist i32) (param $t i32) (param $out i32)
//     (result i32) (local $i i32) (local $j i32)
//     block
//       loop
//         (br_if 1 (i32.ge_u (local.get $i) (local.get $n)))
//         (if (i32.le_u (i32.load16_u (local.get $dist)) (local.get $t))
//           (then
//             (i32.store (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 2)))
//               (local.get $i))
//             (local.set $j (i32.add (local.get $j) (i32.const 1)))))
//         (local.set $dist (i32.add (local.get $dist) (i32.const 2)))
//         (local.set $i (i32.add (local.get $i) (i32.const 1)))
//         br 0
//       end
//     end
//     (local.get $j))

const I32 = 0x7f;
const I64 = 0x7e;
const VOID = 0x40;
const op = {
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  br: 0x0c,
  brIf: 0x0d,
  end: 0x0b,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  i32Load: 0x28,
  i64Load: 0x29,
  i32Load16u: 0x2f,
  i32Store: 0x36,
  i32Store16: 0x3b,
  i32Const: 0x41,
  i64Const: 0x42,
  i32Eqz: 0x45,
  i32LeU: 0x4d,
  i32GeU: 0x4f,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Shl: 0x74,
  i64Popcnt: 0x7b,
  i64Add: 0x7c,
  i64Xor: 0x85,
  i32WrapI64: 0xa7,
} as const;
/** Alignment (log2) and offset of a memory access. */
const mem = (align: number) => [align, 0];
/** Adds `by` to local `x`. */
const bump = (x: number, by: number) => [op.localGet, x, op.i32Const, by, op.i32Add, op.localSet, x];
/** Subtracts 1 from local `x`. */
const drop1 = (x: number) => [op.localGet, x, op.i32Const, 1, op.i32Sub, op.localSet, x];

const scan = (() => {
  const [n, words, q, out, p, j, qp, h] = [0, 1, 2, 3, 4, 5, 6, 7];
  return [
    ...[2, 3, I32, 1, I64], // locals: $p $j $qp (i32), $h (i64)
    ...[op.block, VOID, op.loop, VOID],
    ...[op.localGet, n, op.i32Eqz, op.brIf, 1],
    ...[op.i64Const, 0, op.localSet, h],
    ...[op.localGet, q, op.localSet, qp],
    ...[op.localGet, words, op.localSet, j],
    ...[op.loop, VOID],
    ...[op.localGet, h, op.localGet, p, op.i64Load, ...mem(3), op.localGet, qp, op.i64Load, ...mem(3)],
    ...[op.i64Xor, op.i64Popcnt, op.i64Add, op.localSet, h],
    ...bump(p, 8),
    ...bump(qp, 8),
    ...[op.localGet, j, op.i32Const, 1, op.i32Sub, op.localTee, j, op.brIf, 0],
    op.end,
    ...[op.localGet, out, op.localGet, h, op.i32WrapI64, op.i32Store16, ...mem(1)],
    ...bump(out, 2),
    ...drop1(n),
    ...[op.br, 0, op.end, op.end, op.end],
  ];
})();

const histogram = (() => {
  const [n, dist, counts, a] = [0, 1, 2, 3];
  return [
    ...[1, 1, I32], // local $a
    ...[op.block, VOID, op.loop, VOID],
    ...[op.localGet, n, op.i32Eqz, op.brIf, 1],
    ...[op.localGet, counts, op.localGet, dist, op.i32Load16u, ...mem(1), op.i32Const, 2, op.i32Shl],
    ...[op.i32Add, op.localSet, a],
    ...[op.localGet, a, op.localGet, a, op.i32Load, ...mem(2), op.i32Const, 1, op.i32Add],
    ...[op.i32Store, ...mem(2)],
    ...bump(dist, 2),
    ...drop1(n),
    ...[op.br, 0, op.end, op.end, op.end],
  ];
})();

const collect = (() => {
  const [n, dist, t, out, i, j] = [0, 1, 2, 3, 4, 5];
  return [
    ...[1, 2, I32], // locals $i $j
    ...[op.block, VOID, op.loop, VOID],
    ...[op.localGet, i, op.localGet, n, op.i32GeU, op.brIf, 1],
    ...[op.localGet, dist, op.i32Load16u, ...mem(1), op.localGet, t, op.i32LeU, op.if, VOID],
    ...[op.localGet, out, op.localGet, j, op.i32Const, 2, op.i32Shl, op.i32Add, op.localGet, i],
    ...[op.i32Store, ...mem(2)],
    ...bump(j, 1),
    op.end,
    ...bump(dist, 2),
    ...bump(i, 1),
    ...[op.br, 0, op.end, op.end],
    ...[op.localGet, j, op.end],
  ];
})();

/** Unsigned LEB128, the encoding of sizes and counts. */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}
const vec = (items: number[][]) => [...leb(items.length), ...items.flat()];
const section = (id: number, content: number[]) => [id, ...leb(content.length), ...content];
const name = (s: string) => [s.length, ...Buffer.from(s)];
const functions = [scan, histogram, collect];

const bytes = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
  ...section(
    1, // types: scan, histogram, collect
    vec([
      [0x60, 4, I32, I32, I32, I32, 0],
      [0x60, 3, I32, I32, I32, 0],
      [0x60, 4, I32, I32, I32, I32, 1, I32],
    ]),
  ),
  ...section(2, vec([[...name("env"), ...name("mem"), 0x02, 0x00, 1]])), // a memory, min 1 page
  ...section(3, vec([[0], [1], [2]])), // the functions' types
  ...section(7, vec(["scan", "histogram", "collect"].map((f, i) => [...name(f), 0x00, i]))),
  ...section(10, vec(functions.map((body) => [...leb(body.length), ...body]))),
]);

const module = new WebAssembly.Module(bytes);

export interface HammingFunctions {
  /** Writes to `out` (u16 each) the Hamming distance of each of `n` vectors at address 0 to `q`. */
  scan(n: number, words64: number, q: number, out: number): void;
  /** Adds 1 to `counts[d]` (u32 each) for each of the `n` distances (u16) at `dist`. */
  histogram(n: number, dist: number, counts: number): void;
  /** Writes to `out` (u32 each) the indices of the distances at most `t`; returns how many. */
  collect(n: number, dist: number, t: number, out: number): number;
}

export function hammingFunctions(memory: WebAssembly.Memory): HammingFunctions {
  return new WebAssembly.Instance(module, { env: { mem: memory } }).exports as unknown as HammingFunctions;
}

/** A few vectors in WebAssembly memory, and the Hamming distances from one of them to all. */
export class HammingTable {
  private readonly memory = new WebAssembly.Memory({ initial: 1 });
  private readonly wasm = hammingFunctions(this.memory);
  private n = 0;
  private words64 = 0;

  /** Loads the vectors (missing ones as zeros), replacing those loaded before. */
  load(vectors: readonly (Uint8Array | undefined)[], bytes: number): void {
    this.n = vectors.length;
    this.words64 = Math.max(1, Math.ceil(bytes / 8));
    const need = this.n * this.words64 * 8 + this.n * 2;
    const have = this.memory.buffer.byteLength;
    if (need > have) this.memory.grow(Math.ceil((need - have) / 65536));
    const all = new Uint8Array(this.memory.buffer, 0, this.n * this.words64 * 8);
    all.fill(0);
    vectors.forEach((v, i) => {
      if (v) all.set(v.subarray(0, this.words64 * 8), i * this.words64 * 8);
    });
  }

  /** Distances from vector `i` to each loaded vector (a view, valid until the next call). */
  from(i: number): Uint16Array {
    const out = this.n * this.words64 * 8;
    this.wasm.scan(this.n, this.words64, i * this.words64 * 8, out);
    return new Uint16Array(this.memory.buffer, out, this.n);
  }
}
