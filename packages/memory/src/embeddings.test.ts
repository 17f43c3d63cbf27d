import assert from "node:assert/strict";
import { test } from "node:test";
import { asciiContentWords } from "./ascii-words.js";
import { HashEmbedder, normalize } from "./embeddings.js";
import { contentWords } from "./text.js";

/** The features spelled out as strings, hashed one by one: what stored vectors were made with. */
function reference(text: string, dims: number): Float32Array {
  const hash = (s: string) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    return h >>> 0;
  };
  const v = new Float32Array(dims);
  const add = (feature: string, weight: number) => {
    const h = hash(feature);
    v[h % dims]! += h & 0x80000000 ? -weight : weight;
  };
  const ws = contentWords(text);
  for (const w of ws) {
    add(`w:${w}`, 1);
    const padded = `<${w}>`;
    for (let i = 0; i + 3 <= padded.length; i++) add(`c:${padded.slice(i, i + 3)}`, 0.35);
  }
  for (let i = 0; i + 1 < ws.length; i++) add(`b:${ws[i]} ${ws[i + 1]}`, 0.5);
  return normalize(v);
}

test("hashed embeddings are unchanged: the same vector as hashing each feature's string", () => {
  const texts = [
    "",
    "a",
    "Fix the parser in src/app/parser.ts: it fails on line 42 (ECONNREFUSED)",
    "Ünïcödé wörds, 東京 and émigré_names; snake_case camelCase 3.14 v1.2.3",
    Array.from({ length: 400 }, (_, i) => `word${i % 37} ${"x".repeat(i % 9)}`).join(" "),
  ];
  for (const dims of [256, 100, 8])
    for (const t of texts)
      assert.deepEqual(new HashEmbedder(dims).embedSync(t), reference(t, dims), t.slice(0, 30));
});

test("property: on random ASCII texts, word spans and vectors are what splitting into strings gives", () => {
  let seed = 7;
  const rnd = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  // Word characters, joiners at every place, stop words in both cases, one-letter words, "_".
  const pieces = ["a", "Z", "q", "_", "9", "42", ".", "/", "-", " ", "\n", "\t", ":", "The", "of", "FURTHER"];
  pieces.push("src/app.ts", "x_y", "-v", "a..b", "_.", "snake_Case", "line", "def", "(", ")", "#");
  for (let n = 0; n < 2000; n++) {
    const len = Math.floor(rnd() * 40);
    const text = Array.from({ length: len }, () => pieces[Math.floor(rnd() * pieces.length)]).join("");
    const buffer = { spans: new Int32Array(2) };
    const count = asciiContentWords(text, buffer);
    const spans = Array.from({ length: count }, (_, k) =>
      text.slice(buffer.spans[2 * k], buffer.spans[2 * k + 1]).toLowerCase(),
    );
    assert.deepEqual(spans, contentWords(text), JSON.stringify(text));
    assert.deepEqual(new HashEmbedder(64).embedSync(text), reference(text, 64), JSON.stringify(text));
  }
});
