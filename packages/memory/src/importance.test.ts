// The goal-word share of a chunk is found without splitting its text into words: it must count
// exactly what splitting would, on any text (letters of every script, digits, _, punctuation,
// astral characters on either side of a word).
import assert from "node:assert/strict";
import { test } from "node:test";
import { goalWordsIn } from "./importance.js";
import { density } from "./text.js";

/** The definition: distinct goal words among the maximal runs of letters, digits and _. */
function bySplitting(lower: string, goalWords: Set<string>): number {
  const seen = new Set<string>();
  for (const w of lower.match(/[\p{L}\p{N}_]+/gu) ?? []) if (goalWords.has(w)) seen.add(w);
  return seen.size;
}

const PIECES = [
  "a",
  "b",
  "ab",
  "ba",
  "_",
  "1",
  "é",
  "ß",
  "日本",
  "𝒜",
  "😀",
  " ",
  ".",
  "/",
  "-",
  "\n",
  "x_y",
  "a.b",
];

function rnd(seed: number): () => number {
  let s = seed;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 2 ** 32;
  };
}

test("goalWordsIn counts what splitting into words counts, on random texts", () => {
  const r = rnd(7);
  const pick = () => PIECES[Math.floor(r() * PIECES.length)]!;
  for (let n = 0; n < 3000; n++) {
    const text = Array.from({ length: Math.floor(r() * 30) }, pick)
      .join("")
      .toLowerCase();
    const goal = new Set(
      Array.from({ length: 1 + Math.floor(r() * 4) }, () => pick() + (r() < 0.5 ? pick() : "")),
    );
    assert.equal(goalWordsIn(text, goal), bySplitting(text, goal), JSON.stringify({ text, goal: [...goal] }));
  }
});

test("density counts every match, as before (paths, numbers, identifiers, entities, signals)", () => {
  const text =
    "Error: src/app.ts failed at line 42, see fooBar and snake_case; Alice said 3.14 is TODO. Note README.md 7 8";
  const d = density(text);
  assert.deepEqual(
    [d.paths, d.numbers, d.identifiers, d.entities, d.signals],
    [
      text.match(
        /(?:^|[\s"'`(])(?:\.{0,2}\/)?[\w.-]+\/[\w./-]+|\b[\w-]+\.(?:ts|js|mjs|json|py|go|rs|md|txt|yml|yaml|toml|sh|c|h|cpp|java)\b/g,
      )!.length,
      text.match(/\b\d+(?:[.,:]\d+)*\b/g)!.length,
      text.match(/\b[a-z]+[A-Z]\w*\b|\b\w+_\w+\b/g)!.length,
      text.match(/(?<![.!?]\s)\b[A-Z][a-z]{2,}\b/g)!.length,
      text.match(
        /\b(error|errors|fail(?:ed|ure)?|goal|must|never|always|important|constraint|required?|todo|fix(?:ed)?|bug|remember|decided?|note)\b/gi,
      )!.length,
    ],
  );
  // The same text twice in a row gives the same counts (no regex state is left behind).
  assert.deepEqual(density(text), d);
  assert.ok(d.paths >= 2 && d.numbers >= 4 && d.signals >= 3);
});
