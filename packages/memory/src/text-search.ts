// BM25 full-text search over the chunks' FTS5 index, planned so that a query costs about the
// same in a store of a hundred chunks or of a hundred thousand: only the rarest query terms are
// ranked (within a postings budget), paths are narrowed to their rare tokens, and a query of
// only common terms is ranked among its newest matches.
import type BetterSqlite3 from "better-sqlite3";
import { where } from "./chunk-filter-sql.js";
import type { Hit } from "./store.js";
import { contentWords } from "./text.js";
import type { ChunkFilter } from "./types.js";

/** Postings a search ranks at most (about): the rarest query terms within this budget. */
const MAX_POSTINGS = 4000;
/** Query terms ranked at most. */
const MAX_TERMS = 32;
/** Matches counted exactly for a document frequency; past that, estimated. */
const DF_SAMPLE = 5000;

/** One FTS5 phrase for a query word (quotes doubled). */
function ftsPhrase(word: string): string {
  return `"${word.replace(/"/g, '""')}"`;
}

export class TextSearch {
  /** Document frequency per phrase, and the number of chunks when it was counted. */
  private readonly df = new Map<string, { d: number; total: number }>();

  constructor(
    private readonly prep: (sql: string) => BetterSqlite3.Statement,
    /** Chunks in the store, kept current by the store. */
    private readonly totalChunks: () => number,
  ) {}

  search(query: string, filter: ChunkFilter, limit: number): Hit[] {
    const { terms, postings } = this.selective([...new Set(contentWords(query))]);
    if (terms.length === 0) return [];
    // A query of only common terms cannot rank all their chunks cheaply, nor usefully: it is
    // ranked among its most recent matches, about as many as a selective query reads. FTS5
    // walks a doclist newest first and stops at the limit; a rowid bound would not stop it.
    const recent = postings > 2 * MAX_POSTINGS ? MAX_POSTINGS : -1;
    const match = terms.map(ftsPhrase).join(" OR ");
    const w = where(filter, "c");
    // Rank inside FTS first (a materialized CTE), then filter: the planner would otherwise
    // test MATCH row by row. FTS5's own ORDER BY rank is the faster shape when all matches
    // are ranked.
    const ranked =
      recent > 0
        ? `SELECT rowid, rank FROM (SELECT rowid, bm25(chunks_fts) AS rank FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rowid DESC LIMIT ${recent}) ORDER BY rank LIMIT ?`
        : "SELECT rowid, bm25(chunks_fts) AS rank FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?";
    // The first row counts the matches the pool held (its rank column), so a pool that held
    // every match needs neither a count of its own nor a larger pool; the ranked rows follow.
    const sql = `WITH hits AS MATERIALIZED (${ranked})
      SELECT NULL AS id, count(*) AS rank FROM hits
      UNION ALL SELECT * FROM (SELECT c.id AS id, hits.rank AS rank FROM hits CROSS JOIN chunks c ON c.rowid = hits.rowid WHERE ${w.sql} ORDER BY hits.rank LIMIT ?)`;
    let rows: { id: string; rank: number }[] = [];
    for (let pool = limit * 4; ; pool *= 8) {
      rows = this.prep(sql).all(match, pool, ...w.params, limit) as typeof rows;
      const held = rows.shift()!.rank;
      if (rows.length >= limit || pool > 200_000 || (recent > 0 && pool >= recent)) break;
      // Fewer matches than the pool's size: all were ranked, a larger pool finds no more.
      if (held < pool) break;
      const total = (
        this.prep("SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH ?").get(match) as { n: number }
      ).n;
      if (total <= pool) break;
    }
    // bm25() is lower-is-better and negative; flip it.
    return rows.map((r) => ({ id: r.id, score: -r.rank }));
  }

  /**
   * Drops query terms found in most chunks: they add almost nothing to BM25 but make FTS5
   * score every chunk that holds them.
   */
  private selective(terms: string[]): { terms: string[]; postings: number } {
    const total = this.totalChunks();
    if (total < 1000 && terms.length <= MAX_TERMS) return { terms, postings: 0 };
    // A very long query keeps its first and last words.
    if (terms.length > 128) terms = [...terms.slice(0, 64), ...terms.slice(-64)];
    // No token can be common enough to drop in a small store.
    if (total > MAX_POSTINGS) terms = this.narrow(terms, total);
    // The rarest terms carry the query; terms in most chunks add cost, not ranking.
    const dfs = this.docFreqs(terms, total);
    const present = terms
      .map((t, i) => ({ t, d: dfs[i]! }))
      .filter((x) => x.d > 0)
      .sort((a, b) => a.d - b.d);
    // Ranking cost grows with the postings read: rarest first, within a postings budget
    // (always at least the rarest term, however common).
    const keep: string[] = [];
    let postings = 0;
    for (const x of present) {
      if (keep.length >= MAX_TERMS || (keep.length > 0 && postings + x.d > MAX_POSTINGS)) break;
      keep.push(x.t);
      postings += x.d;
    }
    return { terms: keep, postings };
  }

  /**
   * A word FTS5 splits into several tokens (a path, an identifier) is a phrase, which costs as
   * much as its most common token: "src/app/parser.ts" walks every chunk holding "src" and
   * "ts". Tokens at its ends far more common than its rarest token barely narrow the matches,
   * so the phrase keeps the span between its rarer tokens ("app parser").
   */
  private narrow(words: string[], total: number): string[] {
    const split = words.map((w) => w.split(/[^\p{L}\p{N}]+/u).filter(Boolean));
    const tokens = split.filter((t) => t.length > 1).flat();
    const dfs = this.docFreqs(tokens, total);
    const df = new Map(tokens.map((t, i) => [t, dfs[i]!]));
    const out = words.map((word, k) => {
      const t = split[k]!;
      if (t.length < 2) return word;
      const d = t.map((x) => df.get(x)!);
      const common = Math.max(MAX_POSTINGS, 2 * Math.min(...d));
      let a = 0;
      let b = t.length - 1;
      while (a < b && d[a]! > common) a++;
      while (b > a && d[b]! > common) b--;
      return a === 0 && b === t.length - 1 ? word : t.slice(a, b + 1).join(" ");
    });
    return [...new Set(out)];
  }

  /**
   * Documents holding each phrase (a word, or a word's tokens), cached: frequencies only grow
   * and only their order and size matter here, so a count is reused until the store has
   * doubled; a phrase found nowhere is asked again once the store has changed. The phrases
   * not cached are counted in one statement, each up to DF_SAMPLE matches; past that, the
   * frequency is estimated from how many recent chunks held the newest DF_SAMPLE matches.
   */
  private docFreqs(phrases: string[], total: number): number[] {
    if (this.df.size > 100_000) this.df.clear();
    const ask = [
      ...new Set(
        phrases.filter((p) => {
          const c = this.df.get(p);
          return !c || (c.d > 0 ? c.total * 2 <= total : c.total !== total);
        }),
      ),
    ];
    if (ask.length) {
      const counts = this.prep(
        `SELECT (SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH want.value LIMIT ${DF_SAMPLE})) FROM json_each(?) AS want ORDER BY want.key`,
      )
        .pluck()
        .all(JSON.stringify(ask.map(ftsPhrase))) as number[];
      ask.forEach((p, i) => {
        let d = counts[i]!;
        if (d >= DF_SAMPLE) {
          const r = this.prep(
            `SELECT min(rowid) AS lo, max(rowid) AS hi FROM (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rowid DESC LIMIT ${DF_SAMPLE})`,
          ).get(ftsPhrase(p)) as { lo: number; hi: number };
          d = Math.min(total, Math.round((DF_SAMPLE * total) / (r.hi - r.lo + 1)));
        }
        this.df.set(p, { d, total });
      });
    }
    return phrases.map((p) => this.df.get(p)!.d);
  }
}
