// Automatic feedback for the learned importance model. After each model response, chunks the
// model was shown and actually referenced (a distinctive path, identifier, number or id of
// theirs appears in its text or tool-call arguments) gain ("used"); retrieved chunks it ignored
// lose ("unused", once per chunk). A user reply that corrects the previous answer marks it "corrected", one that
// confirms it "confirmed". Work per step is bounded: at most MAX_JUDGED chunks, keys cached.
import type { Message } from "@hands/llm";
import type { Memory } from "./memory.js";

/** A chunk the model was shown at a step, with the text it saw. */
export interface ShownChunk {
  id: string;
  text: string;
  /** Chosen by retrieval (a memory note), not sent for recency: only these can be "unused". */
  retrieved: boolean;
}

/** What one step's context held. */
export interface StepView {
  shown: ShownChunk[];
  /** Text always in the context (system prompt, task, preamble): sharing its words proves nothing. */
  fixed: string[];
}

export interface AddedMessage {
  /** The chunk id the message is stored under. */
  id: string;
  message: Message;
}

/** The hook the context assembler calls once a step's new messages are stored. */
export interface ContextFeedback {
  /** `previous`: what the model was shown before producing `added` (its response, tool results, user replies). */
  observe(previous: StepView | undefined, added: readonly AddedMessage[]): void;
}

/** Shown chunks judged per step, notes first. */
export const MAX_JUDGED = 32;
/** A key found in more shown chunks than this is too common to credit any of them. */
const MAX_SHARING = 3;
/** Characters of a text scanned for keys (tool outputs can be huge). */
const SCAN_CHARS = 20_000;
const MEMORY_ID = /\bm[0-9a-f]{10}\b/g;
const WORD = /[A-Za-z0-9_][\w./:-]*[A-Za-z0-9_]/g;
const FILE_NAME = /^[A-Za-z][\w-]+\.[A-Za-z][A-Za-z0-9]{0,5}$/;

/** Words that point at something specific: paths, file names, identifiers, numbers, ids. */
export function referenceKeys(text: string, out = new Set<string>()): Set<string> {
  for (const w of text.slice(0, SCAN_CHARS).match(WORD) ?? []) {
    if (w.length < 3) continue;
    const distinctive =
      /[/_]/.test(w) || // paths, snake_case, SCREAMING_CASE
      /[a-z][A-Z]/.test(w) || // camelCase
      /\d/.test(w) || // numbers of 3+ characters, versions, dates, ids
      FILE_NAME.test(w);
    if (distinctive) out.add(w.toLowerCase());
  }
  return out;
}

const CORRECTION =
  /^(no\b|nope\b|wrong\b|incorrect\b|not quite\b|not right\b|(that|this|it)('?s| is| was) (not right|wrong|incorrect|not correct|not what)|you('re| are) wrong|(that|it) (doesn'?t|didn'?t|does not|did not) work|(it )?still (fails|failing|broken|doesn'?t work))/;
const CONFIRMATION =
  /^(yes\b|yep\b|yeah\b|correct\b|exactly\b|right\b|perfect\b|great\b|thanks\b|thank you\b|that works\b|it works\b|works\b|looks good\b|lgtm\b|good\b|nice\b)/;

/** Whether a user's reply corrects or confirms the answer before it (only its opening counts). */
export function classifyReply(text: string): "corrected" | "confirmed" | undefined {
  const start = text
    .trim()
    .toLowerCase()
    .replace(/^[^\p{L}\p{N}]+/u, "")
    .replace(/[’‘]/g, "'")
    .slice(0, 80);
  if (CORRECTION.test(start)) return "corrected";
  if (CONFIRMATION.test(start)) return "confirmed";
  return undefined;
}

/** Texts of an assistant message: its words and the string values of its call arguments. */
function responseTexts(m: Message, recalled: Set<string>): string[] {
  if (m.role !== "assistant") return [];
  const texts = [m.content];
  for (const call of m.toolCalls ?? []) {
    let args: unknown;
    try {
      args = JSON.parse(call.arguments);
    } catch {
      texts.push(call.arguments);
      continue;
    }
    const strings: string[] = [];
    collectStrings(args, strings, 0);
    // recall gives its own feedback when it expands an id.
    if (call.name === "recall" && typeof (args as { id?: unknown })?.id === "string")
      recalled.add((args as { id: string }).id.trim());
    texts.push(...strings);
  }
  return texts;
}

function collectStrings(v: unknown, out: string[], depth: number): void {
  if (depth > 6) return;
  if (typeof v === "string") out.push(v);
  else if (typeof v === "number") out.push(String(v));
  else if (Array.isArray(v)) for (const x of v) collectStrings(x, out, depth + 1);
  else if (v && typeof v === "object") for (const x of Object.values(v)) collectStrings(x, out, depth + 1);
}

export interface FeedbackCounts {
  used: number;
  unused: number;
  confirmed: number;
  corrected: number;
}

export class FeedbackTracker implements ContextFeedback {
  /** Keys per shown text. */
  private readonly keyCache = new Map<string, Set<string>>();
  private fixedTexts: string[] = [];
  private fixedKeys = new Set<string>();
  /** Notes already marked unused: a note shown for many steps is one sample, not many. */
  private readonly unused = new Set<string>();
  /** The latest assistant answer with words, the target of a user's correction or confirmation. */
  private lastAnswer: string | undefined;
  /** Totals, for reports and tests. */
  readonly counts: FeedbackCounts = { used: 0, unused: 0, confirmed: 0, corrected: 0 };

  constructor(private readonly memory: Memory) {}

  observe(previous: StepView | undefined, added: readonly AddedMessage[]): void {
    for (const { id, message } of added) {
      if (message.role === "assistant" && message.content.trim()) this.lastAnswer = id;
      else if (message.role === "user" && this.lastAnswer) {
        const kind = classifyReply(message.content);
        if (kind) {
          this.memory.feedback(this.lastAnswer, kind);
          this.counts[kind]++;
        }
        this.lastAnswer = undefined;
      }
    }
    if (previous) this.judge(previous, added);
  }

  private judge(view: StepView, added: readonly AddedMessage[]): void {
    const recalled = new Set<string>();
    const texts = added.flatMap((a) => responseTexts(a.message, recalled));
    if (texts.length === 0) return;
    const mentioned = new Set<string>();
    const keys = new Set<string>();
    for (const t of texts) {
      for (const id of t.match(MEMORY_ID) ?? []) mentioned.add(id);
      referenceKeys(t, keys);
    }
    for (const k of this.fixed(view.fixed)) keys.delete(k);
    const shown = view.shown.slice(0, MAX_JUDGED);
    const wanted = [...keys];
    const hits = shown.map((s) => {
      // A key of a text is a substring of its lower-cased scanned part (keys are ASCII words):
      // a text holding none of the response's keys as a substring has none of them among its
      // keys, and is not split into words at all.
      const lower = this.lowerOf(s);
      const maybe = wanted.filter((k) => lower.includes(k));
      if (maybe.length === 0) return maybe;
      const own = this.keysOf(s);
      return maybe.filter((k) => own.has(k));
    });
    const sharing = new Map<string, number>();
    for (const h of hits) for (const k of h) sharing.set(k, (sharing.get(k) ?? 0) + 1);
    const verdicts: { id: string; kind: "used" | "unused" }[] = [];
    const judged = new Set<string>();
    for (const [i, s] of shown.entries()) {
      // The same chunk shown twice (a repeated output stored once) is one sample.
      if (recalled.has(s.id) || judged.has(s.id)) continue;
      judged.add(s.id);
      const used = mentioned.has(s.id) || hits[i]!.some((k) => (sharing.get(k) ?? 0) <= MAX_SHARING);
      if (used) {
        verdicts.push({ id: s.id, kind: "used" });
        this.counts.used++;
      } else if (s.retrieved && !this.unused.has(s.id)) {
        if (this.unused.size >= 10_000) this.unused.clear();
        this.unused.add(s.id);
        verdicts.push({ id: s.id, kind: "unused" });
        this.counts.unused++;
      }
    }
    this.memory.feedbackMany(verdicts);
  }

  /** Lower-cased scanned parts of recently shown texts (the shown set moves a step at a time). */
  private readonly lowerCache = new Map<string, string>();

  private lowerOf(s: ShownChunk): string {
    const key = `${s.id}:${s.text.length}`;
    let lower = this.lowerCache.get(key);
    if (lower === undefined) {
      if (this.lowerCache.size >= 2 * MAX_JUDGED)
        this.lowerCache.delete(this.lowerCache.keys().next().value!);
      lower = s.text.slice(0, SCAN_CHARS).toLowerCase();
      this.lowerCache.set(key, lower);
    }
    return lower;
  }

  private keysOf(s: ShownChunk): Set<string> {
    // A note may be shown in full one step and shortened the next.
    const key = `${s.id}:${s.text.length}`;
    let keys = this.keyCache.get(key);
    if (!keys) {
      if (this.keyCache.size >= 2000) this.keyCache.clear();
      keys = referenceKeys(s.text);
      this.keyCache.set(key, keys);
    }
    return keys;
  }

  private fixed(texts: string[]): Set<string> {
    if (texts.length !== this.fixedTexts.length || texts.some((t, i) => t !== this.fixedTexts[i])) {
      this.fixedTexts = texts;
      this.fixedKeys = new Set();
      for (const t of texts) referenceKeys(t, this.fixedKeys);
    }
    return this.fixedKeys;
  }
}
