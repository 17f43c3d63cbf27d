// Pluggable embeddings. The default needs no model: hashed word and character n-grams
// projected into a fixed-size vector (the "hashing trick"). An OpenAI-compatible
// `/embeddings` endpoint can replace it.
import { asciiContentWords, isAscii, lowerCode } from "./ascii-words.js";
import { contentWords } from "./text.js";

export interface Embedder {
  readonly name: string;
  readonly dimensions: number;
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /** Present when embedding is cheap enough to do inline. */
  embedSync?(text: string): Float32Array;
}

/** FNV-1a 32-bit, continued from `h` over s[from, to): features hash without being built. */
function fnv(h: number, s: string, from = 0, to = s.length): number {
  for (let i = from; i < to; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

/** `fnv` over the lower-cased ASCII characters of s[from, to). */
function fnvLower(h: number, s: string, from: number, to: number): number {
  for (let i = from; i < to; i++) {
    h ^= lowerCode(s.charCodeAt(i));
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

/** Word spans, reused by every call (embedding is synchronous). */
const spanBuffer = { spans: new Int32Array(1024) };

const FNV_OFFSET = 0x811c9dc5;
// The hash states after each feature's prefix.
const WORD = fnv(FNV_OFFSET, "w:");
const TRIGRAM = fnv(FNV_OFFSET, "c:");
const BIGRAM = fnv(FNV_OFFSET, "b:");

/**
 * Adds `weight` to the coordinate `hash` picks. `hash` is a signed 32-bit integer (Math.imul);
 * the top bit picks the sign, so collisions cancel out on average. A power-of-two size takes
 * the low bits (the same as % on the unsigned hash, without a floating-point remainder: an
 * unsigned 32-bit hash is not a small integer to V8).
 */
function addFeature(v: Float32Array, hash: number, weight: number): void {
  const dims = v.length;
  v[(dims & (dims - 1)) === 0 ? hash & (dims - 1) : (hash >>> 0) % dims]! += hash < 0 ? -weight : weight;
}

/** The features of an ASCII text, hashed from spans of it (see ascii-words.ts). */
function asciiFeatures(text: string, v: Float32Array): void {
  const n = asciiContentWords(text, spanBuffer);
  const spans = spanBuffer.spans;
  for (let k = 0; k < n; k++) {
    const from = spans[2 * k]!;
    const to = spans[2 * k + 1]!;
    addFeature(v, fnvLower(WORD, text, from, to), 1);
    // Trigrams of "<word>": "<" and ">" stand at positions from - 1 and to.
    for (let i = from - 1; i + 3 <= to + 1; i++) {
      let h = TRIGRAM;
      for (let j = i; j < i + 3; j++) {
        h ^= j < from ? 60 : j >= to ? 62 : lowerCode(text.charCodeAt(j));
        h = Math.imul(h, 0x01000193);
      }
      addFeature(v, h, 0.35);
    }
  }
  for (let k = 0; k + 1 < n; k++) {
    const h = fnvLower(BIGRAM, text, spans[2 * k]!, spans[2 * k + 1]!);
    addFeature(v, fnvLower(fnv(h, " "), text, spans[2 * k + 2]!, spans[2 * k + 3]!), 0.5);
  }
}

/** The same features of any text's words, from the strings. */
function wordFeatures(ws: string[], v: Float32Array): void {
  for (const w of ws) {
    addFeature(v, fnv(WORD, w), 1);
    const padded = `<${w}>`;
    for (let i = 0; i + 3 <= padded.length; i++) addFeature(v, fnv(TRIGRAM, padded, i, i + 3), 0.35);
  }
  for (let i = 0; i + 1 < ws.length; i++) addFeature(v, fnv(fnv(fnv(BIGRAM, ws[i]!), " "), ws[i + 1]!), 0.5);
}

export class HashEmbedder implements Embedder {
  readonly name = "hash";
  constructor(readonly dimensions = 256) {}

  embedSync(text: string): Float32Array {
    const v = new Float32Array(this.dimensions);
    // Features: "w:<word>", "c:<trigram of <word>>", "b:<word> <next word>". The two paths are
    // functions of their own: each is optimized for its kind of text, and a first non-ASCII
    // text does not throw away the compiled ASCII path (V8 deoptimized it then).
    if (isAscii(text)) asciiFeatures(text, v);
    else wordFeatures(contentWords(text), v);
    return normalize(v);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedSync(t));
  }
}

export interface OpenAIEmbedderOptions {
  baseURL: string;
  model: string;
  apiKey?: string;
  dimensions: number;
  /** Texts per request. */
  batchSize?: number;
}

/** Any server that speaks OpenAI's `POST /embeddings`. */
export class OpenAIEmbedder implements Embedder {
  readonly name: string;
  readonly dimensions: number;
  constructor(private readonly options: OpenAIEmbedderOptions) {
    this.name = `openai:${options.model}`;
    this.dimensions = options.dimensions;
  }

  /** An embedder for the endpoint; without `dimensions`, one request finds out the vectors' size. */
  static async connect(
    options: Omit<OpenAIEmbedderOptions, "dimensions"> & { dimensions?: number },
    signal?: AbortSignal,
  ): Promise<OpenAIEmbedder> {
    const dimensions =
      options.dimensions ?? (await requestEmbeddings(options, ["dimensions"], signal))[0]!.length;
    if (!dimensions) throw new Error("embeddings: the endpoint returned an empty vector");
    return new OpenAIEmbedder({ ...options, dimensions });
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    const size = this.options.batchSize ?? 64;
    for (let i = 0; i < texts.length; i += size) {
      for (const e of await requestEmbeddings(this.options, texts.slice(i, i + size), signal)) {
        if (e.length !== this.dimensions)
          throw new Error(`embeddings: expected ${this.dimensions} dimensions, got ${e.length}`);
        out.push(normalize(Float32Array.from(e)));
      }
    }
    return out;
  }
}

async function requestEmbeddings(
  options: Pick<OpenAIEmbedderOptions, "baseURL" | "model" | "apiKey">,
  batch: string[],
  signal?: AbortSignal,
): Promise<number[][]> {
  const res = await fetch(`${options.baseURL.replace(/\/+$/, "")}/embeddings`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
    },
    body: JSON.stringify({ model: options.model, input: batch }),
    ...(signal ? { signal } : {}),
  });
  if (!res.ok)
    throw new Error(`embeddings request failed: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
  const body = (await res.json()) as { data?: { index: number; embedding: number[] }[] };
  const rows = [...(body.data ?? [])].sort((a, b) => a.index - b.index);
  if (rows.length !== batch.length)
    throw new Error(`embeddings: asked for ${batch.length}, got ${rows.length}`);
  if (rows.some((r) => !Array.isArray(r.embedding) || r.embedding.some((x) => typeof x !== "number")))
    throw new Error("embeddings: the answer holds a vector that is not a list of numbers");
  return rows.map((r) => r.embedding);
}

export function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  if (n > 0) {
    const s = 1 / Math.sqrt(n);
    for (let i = 0; i < v.length; i++) v[i]! *= s;
  }
  return v;
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let d = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) d += a[i]! * b[i]!;
  return d;
}

/** Sign bits, for the fast first pass of vector search (Hamming distance). */
export function toBits(v: Float32Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(v.length / 8));
  for (let i = 0; i < v.length; i++) if (v[i]! > 0) out[i >> 3]! |= 1 << (i & 7);
  return out;
}
