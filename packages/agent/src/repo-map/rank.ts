// Ranking the workspace's definitions for a task. Files are the nodes of a graph; file A links
// to file B for each name A uses that B defines, weighted by how often and how telling the name
// is. PageRank on that graph, personalised towards the files the task points at (named paths,
// names it mentions that a file defines, words of its paths and definitions matching the task's
// words, weighted by rarity), gives each file a rank; each file's rank flows along its links to
// the definitions it uses, which orders the definitions.
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
  /** Definitions by score, best first. */
  defs: RankedDefinition[];
}

/**
 * Low for a map of one task: most of the rank stays with the files the task points at, and the
 * graph adds what they use. On real commits (bench/repo-map.mjs) 0.85, PageRank's usual value,
 * named fewer of the files changed (0.27 of them at 1,000 tokens on this repository, 0.69 at 0.15).
 */
const DAMPING = 0.15;
const ITERATIONS = 30;
/** Names defined in more files than this are too generic to link files (`get`, `constructor`). */
const MAX_DEFINERS = 12;

/** How much a use of `name` says about a link between two files. */
function nameWeight(name: string, definers: number): number {
  let w = 1;
  // Long or compound names (`parseOutline`, `repo_map`) are specific; `run` or `map` are not.
  if (name.length >= 8 || /[a-z][A-Z]|_[a-z]/.test(name)) w *= 3;
  if (name.startsWith("_")) w *= 0.2;
  if (definers > 5) w *= 0.2;
  return w;
}

/** A definition other files can use: top level, or a member of a class or object. A function local to another is not. */
function linkable(d: Definition): boolean {
  return d.depth === 0 || d.kind === "method";
}

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

/** How much the task points at each file (before normalising): the personalisation vector. */
function personalisation(files: ReadonlyMap<string, FileTags>, query: RankQuery): Map<string, number> {
  const p = new Map<string, number>();
  const add = (file: string, v: number) => p.set(file, (p.get(file) ?? 0) + v);
  const text = query.text ?? "";
  const names = [...files.keys()];
  for (const f of query.files ?? []) if (files.has(f)) add(f, 20);
  // Paths the text names, in full or by their end (`tools/grep.ts`, `grep.ts`, `src/repo-map/`).
  for (const token of pathsIn(text)) {
    const bare = token.replace(/\/$/, "");
    for (const f of names) {
      const noExt = f.replace(/\.[^./]+$/, "");
      if (f === bare || f.endsWith(`/${bare}`) || noExt === bare || noExt.endsWith(`/${bare}`)) add(f, 10);
      else if (token.endsWith("/") && (f.startsWith(`${bare}/`) || f.includes(`/${bare}/`))) add(f, 2);
    }
  }
  // The task's words against each file's words: BM25 (k1 1.2, b 0.75), rare words worth more.
  const queryWords = new Set(wordsIn(text));
  if (queryWords.size > 0) {
    const perFile = new Map<string, FileWords>();
    const df = new Map<string, number>();
    let total = 0;
    for (const [f, tags] of files) {
      const words = fileWords(f, tags);
      perFile.set(f, words);
      total += words.len;
      for (const w of queryWords) if (words.tf.has(w)) df.set(w, (df.get(w) ?? 0) + 1);
    }
    const n = files.size;
    const avg = total / Math.max(1, n);
    for (const [f, words] of perFile) {
      let score = 0;
      for (const w of queryWords) {
        const tf = words.tf.get(w);
        if (!tf) continue;
        const d = df.get(w)!;
        const idf = Math.log(1 + (n - d + 0.5) / (d + 0.5));
        score += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * words.len) / avg));
      }
      if (score > 0) add(f, score);
    }
  }
  return p;
}

/** The links between files, which depend on the files only (not on the query): kept between maps. */
export interface FileGraph {
  list: string[];
  id: Map<string, number>;
  /** Name → the files (indices) that define it. */
  definers: Map<string, number[]>;
  /** The weight of a file's uses of `name` (per file defining it), or 0 when it links nothing. */
  useWeight: (name: string, count: number) => number;
  /** Sum of each file's link weights. */
  out: Float64Array;
  /** Links summed per pair of files. */
  from: Int32Array;
  to: Int32Array;
  weight: Float64Array;
}

/** Builds the graph of which files use which files' definitions. */
export function buildGraph(files: ReadonlyMap<string, FileTags>): FileGraph {
  const list = [...files.keys()];
  const id = new Map(list.map((f, i) => [f, i]));
  const n = list.length;
  const definers = new Map<string, number[]>();
  list.forEach((f, i) => {
    const seen = new Set<string>();
    for (const d of files.get(f)!.defs) {
      if (seen.has(d.name) || !linkable(d)) continue;
      seen.add(d.name);
      const at = definers.get(d.name);
      if (at) at.push(i);
      else definers.set(d.name, [i]);
    }
  });
  // How many files use each defined name: one most files use (`length`, `id`) links little.
  const users = new Map<string, number>();
  for (const tags of files.values())
    for (const name of Object.keys(tags.refs))
      if (definers.has(name)) users.set(name, (users.get(name) ?? 0) + 1);
  const useWeight = (name: string, count: number): number => {
    const at = definers.get(name);
    if (!at || at.length > MAX_DEFINERS) return 0;
    const rarity = Math.log(1 + n / (users.get(name) ?? 1));
    return nameWeight(name, at.length) * Math.sqrt(count) * rarity;
  };
  const out = new Float64Array(n);
  const fromList: number[] = [];
  const toList: number[] = [];
  const weightList: number[] = [];
  list.forEach((f, i) => {
    const toW = new Map<number, number>();
    const refs = files.get(f)!.refs;
    for (const name in refs) {
      const w = useWeight(name, refs[name]!);
      if (w === 0) continue;
      for (const j of definers.get(name)!) {
        if (j === i) continue;
        toW.set(j, (toW.get(j) ?? 0) + w);
        out[i]! += w;
      }
    }
    for (const [j, w] of toW) {
      fromList.push(i);
      toList.push(j);
      weightList.push(w);
    }
  });
  return {
    list,
    id,
    definers,
    useWeight,
    out,
    from: Int32Array.from(fromList),
    to: Int32Array.from(toList),
    weight: Float64Array.from(weightList),
  };
}

/** Ranks the definitions of `files` (path → tags) for `query`; `graph` is buildGraph(files), if made already. */
export function rankDefinitions(
  files: ReadonlyMap<string, FileTags>,
  query: RankQuery = {},
  graph: FileGraph = buildGraph(files),
): Ranking {
  const { list, id, definers, useWeight, out, from: pFrom, to: pTo, weight: pW } = graph;
  const n = list.length;
  if (n === 0) return { files: [], defs: [] };
  // Names the task mentions that look like code (`promptReady`, `repo_map`, `LRUCache`), not prose.
  const mentioned = new Set(identifiersIn(query.text ?? "").filter(looksLikeCode));

  const pRaw = personalisation(files, query);
  for (const name of mentioned)
    for (const j of definers.get(name) ?? []) pRaw.set(list[j]!, (pRaw.get(list[j]!) ?? 0) + 5);
  const p = new Float64Array(n);
  let pSum = 0;
  for (const [f, v] of pRaw) {
    p[id.get(f)!] = v;
    pSum += v;
  }
  if (pSum === 0) p.fill(1 / n);
  else for (let i = 0; i < n; i++) p[i]! /= pSum;

  let rank = Float64Array.from(p);
  for (let it = 0; it < ITERATIONS; it++) {
    const next = new Float64Array(n);
    let dangling = 0;
    for (let i = 0; i < n; i++) if (out[i] === 0) dangling += rank[i]!;
    for (let k = 0; k < pW.length; k++)
      next[pTo[k]!]! += (DAMPING * rank[pFrom[k]!]! * pW[k]!) / out[pFrom[k]!]!;
    for (let i = 0; i < n; i++) next[i]! += (1 - DAMPING + DAMPING * dangling) * p[i]!;
    let delta = 0;
    for (let i = 0; i < n; i++) delta += Math.abs(next[i]! - rank[i]!);
    rank = next;
    if (delta < 1e-9) break;
  }

  // A file's rank flows along its links to the definitions it uses; a file's own rank also
  // goes to its definitions (so a file the task names shows what it defines, linked to or not).
  const defScore = new Map<string, number>();
  const key = (i: number, name: string) => `${i}\u0000${name}`;
  // Files with next to no rank pass next to nothing on: skipped (most files, for one task).
  const floor = rank.reduce((m, r) => Math.max(m, r), 0) * 1e-4;
  list.forEach((f, i) => {
    if (out[i] === 0 || rank[i]! < floor) return;
    const refs = files.get(f)!.refs;
    for (const name in refs) {
      const w = useWeight(name, refs[name]!);
      if (w === 0) continue;
      const share = (rank[i]! * w) / out[i]!;
      for (const j of definers.get(name)!) {
        if (j === i) continue;
        const k = key(j, name);
        defScore.set(k, (defScore.get(k) ?? 0) + share);
      }
    }
  });
  const defs: RankedDefinition[] = [];
  list.forEach((f, i) => {
    const fileDefs = files.get(f)!.defs;
    const own = rank[i]! / Math.max(1, fileDefs.length);
    for (const d of fileDefs) {
      if (!linkable(d)) continue;
      const topLevel = d.depth === 0 ? 1 : 0.5;
      const score = (defScore.get(key(i, d.name)) ?? 0) + own * topLevel * (mentioned.has(d.name) ? 10 : 1);
      defs.push({ file: f, def: d, score });
    }
  });
  defs.sort((a, b) => b.score - a.score || a.file.localeCompare(b.file) || a.def.line - b.def.line);
  const ranked = list.map((file, i) => ({ file, rank: rank[i]! })).sort((a, b) => b.rank - a.rank);
  return { files: ranked, defs };
}
