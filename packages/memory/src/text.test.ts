// words(): ASCII text takes a plain-ASCII pattern (no ICU property class to build at first use);
// its tokens must be exactly those of the Unicode pattern, for ASCII and for any other text.
import assert from "node:assert/strict";
import { test } from "node:test";
import { contentWords, words } from "./text.js";

const UNICODE = /[\p{L}\p{N}_][\p{L}\p{N}_./-]*[\p{L}\p{N}_]|[\p{L}\p{N}]/gu;
const reference = (text: string) => text.toLowerCase().match(UNICODE) ?? [];

test("words: the same tokens as the Unicode pattern, ASCII or not", () => {
  const texts = [
    "",
    "   ",
    "Fix the parser in src/app/parser.ts (line 42), then run `npm test` -- _private_ x.y.z/",
    "foo_bar BAZ-qux ./a/b.c ../d -e- _ . / - 3.14 v2.0.1 a",
    "tab\tnew\nline\r\nend;semi,comma:colon@at#hash$dollar%pc^caret&amp*star+plus=eq~tilde|pipe",
    "héllo wörld — naïve café 東京 Привет мир ١٢٣ ½",
    // Non-ASCII characters that lower-case to ASCII (Kelvin sign → k) or to more characters (İ).
    "\u212Aelvin \u0130stanbul",
    "mixed ASCII then é at the end",
    "emoji 🙂 between words, and 𝐛𝐨𝐥𝐝 letters",
  ];
  // Every ASCII character alone and between letters.
  for (let c = 0; c < 128; c++) texts.push(String.fromCharCode(c), `a${String.fromCharCode(c)}b`);
  for (const text of texts) assert.deepEqual(words(text), reference(text), JSON.stringify(text));
});

test("contentWords drops stop words and single characters", () => {
  assert.deepEqual(contentWords("The parser in src/app.ts is a x Café"), ["parser", "src/app.ts", "café"]);
});
