// AdaMEM: the memory itself. Chunks come in through `add` (scored, then placed in a layer by
// adaptive encoding), go out through `retrieve` (candidates from metadata, BM25 and vectors,
// fused, then a budgeted selection), are compressed with pointers to their originals, and can
// always be expanded back with `recall`. Every change is an event in the store's log.
import { randomBytes } from "node:crypto";
import { type Embedder, HashEmbedder } from "./embeddings.js";
import { ImportanceModel, type ScoreContext } from "./importance.js";
import { answerNoun } from "./question.js";
import { resolveRelativeDates } from "./relative-dates.js";
import { type RenderItem, renderItems } from "./render.js";
import { type Candidate, type SelectOptions, selectWithinBudget } from "./select.js";
import { SqliteStore } from "./sqlite-store.js";
import { makeStandIn, type Outliner, sentenceSummary } from "./stand-ins.js";
import type { Hit, MemoryStore } from "./store.js";
import { ExtractiveSummarizer, type Summarizer } from "./summarize.js";
import { contentWords, estimateTokens } from "./text.js";
import type {
  Chunk,
  ChunkFilter,
  Layer,
  MemoryEvent,
  MemoryEventInput,
  NewChunk,
  Snapshot,
} from "./types.js";
import { kindsOf } from "./wordnet.js";
import { LIVE_LAYERS, rememberFacts, type WorkspaceFact } from "./workspace-facts.js";

export interface LifecyclePolicy {
  /** Tokens of working memory; the bar to enter it rises as this fills. */
  workingBudget: number;
  /** Chunks kept in the short-term buffer before the least valuable move to long-term. */
  shortTermCapacity: number;
  /** Chunks longer than this are compressed when they leave short-term memory. */
  compressAbove: number;
  /** Target size of a summary (and the most a short stand-in takes), in tokens. */
  summaryTokens: number;
  /** Size of a chunk's short stand-in against the chunk. */
  shortRatio: number;
  /** Importance multiplier applied by `maintain` to chunks idle longer than idleAfterMs. */
  idleDecay: number;
  idleAfterMs: number;
  /** Long-term chunks idle this long with importance below archiveBelow are archived. */
  archiveAfterMs: number;
  archiveBelow: number;
  /** Archived chunks are deleted after this long; undefined: never deleted. */
  deleteArchivedAfterMs?: number;
}

export const DEFAULT_POLICY: LifecyclePolicy = {
  workingBudget: 8000,
  shortTermCapacity: 64,
  compressAbove: 200,
  summaryTokens: 60,
  shortRatio: 0.25,
  idleDecay: 0.9,
  idleAfterMs: 24 * 3600_000,
  archiveAfterMs: 7 * 24 * 3600_000,
  archiveBelow: 0.2,
};

export interface MemoryOptions {
  /** SQLite file; ":memory:" (the default) keeps nothing on disk. */
  path?: string;
  store?: MemoryStore;
  embedder?: Embedder;
  summarizer?: Summarizer;
  /** The session this memory writes to. */
  scope?: string;
  policy?: Partial<LifecyclePolicy>;
  clock?: () => number;
  importance?: ImportanceModel;
  /** Called with every event as it is committed. */
  onEvent?: (event: MemoryEvent) => void;
  /** Source outlines for code stand-ins (the agent's tree-sitter library, injected). */
  outline?: Outliner;
}

export interface RetrieveOptions {
  budget: number;
  filter?: ChunkFilter;
  /** Candidates taken from each source (BM25, vectors). */
  candidates?: number;
  select?: SelectOptions;
  /** Record the access (feedback for scoring). Default true. */
  touch?: boolean;
  /** Chunks that must not be returned (already in the context). */
  exclude?: Set<string>;
  /**
   * Weights of the candidate sources in the fused relevance; `kinds`: full-text hits for the
   * kinds of the thing a question asks for (see question.ts, wordnet.ts; default 0, off).
   */
  fusion?: { text?: number; vector?: number; meta?: number; kinds?: number };
  /** Relevance given to the turns next to the best hits, as a share of theirs (0: none). */
  neighbors?: number;
  /** How many of the best hits lend relevance to their neighbours. */
  neighborHits?: number;
  /** Give up the compressed forms (only full chunks). */
  fullOnly?: boolean;
  /** Search the vectors too (default true); false: full text and metadata only, cheaper. */
  vectors?: boolean;
  /** Relevance multiplier (1 + this) for turns spoken by someone the query names (0: none). */
  speakerBoost?: number;
  /** Tokens each item costs beyond its text (its label or pointer); default 4 for both forms. */
  overhead?: { full: number; compressed: number };
  /** Full-text hits the caller already found for this query and filter (not searched again). */
  textHits?: Hit[];
}

/** A context built from memory alone: the rendered text (see render.ts) and what is in it. */
export interface MemoryContext {
  text: string;
  items: RetrievedItem[];
  tokens: number;
}

export interface RetrievedItem {
  /** The chunk; its content is loaded only for items in full form. */
  chunk: Chunk;
  form: "full" | "compressed";
  /** The text to put in the context. */
  text: string;
  tokens: number;
  relevance: number;
}

export interface Retrieval {
  items: RetrievedItem[];
  tokens: number;
  candidates: number;
}

export interface Recall {
  chunk: Chunk;
  /** For a summary: the original chunks it stands for, expanded recursively. */
  originals: Chunk[];
}

export interface Learned {
  task: string;
  outcome: string;
  commands?: string[];
  /** Facts about the repository; a keyed fact replaces the older one with its key. */
  facts?: (string | WorkspaceFact)[];
}

/**
 * Characters of a chunk its vector is made from. A vector stands for what a text is about, and
 * the opening of a long tool output says that (a file's imports and first definitions, a log's
 * command); exact words anywhere in it are full text search's job. Bounded, so storing a step
 * costs the same for a 3 KB output and a 300 KB one.
 */
export const EMBED_CHARS = 2000;

function embeddable(text: string): string {
  return text.length > EMBED_CHARS ? text.slice(0, EMBED_CHARS) : text;
}

export type FeedbackKind = "used" | "unused" | "confirmed" | "corrected";

export function newId(): string {
  return `m${randomBytes(5).toString("hex")}`;
}

export function workspaceScope(workspace: string): string {
  return `ws:${workspace}`;
}

export class Memory {
  readonly store: MemoryStore;
  readonly embedder: Embedder;
  readonly summarizer: Summarizer;
  readonly policy: LifecyclePolicy;
  readonly scope: string;
  readonly importance: ImportanceModel;
  private readonly clock: () => number;
  private readonly onEvent: ((e: MemoryEvent) => void) | undefined;
  private readonly outline: Outliner | undefined;
  private goal = "";
  private goalWords = new Set<string>();
  step = 0;
  private workingTokens: number;
  private shortTermCount: number;

  constructor(options: MemoryOptions = {}) {
    this.embedder = options.embedder ?? new HashEmbedder();
    this.store =
      options.store ??
      new SqliteStore({ path: options.path ?? ":memory:", dimensions: this.embedder.dimensions });
    this.summarizer = options.summarizer ?? new ExtractiveSummarizer();
    this.policy = { ...DEFAULT_POLICY, ...options.policy };
    this.scope = options.scope ?? "default";
    this.clock = options.clock ?? Date.now;
    this.importance = options.importance ?? new ImportanceModel();
    this.onEvent = options.onEvent;
    this.outline = options.outline;
    this.workingTokens = this.store.tokens({ scope: this.scope, layers: ["working"] });
    this.shortTermCount = this.store.count({ scope: this.scope, layers: ["short_term"] });
  }

  close(): void {
    this.store.close();
  }

  /** Keeps the store's indexes quick to search; bounded work, meant for idle moments. */
  compact(): void {
    this.store.compact();
  }

  private commit(events: MemoryEventInput[], embeddings?: Map<string, Float32Array>): MemoryEvent[] {
    const done = this.store.append(events, embeddings);
    if (this.onEvent) for (const e of done) this.onEvent(e);
    return done;
  }

  private async embedOne(text: string): Promise<Float32Array> {
    if (this.embedder.embedSync) return this.embedder.embedSync(text);
    const [v] = await this.embedder.embed([text]);
    return v!;
  }

  private scoreContext(): ScoreContext {
    return { step: this.step, goalWords: this.goalWords };
  }

  /** Stores a chunk: scores it, then places it by adaptive encoding. */
  async add(input: NewChunk): Promise<Chunk> {
    const [chunk] = await this.addMany([input]);
    return chunk!;
  }

  /** Stores chunks in one transaction (a step's messages), each scored and placed as `add` does. */
  async addMany(inputs: NewChunk[]): Promise<Chunk[]> {
    const chunks: Chunk[] = [];
    const events: MemoryEventInput[] = [];
    const vectors = new Map<string, Float32Array>();
    for (const input of inputs) {
      const { chunk, event, vector } = await this.prepare(input);
      chunks.push(chunk);
      events.push(event);
      vectors.set(chunk.id, vector);
    }
    if (events.length === 0) return chunks;
    this.commit(events, vectors);
    this.rebalance();
    return chunks;
  }

  private async prepare(
    input: NewChunk,
  ): Promise<{ chunk: Chunk; event: MemoryEventInput; vector: Float32Array }> {
    const now = this.clock();
    const chunk: Chunk = {
      id: input.id ?? newId(),
      scope: input.scope ?? this.scope,
      type: input.type,
      content: input.content,
      createdAt: now,
      updatedAt: now,
      importance: 0,
      accessCount: 0,
      goals: input.goals ?? (this.goal ? [this.goal] : []),
      confidence: input.confidence ?? (input.type === "tool_result" || input.type === "user_input" ? 1 : 0.6),
      verification:
        input.verification ??
        (input.type === "tool_result" || input.type === "system_event" || input.type === "user_input"
          ? "verified"
          : "unverified"),
      tokens: estimateTokens(input.content),
      layer: "working",
      sources: input.sources ?? [],
      step: input.step ?? this.step,
      meta: input.meta ?? {},
      ...(input.parent ? { parent: input.parent } : {}),
    };
    chunk.importance = input.importance ?? this.importance.score(chunk, this.scoreContext());
    // A conversation turn's relative dates, resolved against its session's date (see relative-dates.ts).
    if (chunk.meta.date && chunk.meta.when === undefined) {
      const when = resolveRelativeDates(chunk.content, chunk.meta.date);
      if (when) chunk.meta = { ...chunk.meta, when };
    }
    // Adaptive encoding, part one: every chunk worth it gets its stand-in now (by content
    // type, whole units only), so that retrieval can choose between full and short at no cost.
    if (chunk.tokens > 12 && chunk.type !== "summary") {
      const short =
        input.short ??
        (await makeStandIn(chunk, {
          maxTokens: this.policy.summaryTokens,
          ratio: this.policy.shortRatio,
          ...(this.outline ? { outline: this.outline } : {}),
        }));
      if (short) {
        chunk.short = short;
        chunk.shortTokens = estimateTokens(short);
      }
    }
    const vector = await this.embedOne(embeddable(chunk.content));
    let layer: Layer = input.layer ?? this.encode(chunk);
    if (chunk.scope !== this.scope && !input.layer) layer = "long_term";
    chunk.layer = layer;
    const event: MemoryEventInput = {
      kind: "created",
      chunk,
      time: now,
      reason: `${chunk.type}, importance ${chunk.importance.toFixed(2)} → ${layer}`,
    };
    if (chunk.scope === this.scope) {
      if (layer === "working") this.workingTokens += chunk.tokens;
      if (layer === "short_term") this.shortTermCount++;
    }
    return { chunk, event, vector };
  }

  /** Adaptive encoding: the fuller working memory is, the higher the bar to enter it. */
  private encode(chunk: Chunk): Layer {
    const fill = Math.min(1, this.workingTokens / Math.max(1, this.policy.workingBudget));
    const bar = 0.2 + 0.6 * fill * fill;
    return chunk.importance >= bar ? "working" : "short_term";
  }

  /** Keeps working memory within its budget and the short-term buffer within its capacity. */
  private rebalance(): void {
    const now = this.clock();
    const events: MemoryEventInput[] = [];
    if (this.workingTokens > this.policy.workingBudget) {
      const working = this.store.list({ scope: this.scope, layers: ["working"], order: "oldest" });
      // Least valuable first; on ties, the oldest.
      const ranked = working
        .map((c) => ({ c, v: this.importance.score(c, this.scoreContext()) }))
        .sort((a, b) => a.v - b.v);
      for (const { c, v } of ranked) {
        if (this.workingTokens <= this.policy.workingBudget * 0.8) break;
        events.push({
          kind: "demoted",
          id: c.id,
          layer: "short_term",
          time: now,
          reason: `working memory over budget (${this.workingTokens}/${this.policy.workingBudget} tokens); importance ${v.toFixed(2)}`,
        });
        this.workingTokens -= c.tokens;
        this.shortTermCount++;
      }
    }
    if (events.length) this.commit(events);
    if (this.shortTermCount > this.policy.shortTermCapacity) {
      const short = this.store.list({ scope: this.scope, layers: ["short_term"], order: "oldest" });
      const ranked = short
        .map((c) => ({ c, v: this.importance.score(c, this.scoreContext()) }))
        .sort((a, b) => a.v - b.v);
      const out: MemoryEventInput[] = [];
      const excess = short.length - Math.floor(this.policy.shortTermCapacity * 0.75);
      for (const { c, v } of ranked.slice(0, Math.max(0, excess))) {
        out.push({
          kind: "demoted",
          id: c.id,
          layer: "long_term",
          time: now,
          reason: `short-term buffer full (${short.length}/${this.policy.shortTermCapacity}); importance ${v.toFixed(2)}`,
        });
        if (c.tokens > this.policy.compressAbove && !c.parent) this.compressSync(c, out, now);
      }
      this.shortTermCount = short.length - out.filter((e) => e.kind === "demoted").length;
      this.commitWithSummaries(out);
    }
  }

  /** Summaries made inline need their embeddings; find them among the events. */
  private commitWithSummaries(events: MemoryEventInput[]): void {
    if (events.length === 0) return;
    const vectors = new Map<string, Float32Array>();
    if (this.embedder.embedSync)
      for (const e of events)
        if (e.kind === "created")
          vectors.set(e.chunk.id, this.embedder.embedSync(embeddable(e.chunk.content)));
    this.commit(events, vectors);
  }

  private summaryChunk(originals: Chunk[], content: string, now: number): Chunk {
    return {
      id: newId(),
      scope: originals[0]?.scope ?? this.scope,
      type: "summary",
      content,
      createdAt: now,
      updatedAt: now,
      importance: Math.max(...originals.map((o) => o.importance)),
      accessCount: 0,
      goals: [...new Set(originals.flatMap((o) => o.goals))],
      confidence: Math.min(...originals.map((o) => o.confidence)),
      verification: originals.every((o) => o.verification === "verified") ? "verified" : "unverified",
      tokens: estimateTokens(content),
      layer: "long_term",
      sources: originals.map((o) => o.id),
      ...(originals[0]?.step !== undefined ? { step: originals[0].step } : {}),
      meta: { summarizer: "extractive" },
    };
  }

  private compressSync(c: Chunk, out: MemoryEventInput[], now: number): void {
    // The chunk's own stand-in (made by content type) is its summary; prose without one gets its key sentences.
    const text = c.short ?? sentenceSummary(c.content, this.policy.summaryTokens);
    if (!text) return;
    const summary = this.summaryChunk([c], text, now);
    out.push({
      kind: "created",
      chunk: summary,
      time: now,
      reason: `summary of ${c.id} (${c.tokens} tokens)`,
    });
    out.push({
      kind: "compressed",
      id: c.id,
      summaryId: summary.id,
      time: now,
      reason: `${c.tokens} tokens > ${this.policy.compressAbove}: summarized in ${summary.tokens}`,
    });
  }

  /** Compresses chunks into one summary (with the configured summarizer) that points back to them. */
  async compress(ids: string[], reason = "compressed on request"): Promise<Chunk> {
    const originals = this.store.getMany(ids);
    if (originals.length === 0) throw new Error(`no such chunks: ${ids.join(", ")}`);
    const now = this.clock();
    const text = await this.summarizer.summarize(
      originals.map((o) => o.content),
      this.policy.summaryTokens * Math.min(4, originals.length),
    );
    const summary = this.summaryChunk(originals, text, now);
    summary.meta = { summarizer: this.summarizer.name };
    const events: MemoryEventInput[] = [{ kind: "created", chunk: summary, time: now, reason }];
    for (const o of originals) {
      events.push({ kind: "compressed", id: o.id, summaryId: summary.id, time: now, reason });
      if (o.layer === "working" || o.layer === "short_term") {
        events.push({
          kind: "demoted",
          id: o.id,
          layer: "long_term",
          time: now,
          reason: `${reason}: original moved out`,
        });
        if (o.scope === this.scope) {
          if (o.layer === "working") this.workingTokens -= o.tokens;
          else this.shortTermCount--;
        }
      }
    }
    this.commit(events, new Map([[summary.id, await this.embedOne(text)]]));
    return summary;
  }

  /** A chunk, and for a summary the originals it stands for (recursively). Logged as recalled. */
  recall(id: string): Recall | undefined {
    const chunk = this.store.get(id);
    if (!chunk) return undefined;
    const originals: Chunk[] = [];
    const seen = new Set<string>([id]);
    let frontier = chunk.sources;
    while (frontier.length) {
      const next: string[] = [];
      for (const c of this.store.getMany(frontier.filter((s) => !seen.has(s)))) {
        seen.add(c.id);
        if (c.type === "summary" && c.sources.length) next.push(...c.sources);
        else originals.push(c);
      }
      frontier = next;
    }
    const now = this.clock();
    this.commit([
      {
        kind: "recalled",
        id,
        time: now,
        reason: chunk.sources.length ? "expanded summary" : "recalled by id",
      },
    ]);
    return { chunk, originals };
  }

  /** Candidates from metadata, BM25 and vectors, fused; then a budgeted selection. */
  async retrieve(query: string, options: RetrieveOptions): Promise<Retrieval> {
    const filter: ChunkFilter = { scope: this.scope, ...options.filter };
    const k = options.candidates ?? Math.min(150, Math.max(40, Math.ceil(options.budget / 12)));
    const scopes =
      filter.scope === undefined ? [this.scope] : Array.isArray(filter.scope) ? filter.scope : [filter.scope];
    const fw = { text: 1, vector: 0.2, meta: 0.05, kinds: 0, ...options.fusion };
    const lists: { w: number; hits: { id: string; score: number }[] }[] = [];
    lists.push({ w: fw.text, hits: options.textHits ?? this.store.searchText(query, filter, k) });
    // The kinds of what the question asks for (its answer's words, which the question lacks).
    const noun = fw.kinds > 0 ? answerNoun(query) : undefined;
    const kinds = noun ? kindsOf(noun) : [];
    if (kinds.length) {
      // Each kind on its own, a turn scored by the best kind it names: one specific kind
      // ("position") says more than a common one ("work") that many turns hold.
      const best = new Map<string, number>();
      for (const kind of kinds)
        for (const h of this.store.searchText(kind, filter, k))
          if (h.score > (best.get(h.id) ?? 0)) best.set(h.id, h.score);
      lists.push({ w: fw.kinds, hits: [...best].map(([id, score]) => ({ id, score })) });
    }
    if (options.vectors !== false) {
      const qv = await this.embedOne(query);
      for (const s of scopes)
        lists.push({ w: fw.vector, hits: this.store.searchVector(qv, s, Math.min(k, 100), filter) });
    }
    // Metadata: the few most important chunks always compete (goal, constraints, facts).
    lists.push({
      w: fw.meta,
      hits: this.store
        .list({ ...filter, order: "importance", limit: 8, content: false })
        .map((c) => ({ id: c.id, score: c.importance })),
    });
    // Fusion by normalized scores (not ranks): a weak 50th hit must not look half as good as
    // the best one, or cheap, barely related chunks win the budget.
    const fused = new Map<string, number>();
    for (const { w, hits } of lists) {
      const top = Math.max(1e-9, ...hits.map((h) => h.score));
      for (const h of hits) fused.set(h.id, (fused.get(h.id) ?? 0) + (w * Math.max(0, h.score)) / top);
    }
    // Candidates without their content: only the chosen ones (and new compressed forms) need it.
    let chunks = this.store.getMany([...fused.keys()], { content: false });
    // In a conversation, what a question asks about a person is most often said by that person.
    const named = options.speakerBoost ?? 0.3;
    if (named > 0)
      for (const c of chunks) {
        const sp = c.meta.speaker;
        if (sp && sp.length > 1 && query.includes(sp)) fused.set(c.id, (fused.get(c.id) ?? 0) * (1 + named));
      }
    // Neighbours of the best hits: an answer often sits in the turn next to the match.
    const near = options.neighbors ?? 0.6;
    if (near > 0) {
      const max0 = Math.max(1e-9, ...fused.values());
      const top = chunks
        .filter((c) => c.step !== undefined)
        .sort((a, b) => (fused.get(b.id) ?? 0) - (fused.get(a.id) ?? 0))
        .slice(0, options.neighborHits ?? 30);
      const extra: Chunk[] = [];
      // One query for all neighbours.
      const steps = [...new Set(top.flatMap((c) => [c.step! - 1, c.step!, c.step! + 1]))];
      const byStep = new Map<number, Chunk[]>();
      for (const n of this.store.list({ ...filter, stepIn: steps, content: false })) {
        if (n.step === undefined) continue;
        const list = byStep.get(n.step) ?? [];
        list.push(n);
        byStep.set(n.step, list);
      }
      for (const c of top) {
        const base = (fused.get(c.id) ?? 0) / max0;
        const around = [c.step! - 1, c.step!, c.step! + 1].flatMap((st) => byStep.get(st) ?? []);
        for (const n of around) {
          if (n.id === c.id) continue;
          const add = near * base * max0;
          if (!fused.has(n.id)) extra.push(n);
          if ((fused.get(n.id) ?? 0) < add) fused.set(n.id, add);
        }
      }
      const seen = new Set(chunks.map((c) => c.id));
      for (const c of extra) {
        if (seen.has(c.id)) continue;
        seen.add(c.id);
        chunks.push(c);
      }
    }
    for (const id of options.exclude ?? []) fused.delete(id);
    // A summary whose originals are all candidates adds nothing they cannot give (in full or
    // compressed); it would only crowd them out as a near-duplicate.
    for (const c of chunks)
      if (c.type === "summary" && c.sources.length > 0 && c.sources.every((id) => fused.has(id)))
        fused.delete(c.id);
    chunks = chunks.filter((c) => fused.has(c.id));
    const ids = chunks.map((c) => c.id);
    const bits = this.store.signBits(ids);
    const max = Math.max(1e-9, ...fused.values());
    const byId = new Map(chunks.map((c) => [c.id, c]));
    const cands: Candidate[] = [];
    const over = options.overhead ?? { full: 4, compressed: 4 };
    for (const c of chunks) {
      const rel = (fused.get(c.id) ?? 0) / max;
      const cand: Candidate = {
        id: c.id,
        relevance: rel,
        importance: c.importance,
        tokens: c.tokens + over.full,
      };
      const b = bits.get(c.id);
      if (b) cand.bits = b;
      if (!options.fullOnly && c.shortTokens !== undefined)
        cand.compressedTokens = c.shortTokens + over.compressed;
      cands.push(cand);
    }
    const picked = selectWithinBudget(cands, options.budget, options.select);
    const content = this.store.contents(picked.filter((p) => p.form === "full").map((p) => p.id));
    const shorts = this.store.shorts(picked.filter((p) => p.form !== "full").map((p) => p.id));
    const items: RetrievedItem[] = picked.map((p) => {
      const meta = byId.get(p.id)!;
      const text = p.form === "full" ? (content.get(p.id) ?? "") : (shorts.get(p.id) ?? "");
      const chunk = { ...meta, content: content.get(p.id) ?? "" };
      return { chunk, form: p.form, text, tokens: p.tokens, relevance: (fused.get(p.id) ?? 0) / max };
    });
    if (options.touch !== false) this.touched(items, query);
    return { items, tokens: items.reduce((n, i) => n + i.tokens, 0), candidates: cands.length };
  }

  /**
   * The context memory gives for `query` within `options.budget` tokens, rendered as a model
   * reads it: in order, under date headers, stand-ins with their recall pointer.
   */
  async context(query: string, options: RetrieveOptions): Promise<MemoryContext> {
    // Relevance first, cost a little (costExponent 0.2): a context that must carry the answer
    // is better served by the most relevant turns than by many cheap ones.
    const r = await this.retrieve(query, {
      overhead: { full: 1, compressed: 6 },
      // A question for a date is answered by the date of the turn that matches it (its
      // header), not by the reply next to it: the budget goes to more distinct matches.
      ...(asksForDate(query) ? { neighbors: 0 } : {}),
      ...options,
      // What a "What is X's job?" question asks for is named by its kinds ("position").
      fusion: { kinds: 0.5, ...options.fusion },
      select: { costExponent: 0.2, ...options.select },
    });
    const items = [...r.items];
    const pieces = items.map(renderItemOf);
    // Date headers are not in the selection's costs: drop the last picked (least gain per
    // token) until the rendered text fits.
    let text = renderItems(pieces);
    while (pieces.length && estimateTokens(text) > options.budget) {
      pieces.pop();
      items.pop();
      text = renderItems(pieces);
    }
    return { text, items, tokens: estimateTokens(text) };
  }

  /** Feedback: a later step used the chunk, the user confirmed it, or corrected it. */
  feedback(id: string, kind: FeedbackKind): void {
    this.feedbackMany([{ id, kind }]);
  }

  /** Several chunks' feedback (one step's judgement) in one transaction; each chunk once. */
  feedbackMany(items: readonly { id: string; kind: FeedbackKind }[]): void {
    const kinds = new Map<string, FeedbackKind>();
    for (const i of items) if (!kinds.has(i.id)) kinds.set(i.id, i.kind);
    if (kinds.size === 0) return;
    const now = this.clock();
    const events: MemoryEventInput[] = [];
    for (const c of this.store.getMany([...kinds.keys()])) {
      const kind = kinds.get(c.id)!;
      const chunk = { ...c };
      if (kind === "confirmed" || kind === "corrected") {
        const verification = kind;
        const confidence = kind === "confirmed" ? 1 : 0.2;
        events.push({
          kind: "verified",
          id: c.id,
          verification,
          confidence,
          time: now,
          reason: `user ${kind} it`,
        });
        chunk.verification = verification;
      } else if (kind === "used") {
        events.push({ kind: "accessed", id: c.id, time: now, reason: "referenced by a later step" });
        chunk.accessCount++;
      }
      this.importance.learn(chunk, this.scoreContext(), kind !== "unused" && kind !== "corrected");
      const importance = this.importance.score(chunk, this.scoreContext());
      if (Math.abs(importance - chunk.importance) > 1e-4)
        events.push({ kind: "scored", id: c.id, importance, time: now, reason: `feedback: ${kind}` });
    }
    if (events.length) this.commit(events);
  }

  /** Sets the goal; when it changes, live chunks are scored again against it. */
  setGoal(goal: string): number {
    if (goal === this.goal) return 0;
    this.goal = goal;
    this.goalWords = new Set(contentWords(goal));
    return this.rescore("goal changed");
  }

  rescore(reason: string): number {
    const now = this.clock();
    const events: MemoryEventInput[] = [];
    for (const c of this.store.list({ scope: this.scope, layers: ["working", "short_term", "long_term"] })) {
      const importance = this.importance.score(c, this.scoreContext());
      if (Math.abs(importance - c.importance) > 0.01)
        events.push({ kind: "scored", id: c.id, importance, time: now, reason });
    }
    this.commit(events);
    return events.length;
  }

  /** Archives a chunk: kept, with the reason, but out of the live layers. */
  archive(id: string, reason: string): void {
    const c = this.store.get(id);
    if (!c || c.layer === "archived") return;
    if (c.scope === this.scope) {
      if (c.layer === "working") this.workingTokens -= c.tokens;
      if (c.layer === "short_term") this.shortTermCount--;
    }
    this.commit([{ kind: "archived", id, layer: "archived", time: this.clock(), reason }]);
  }

  /** Lifecycle: idle decay, archiving, and (only if the policy says so) deletion. */
  maintain(): { decayed: number; archived: number; deleted: number } {
    const now = this.clock();
    const p = this.policy;
    const events: MemoryEventInput[] = [];
    let decayed = 0;
    let archived = 0;
    let deleted = 0;
    for (const c of this.store.list({ layers: ["short_term", "long_term", "archived"] })) {
      const idle = now - (c.lastAccess ?? c.createdAt);
      if (c.layer === "archived") {
        if (p.deleteArchivedAfterMs !== undefined && idle > p.deleteArchivedAfterMs) {
          events.push({
            kind: "deleted",
            id: c.id,
            time: now,
            reason: `archived and idle ${Math.round(idle / 1000)}s`,
          });
          deleted++;
        }
        continue;
      }
      let importance = c.importance;
      if (idle > p.idleAfterMs) {
        importance = Math.round(c.importance * p.idleDecay * 1e4) / 1e4;
        events.push({
          kind: "scored",
          id: c.id,
          importance,
          time: now,
          reason: `idle decay after ${Math.round(idle / 1000)}s`,
        });
        decayed++;
      }
      if (c.layer === "long_term" && idle > p.archiveAfterMs && importance < p.archiveBelow) {
        events.push({
          kind: "archived",
          id: c.id,
          layer: "archived",
          time: now,
          reason: `idle and importance ${importance.toFixed(2)} < ${p.archiveBelow}`,
        });
        archived++;
      }
    }
    this.commit(events);
    return { decayed, archived, deleted };
  }

  /** Keeps what a finished task taught, per workspace: outcome, commands that worked, facts. */
  async learn(workspace: string, learned: Learned): Promise<Chunk[]> {
    const scope = workspaceScope(workspace);
    const out: Chunk[] = [];
    const base = {
      scope,
      layer: "long_term" as const,
      verification: "verified" as const,
      goals: [learned.task],
    };
    out.push(
      await this.add({
        ...base,
        type: "fact",
        content: `Task: ${learned.task}\nOutcome: ${learned.outcome}`,
        meta: { kind: "outcome" },
      }),
    );
    const facts: WorkspaceFact[] = [
      ...(learned.commands ?? []).map((c) => ({
        key: `command:${c}`,
        text: `Command that worked: ${c}`,
        kind: "command",
      })),
      ...(learned.facts ?? []).map((f) => (typeof f === "string" ? { key: `fact:${f}`, text: f } : f)),
    ];
    out.push(...(await rememberFacts(this, scope, facts, base)));
    return out;
  }

  /** What earlier tasks in this workspace taught that bears on `task`. */
  async recallWorkspace(
    workspace: string,
    task: string,
    budget: number,
    options: Pick<RetrieveOptions, "touch"> = {},
  ): Promise<Retrieval> {
    return this.retrieve(task, {
      budget,
      filter: { scope: workspaceScope(workspace), layers: [...LIVE_LAYERS] },
      fullOnly: true,
      ...options,
    });
  }

  /**
   * Records that `items` were retrieved for `query` (their `accessed` events): what `retrieve`
   * does unless told `touch: false`, for a caller that writes it later (after a request left).
   */
  touched(items: readonly RetrievedItem[], query: string): void {
    if (items.length === 0) return;
    const now = this.clock();
    this.commit(
      items.map((i) => ({
        kind: "accessed" as const,
        id: i.chunk.id,
        time: now,
        reason: `retrieved for "${query.slice(0, 60)}"`,
      })),
    );
  }

  snapshot(): Snapshot {
    return this.store.snapshot();
  }

  /** Rebuilds a memory from a snapshot plus the events logged after it. */
  static async replay(
    snapshot: Snapshot,
    events: MemoryEvent[],
    options: MemoryOptions = {},
  ): Promise<Memory> {
    const memory = new Memory(options);
    const embed = async (chunks: Chunk[]) => {
      const map = new Map<string, Float32Array>();
      const vs = await memory.embedder.embed(chunks.map((c) => embeddable(c.content)));
      for (const [i, c] of chunks.entries()) map.set(c.id, vs[i]!);
      return map;
    };
    memory.store.loadSnapshot(snapshot, await embed(snapshot.chunks));
    const later = events.filter((e) => e.seq > snapshot.seq);
    const created = later.flatMap((e) => (e.kind === "created" ? [e.chunk] : []));
    memory.store.append(later, await embed(created));
    return memory;
  }

  stats(): Record<string, unknown> {
    const layers: Record<string, number> = {};
    for (const l of ["working", "short_term", "long_term", "archived"] as const)
      layers[l] = this.store.count({ layers: [l] });
    return {
      chunks: this.store.count(),
      tokens: this.store.tokens(),
      layers,
      summaries: this.store.count({ types: ["summary"] }),
      events: this.store.lastSeq(),
    };
  }
}

/** A question whose answer is a date or time ("When did…", "What year…", "How long ago…"). */
export function asksForDate(query: string): boolean {
  return /^\s*(when\b|what (day|date|year|month|time)\b|which (day|date|year|month)\b|how long ago\b)/i.test(
    query,
  );
}

function renderItemOf(i: RetrievedItem): RenderItem {
  return {
    id: i.chunk.id,
    text: withWhen(i.text, i.chunk.meta.when),
    form: i.form,
    ...(i.chunk.step !== undefined ? { step: i.chunk.step } : {}),
    ...(i.chunk.meta.date ? { date: i.chunk.meta.date } : {}),
  };
}

/** A turn's text with the resolved dates of the relative ones it holds (see relative-dates.ts). */
function withWhen(text: string, when: string | undefined): string {
  if (!when) return text;
  const lower = text.toLowerCase();
  const held = when.split("; ").filter((w) => lower.includes(w.slice(0, w.indexOf(" = "))));
  return held.length ? `${text} [${held.join("; ")}]` : text;
}
