// Writing the ranked definitions as a map that fits a token budget: files in rank order, each
// with its best definitions' signatures (in line order), as many as fit.
//   packages/agent/src/tools/grep.ts
//     42│ export async function grepFiles(pattern: string, …)
import type { RankedDefinition, Ranking } from "./rank.js";

/** Characters per token of the estimate: low on purpose, as in context-window.ts (code tokenizes densely). */
export const MAP_CHARS_PER_TOKEN = 3;
/** Definitions shown per file at most: a map shows where things are, not whole outlines. */
const MAX_DEFS_PER_FILE = 12;
/**
 * The share of the budget kept for a tail of further files named by path alone: a file the task
 * points at is worth naming even without room for its definitions (on real commits this named
 * more of the files changed than more definitions of the top files did: bench/repo-map.mjs, 0.5 over 0.3).
 */
const PATHS_ONLY_SHARE = 0.5;
/** Signatures are clipped to this many characters in the map. */
const MAX_SIGNATURE_CHARS = 100;

export interface RenderedMap {
  text: string;
  /** The files named, in the order shown. */
  files: string[];
  /** Definitions shown. */
  definitions: number;
  /** Estimated tokens of `text`. */
  tokens: number;
}

function defLine(line: number, signature: string): string {
  const sig =
    signature.length > MAX_SIGNATURE_CHARS ? `${signature.slice(0, MAX_SIGNATURE_CHARS - 1)}…` : signature;
  return `  ${line}│ ${sig}`;
}

/** The map of `ranking` within `tokens` (estimated), best-ranked definitions first. */
export function renderMap(ranking: Ranking, tokens: number): RenderedMap {
  const full = tokens * MAP_CHARS_PER_TOKEN;
  let budget = full * (1 - PATHS_ONLY_SHARE);
  const chosen = new Map<string, { line: number; text: string }[]>();
  let used = 0;
  let misses = 0;
  const take = (file: string, line?: number, signature?: string): boolean => {
    const have = chosen.get(file);
    const cost =
      (have ? 0 : file.length + 1) + (line !== undefined ? defLine(line, signature ?? "").length + 1 : 0);
    if (used + cost > budget) return false;
    used += cost;
    const list = have ?? [];
    if (line !== undefined) list.push({ line, text: defLine(line, signature ?? "") });
    if (!have) chosen.set(file, list);
    return true;
  };
  // First the files in rank order, each with its best definition, in up to half the budget:
  // a file the task points at is named even when what it defines ranks low (a test file).
  let best = ranking.best;
  if (!best) {
    const first = new Map<string, RankedDefinition>();
    for (const r of ranking.defs) if (r.score > 0 && !first.has(r.file)) first.set(r.file, r);
    best = (file) => first.get(file);
  }
  const key = (r: RankedDefinition) => `${r.file}\u0000${r.def.line}\u0000${r.def.name}`;
  const taken = new Set<string>();
  for (const f of ranking.files) {
    if (f.rank <= 0 || used > budget / 2) break;
    const r = best(f.file);
    if (r ? take(f.file, r.def.line, r.def.signature) : take(f.file)) {
      if (r) taken.add(key(r));
    } else if (++misses > 50) break;
  }
  // Then the definitions by score, in the files named or new ones, until the budget is full.
  misses = 0;
  for (const r of ranking.defs) {
    if (r.score <= 0) break;
    if (taken.has(key(r)) || (chosen.get(r.file)?.length ?? 0) >= MAX_DEFS_PER_FILE) continue;
    if (take(r.file, r.def.line, r.def.signature)) misses = 0;
    else if (++misses > 50) break;
  }
  // Then further files by rank, by path alone, in what is left.
  budget = full;
  misses = 0;
  for (const f of ranking.files) {
    if (f.rank <= 0) break;
    if (chosen.has(f.file)) continue;
    if (!take(f.file) && ++misses > 50) break;
  }
  // Shown in rank order of files; definitions in line order within a file.
  const order = ranking.files.map((f) => f.file).filter((f) => chosen.has(f));
  const lines: string[] = [];
  let definitions = 0;
  for (const f of order) {
    lines.push(f);
    const defs = chosen.get(f)!.sort((a, b) => a.line - b.line);
    definitions += defs.length;
    for (const d of defs) lines.push(d.text);
  }
  const text = lines.join("\n");
  return { text, files: order, definitions, tokens: Math.ceil(text.length / MAP_CHARS_PER_TOKEN) };
}
