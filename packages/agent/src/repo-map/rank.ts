// Ranking the workspace's definitions for a task. Files are the nodes of a graph; file A links
// to file B for each name A uses that B defines, weighted by how often and how telling the name
// is. PageRank on that graph, personalised towards the files the task points at (named paths,
// names it mentions that a file defines, words of its paths and definitions matching the task's
// words, weighted by rarity), gives each file a rank; each file's rank flows along its links to
// the definitions it uses, which orders the definitions.
import { FileGraph } from "./graph.js";
import type { Definition, FileTags } from "./tags.js";
import { identifiersIn, pathsIn, wordsIn } from "./words.js";

export interface RankQuery {
  /** Free text: the task, the conversation, the commit message. */
  text?: string;
  /** Files to focus on (relative to the workspace). */
  files?: readonly string[];
}

export interface RankedDefinition {
  file: string;
  def: Definition;
  score: number;
}

export interface Ranking {
  /** Files by rank, best first. */
  files: { file: string; rank: number }[];
  /** The best-scored definitions, best first (at most MAX_RANKED_DEFS; those of score 0 left out). */
  defs: RankedDefinition[];
  /** A file's best definition (of those scored above 0), ranked among the defs or not. */
  best?: (file: string) => RankedDefinition | undefined;
}

/**
 * Low for a map of one task: most of the rank stays with the files the task points at, and the
 * graph adds what they use. On real commits (bench/repo-map.mjs) 0.85, PageRank's usual value,
 * named fewer of the files changed (0.27 of them at 1,000 tokens on this repository, 0.69 at 0.15).
 */
const DAMPING = 0.15;
const ITERATIONS = 30;
/** Definitions kept in a ranking: more than a map of the largest budget (8,192 tokens) shows. */
const MAX_RANKED_DEFS = 2000;
/** Packs a definition's slot and index in one number (a file keeps at most 2,000 definitions). */
const DEF_SLOT = 2 ** 20;
/** `parseOutline`, `repo_map`, `HTTPServer`, `md5`: an identifier no English word looks like. */
function looksLikeCode(name: string): boolean {
  return /[a-z][A-Z]|[A-Z]{2}|_|\$|[a-zA-Z]\d/.test(name);
}

/** A file as a bag of words: its path's (counted thrice), its definitions' (twice), the names it uses and its comments' words. */
interface FileWords {
  tf: Map<string, number>;
  len: number;
}
/** An identifier's words, worked out once per process (the same names recur in every file). */
const nameWords = new Map<string, string[]>();
function wordsOfName(name: string): string[] {
  let words = nameWords.get(name);
  if (!words) {
    words = wordsIn(name);
    if (nameWords.size > 500_000) nameWords.clear();
    nameWords.set(name, words);
  }
  return words;
}

/** Per tags object (the index keeps one per file version): worked out once, not per query. */
const wordsCache = new WeakMap<FileTags, FileWords>();
function fileWords(file: string, tags: FileTags): FileWords {
  let words = wordsCache.get(tags);
  if (!words) {
    const tf = new Map<string, number>();
    let len = 0;
    const add = (w: string, n: number) => {
      tf.set(w, (tf.get(w) ?? 0) + n);
      len += n;
    };
    for (const w of wordsIn(file)) add(w, 3);
    for (const d of tags.defs) for (const w of wordsIn(d.name)) add(w, 2);
    for (const name in tags.refs) for (const w of wordsOfName(name)) add(w, tags.refs[name]!);
    const notes = tags.notes ?? {};
    for (const w in notes) add(w, notes[w]!);
    words = { tf, len };
    wordsCache.set(tags, words);
  }
  return words;
}

/** How much the task points at each file (before normalising), by slot: the personalisation vector. */
function personalisation(graph: FileGraph, query: RankQuery): Float64Array {
  const p = new Float64Array(graph.slots);
  const { list, id } = graph;
  const text = query.text ?? "";
  for (const f of query.files ?? []) {
    const i = id.get(f);
    if (i !== undefined) p[i]! += 20;
  }
  // Paths the text names, in full or by their end (`tools/grep.ts`, `grep.ts`, `src/repo-map/`).
  const tokens = pathsIn(text);
  if (tokens.length > 0)
    for (let i = 0; i < list.length; i++) {
      const f = list[i];
      if (f === undefined) continue;
      const noExt = f.replace(/\.[^./]+$/, "");
      for (const token of tokens) {
        const bare = token.replace(/\/$/, "");
        if (f === bare || f.endsWith(`/${bare}`) || noExt === bare || noExt.endsWith(`/${bare}`)) p[i]! += 10;
        else if (token.endsWith("/") && (f.startsWith(`${bare}/`) || f.includes(`/${bare}/`))) p[i]! += 2;
      }
    }
  // The task's words against each file's words: BM25 (k1 1.2, b 0.75), rare words worth more.
  const queryWords = [...new Set(wordsIn(text))];
  if (queryWords.length > 0) {
    const perFile: (FileWords | undefined)[] = new Array(list.length);
    const df = new Map<string, number>();
    let total = 0;
    for (let i = 0; i < list.length; i++) {
      const tags = graph.tags[i];
      if (!tags) continue;
      const words = fileWords(list[i]!, tags);
      perFile[i] = words;
      total += words.len;
      for (const w of queryWords) if (words.tf.has(w)) df.set(w, (df.get(w) ?? 0) + 1);
    }
    const n = graph.size;
    const avg = total / Math.max(1, n);
    const idf = queryWords.map((w) => {
      const d = df.get(w) ?? 0;
      return Math.log(1 + (n - d + 0.5) / (d + 0.5));
    });
    for (let i = 0; i < list.length; i++) {
      const words = perFile[i];
      if (!words) continue;
      let score = 0;
      for (let q = 0; q < queryWords.length; q++) {
        const tf = words.tf.get(queryWords[q]!);
        if (!tf) continue;
        score += (idf[q]! * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * words.len) / avg));
      }
      p[i]! += score;
    }
  }
  return p;
}

/** The graph of `files` (path → tags), built in full. */
export function buildGraph(files: ReadonlyMap<string, FileTags>): FileGraph {
  return FileGraph.of(files);
}

/** Ranks the definitions of `files` (path → tags) for `query`; `graph` is the graph of `files`, if made already. */
export function rankDefinitions(
  files: ReadonlyMap<string, FileTags>,
  query: RankQuery = {},
  graph: FileGraph = buildGraph(files),
): Ranking {
  const { list, definers, out } = graph;
  const slots = graph.slots;
  if (graph.size === 0) return { files: [], defs: [] };
  // Names the task mentions that look like code (`promptReady`, `repo_map`, `LRUCache`), not prose.
  const mentioned = new Set(identifiersIn(query.text ?? "").filter(looksLikeCode));

  const p = personalisation(graph, query);
  for (const name of mentioned) for (const j of definers.get(name) ?? []) p[j]! += 5;
  let pSum = 0;
  for (let i = 0; i < slots; i++) pSum += p[i]!;
  if (pSum === 0) for (let i = 0; i < slots; i++) p[i] = list[i] === undefined ? 0 : 1 / graph.size;
  else for (let i = 0; i < slots; i++) p[i]! /= pSum;

  let rank = Float64Array.from(p);
  let next = new Float64Array(slots);
  const { start, to, share } = graph.transitions();
  for (let it = 0; it < ITERATIONS; it++) {
    next.fill(0);
    let dangling = 0;
    for (let i = 0; i < slots; i++) {
      const r = rank[i]!;
      if (r === 0) continue;
      if (out[i] === 0) {
        dangling += r;
        continue;
      }
      const s = DAMPING * r;
      for (let k = start[i]!, end = start[i + 1]!; k < end; k++) next[to[k]!]! += s * share[k]!;
    }
    const base = 1 - DAMPING + DAMPING * dangling;
    let delta = 0;
    for (let i = 0; i < slots; i++) {
      next[i]! += base * p[i]!;
      delta += Math.abs(next[i]! - rank[i]!);
    }
    [rank, next] = [next, rank];
    if (delta < 1e-9) break;
  }

  // A file's rank flows along its links to the definitions it uses; a file's own rank also
  // goes to its definitions (so a file the task names shows what it defines, linked to or not).
  // What a name receives is the same for every file defining it (the users' shares, summed per
  // name), less a definer's own use of it (a file's use of its own definition links nothing).
  const toName = new Float64Array(graph.names);
  // Files with next to no rank pass next to nothing on: skipped (most files, for one task).
  const floor = rank.reduce((m, r) => Math.max(m, r), 0) * 1e-4;
  const passes = (i: number) => out[i] !== 0 && rank[i]! >= floor;
  for (let i = 0; i < slots; i++) {
    if (!passes(i)) continue;
    const { uses, useWeights } = graph.linksOf(i);
    const perWeight = rank[i]! / out[i]!;
    for (let u = 0; u < uses.length; u++) toName[uses[u]!]! += perWeight * useWeights[u]!;
  }
  // Scores first into flat arrays; objects only for the best (a map shows a few hundred).
  const ranked: { file: string; rank: number }[] = [];
  const bestAt = new Int32Array(slots).fill(-1);
  const bestScore = new Float64Array(slots);
  let total = 0;
  for (let i = 0; i < slots; i++) total += graph.linksOf(i).defNames.length;
  const scoreOf = new Float64Array(total);
  const at = new Float64Array(total); // slot * DEF_SLOT + index of the definition in its file
  let scored = 0;
  for (let i = 0; i < slots; i++) {
    const file = list[i];
    const tags = graph.tags[i];
    if (file === undefined || !tags) continue;
    ranked.push({ file, rank: rank[i]! });
    const own = rank[i]! / Math.max(1, tags.defs.length);
    const { defNames, selfWeights } = graph.linksOf(i);
    const self = passes(i) ? rank[i]! / out[i]! : 0;
    let top = -1;
    let topScore = 0;
    for (let k = 0; k < tags.defs.length; k++) {
      const nameId = defNames[k]!;
      if (nameId < 0) continue;
      const d = tags.defs[k]!;
      const topLevel = d.depth === 0 ? 1 : 0.5;
      const received = Math.max(0, toName[nameId]! - self * selfWeights[k]!);
      const score = received + own * topLevel * (mentioned.size > 0 && mentioned.has(d.name) ? 10 : 1);
      // A definition of no weight is never shown (the map stops at the first): left out.
      if (!(score > 0)) continue;
      scoreOf[scored] = score;
      at[scored++] = i * DEF_SLOT + k;
      if (score > topScore || (score === topScore && top >= 0 && d.line < tags.defs[top]!.line)) {
        top = k;
        topScore = score;
      }
    }
    bestAt[i] = top;
    bestScore[i] = topScore;
  }
  const best = (file: string): RankedDefinition | undefined => {
    const i = graph.id.get(file);
    if (i === undefined || bestAt[i]! < 0) return undefined;
    return { file, def: graph.tags[i]!.defs[bestAt[i]!]!, score: bestScore[i]! };
  };
  let threshold = 0;
  if (scored > MAX_RANKED_DEFS) threshold = nthLargest(scoreOf.slice(0, scored), MAX_RANKED_DEFS);
  const defs: RankedDefinition[] = [];
  for (let k = 0; k < scored; k++) {
    if (scoreOf[k]! < threshold) continue;
    const slot = Math.floor(at[k]! / DEF_SLOT);
    defs.push({ file: list[slot]!, def: graph.tags[slot]!.defs[at[k]! % DEF_SLOT]!, score: scoreOf[k]! });
  }
  defs.sort(
    (a, b) =>
      b.score - a.score || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) || a.def.line - b.def.line,
  );
  ranked.sort((a, b) => b.rank - a.rank);
  return { files: ranked, defs, best };
}

/** The `n`th largest of `a` (1-based; `a` is reordered): quickselect, no full sort. */
export function nthLargest(a: Float64Array, n: number): number {
  let lo = 0;
  let hi = a.length - 1;
  const k = n - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! > pivot) i++;
      while (a[j]! < pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i++] = a[j]!;
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return a[k]!;
}
