// Importance = rules (source weight, information density, recency, feedback) fused with a
// small logistic regression that learns online from which chunks later turns actually used.

import { density } from "./text.js";
import type { Chunk, ChunkType } from "./types.js";

/** system > user's input > successful tool result > model reasoning > tool error. */
export const SOURCE_WEIGHT: Record<ChunkType, number> = {
  system_event: 1,
  user_input: 0.9,
  fact: 0.85,
  tool_result: 0.7,
  summary: 0.6,
  tool_call: 0.5,
  agent_response: 0.45,
  thought: 0.35,
  // A reasoning model's thinking: its own, unchecked (002 §6: the model's reasoning ranks low,
  // so a wrong idea of its is not recalled over what the tools showed).
  agent_reasoning: 0.3,
};
const TOOL_ERROR_WEIGHT = 0.25;

export interface ScoreContext {
  /** Current step (or turn) number, for recency. */
  step: number;
  /** Words of the current goal, for relevance. */
  goalWords?: Set<string>;
  /** Per-step decay rate of recency. */
  decay?: number;
}

export const FEATURES = ["bias", "source", "density", "recency", "feedback", "goal"] as const;

export function features(chunk: Chunk, ctx: ScoreContext): number[] {
  const isError = chunk.type === "tool_result" && chunk.meta.error === "1";
  const source = isError ? TOOL_ERROR_WEIGHT : SOURCE_WEIGHT[chunk.type];
  const age = Math.max(0, ctx.step - (chunk.step ?? ctx.step));
  const recency = Math.exp(-(ctx.decay ?? 0.05) * age);
  const fb = chunk.verification === "confirmed" ? 1 : chunk.verification === "corrected" ? -1 : 0;
  const feedback = Math.tanh(chunk.accessCount / 3) * 0.7 + fb * 0.3;
  const goal = ctx.goalWords && ctx.goalWords.size > 0 ? goalMatch(chunk, ctx.goalWords) : 0;
  return [1, source, densityOf(chunk), recency, feedback, goal];
}

/**
 * Share of the goal's words a chunk holds: a pure function of its content and the goal, so
 * it is computed once per chunk per goal (scoring runs again at every rebalance and feedback).
 */
const goalCache = new WeakMap<Set<string>, Map<string, number>>();
function goalMatch(chunk: Chunk, goalWords: Set<string>): number {
  let byChunk = goalCache.get(goalWords);
  if (!byChunk) {
    byChunk = new Map();
    goalCache.set(goalWords, byChunk);
  }
  const known = byChunk.get(chunk.id);
  if (known !== undefined) return known;
  const hit = goalWordsIn(chunk.content.toLowerCase(), goalWords);
  const goal = Math.min(1, hit / Math.min(5, goalWords.size));
  if (byChunk.size > 50_000) byChunk.clear();
  // Metadata read without its content is not the chunk's answer.
  if (chunk.content) byChunk.set(chunk.id, goal);
  return goal;
}

const WORD_CHAR = /[\p{L}\p{N}_]/u;
const SINGLE_WORD = /^[\p{L}\p{N}_]+$/u;

/** Whether the code point ending just before `i` (a surrogate pair counts as one) is a word character. */
function wordCharBefore(text: string, i: number): boolean {
  if (i <= 0) return false;
  const low = text.charCodeAt(i - 1);
  const start = low >= 0xdc00 && low <= 0xdfff && i >= 2 ? i - 2 : i - 1;
  return WORD_CHAR.test(String.fromCodePoint(text.codePointAt(start)!));
}

function wordCharAt(text: string, i: number): boolean {
  return i < text.length && WORD_CHAR.test(String.fromCodePoint(text.codePointAt(i)!));
}

/**
 * How many of the goal's words are among the text's words (maximal runs of letters, digits
 * and _), each counted once: found with indexOf and a check of the characters around each
 * occurrence, instead of splitting a large tool output into thousands of word strings.
 */
export function goalWordsIn(lower: string, goalWords: Set<string>): number {
  let hit = 0;
  for (const g of goalWords) {
    if (!SINGLE_WORD.test(g)) continue; // a word with . / - inside is never one run
    for (let at = lower.indexOf(g); at !== -1; at = lower.indexOf(g, at + 1))
      if (!wordCharBefore(lower, at) && !wordCharAt(lower, at + g.length)) {
        hit++;
        break;
      }
  }
  return hit;
}

/** Density is a pure function of the content: computed once per chunk (bounded cache). */
const densityCache = new Map<string, number>();
function densityOf(chunk: Chunk): number {
  let d = densityCache.get(chunk.id);
  if (d === undefined) {
    d = density(chunk.content).score;
    if (densityCache.size > 50_000) densityCache.clear();
    densityCache.set(chunk.id, d);
  }
  return d;
}

export function ruleScore(f: number[]): number {
  const [, source = 0, dens = 0, recency = 0, feedback = 0, goal = 0] = f;
  const s = 0.35 * source + 0.2 * dens + 0.2 * recency + 0.1 * goal + 0.15 * (feedback + 1) * 0.5;
  return Math.max(0, Math.min(1, s));
}

/** Logistic regression with plain SGD updates. Starts close to the rules, then learns. */
export class OnlineLogistic {
  weights: number[];
  constructor(
    weights?: number[],
    private readonly rate = 0.1,
    private readonly l2 = 1e-3,
  ) {
    this.weights = weights ?? [-2.2, 1.8, 1.2, 1.5, 1.2, 1.0];
  }

  predict(f: number[]): number {
    let z = 0;
    for (let i = 0; i < f.length; i++) z += (this.weights[i] ?? 0) * f[i]!;
    return 1 / (1 + Math.exp(-z));
  }

  /** One step towards `label` (1: later turns used the chunk, 0: they did not). */
  update(f: number[], label: 0 | 1): void {
    const err = label - this.predict(f);
    for (let i = 0; i < f.length; i++) {
      const w = this.weights[i] ?? 0;
      this.weights[i] = w + this.rate * (err * f[i]! - this.l2 * w);
    }
  }
}

export class ImportanceModel {
  constructor(
    readonly learned = new OnlineLogistic(),
    /** Share of the learned model in the fused score. */
    readonly mix = 0.4,
  ) {}

  score(chunk: Chunk, ctx: ScoreContext): number {
    const f = features(chunk, ctx);
    const s = (1 - this.mix) * ruleScore(f) + this.mix * this.learned.predict(f);
    return Math.round(s * 1e4) / 1e4;
  }

  learn(chunk: Chunk, ctx: ScoreContext, used: boolean): void {
    this.learned.update(features(chunk, ctx), used ? 1 : 0);
  }
}
