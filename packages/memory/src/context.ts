// Builds what the model sees each step from the agent's full history, within a token budget:
// the system prompt and the task always; then the latest step; then the most recent steps that
// fit a share of the budget; then, from everything older, what retrieval finds most relevant
// to the current step — verbatim or compressed (with the id that `recall` expands).
// Messages sent unchanged are the history's own objects (never mutated), so the request
// encoder can reuse their bytes; changed ones are new objects.
//
// Cache-aware (the default): providers bill a request's prefix that matches the previous
// request at a tenth of the price, so the history is sent as it is, append-only, while it fits
// the budget. When it no longer fits, a compaction point: the context is assembled as above
// within a share of the budget (compactTo), and from then on each request is exactly that
// context followed by the history's new messages — a stable prefix (system, task, a memory
// section that changes only at compaction points) and append-only recent steps — until the
// budget is reached again and the next compaction point comes.
import { createHash } from "node:crypto";
import type { Message } from "@hands/llm";
import { type ContextFeedback, MAX_JUDGED, type ShownChunk, type StepView } from "./feedback.js";
import { type Memory, newId, type RetrievedItem } from "./memory.js";
import type { ContextRecord } from "./store.js";
import { contentWords, estimateTokens } from "./text.js";
import type { Chunk, ChunkType, NewChunk } from "./types.js";

export interface ContextOptions {
  /** Tokens for the whole context. */
  budget: number;
  /** Share of what is left after system + task + memory note kept for the most recent steps. */
  recentShare?: number;
  /** Workspace knowledge from earlier tasks, shown after the task. */
  preamble?: string;
  /** Told, once a step's new messages are stored, what the step before showed (see FeedbackTracker). */
  feedback?: ContextFeedback;
  /** Append-only between compaction points, for providers' prompt caches (default true). */
  cacheAware?: boolean;
  /** At a compaction point, the share of the budget the assembled context takes (default 0.6). */
  compactTo?: number;
  /**
   * Starts a step's writes once its request has left (default setImmediate: after the current
   * turn of the event loop, which may still be before a new connection's request is written).
   * A caller that knows when the request is on the wire passes its own; it must call `run`
   * in the end — the next step, flush and written wait for it.
   */
  defer?: (run: () => void) => void;
}

/** What a compaction point sent: later requests repeat it and append the history's new messages. */
interface Frozen {
  sent: Message[];
  tokens: number;
  /** Characters of `sent`'s text (for sentChars, without measuring every message again). */
  chars: number;
  /** Index in the history of the first message not in `sent`. */
  next: number;
}

/** A history message staged for memory; `stored`: its text is already a chunk (same id). */
interface Pending {
  id: string;
  m: Message;
  k: number;
  stored: boolean;
}

interface Group {
  /** Index of the first message of the group in the history. */
  start: number;
  messages: Message[];
  chunkIds: string[];
  tokens: number;
}

function messageText(m: Message): string {
  if (m.role === "assistant" && m.toolCalls?.length)
    return [m.content, ...m.toolCalls.map((c) => `${c.name}(${c.arguments})`)].filter(Boolean).join("\n");
  return m.content;
}

/**
 * A message's cost against the budget: its text, plus 4 tokens of framing, plus its thinking
 * where the provider sends that back (see sentThinkingChars).
 */
function messageTokens(m: Message): number {
  return estimateTokens(messageText(m)) + 4 + Math.ceil(sentThinkingChars(m) / 4);
}

/**
 * Characters of an assistant message's thinking that go back over the wire: Anthropic's blocks
 * (signatures and redacted data included), or the text when it is sent back in a field
 * (`sendBackAs`); otherwise none — the provider leaves it out.
 */
function sentThinkingChars(m: Message): number {
  const t = m.role === "assistant" ? m.thinking : undefined;
  if (!t) return 0;
  if (t.blocks?.length)
    return t.blocks.reduce(
      (n, b) => n + (b.type === "thinking" ? b.thinking.length + b.signature.length : b.data.length),
      0,
    );
  return t.sendBackAs ? t.text.length : 0;
}

/** The thinking a chunk of memory keeps of an assistant message (what people and recall read). */
function thinkingText(m: Message): string {
  return m.role === "assistant" ? (m.thinking?.text.trim() ?? "") : "";
}

function chunkType(m: Message): ChunkType {
  if (m.role === "user") return "user_input";
  if (m.role === "tool") return "tool_result";
  if (m.role === "system") return "system_event";
  return m.toolCalls?.length ? "tool_call" : "agent_response";
}

/** The smallest budget: the system prompt, the task and one step must still fit. */
const MIN_BUDGET = 1000;

export class ContextAssembler {
  private seen = 0;
  /** System prompt and task: always sent, never retrieved. */
  private readonly fixedIds: string[] = [];
  private readonly groups: Group[] = [];
  private readonly chunkToGroup = new Map<string, number>();
  /** Chunk ids by a hash of their message's role, tool and text (see stage). */
  private readonly byContent = new Map<string, string>();
  /** The chunk id of each history message, by index. */
  private readonly chunkIdAt = new Map<number, string>();
  /** Characters sent over the run (for reports). */
  sentChars = 0;
  /** Estimated tokens of the latest assembled context, on the budget's scale. */
  lastTokens = 0;
  /** Time the last step's messages took to store (off the critical path). */
  ingestMs = 0;
  private writing: Promise<void> = Promise.resolve();

  /** Waits until every message seen so far is stored (e.g. before closing the memory). */
  async flush(): Promise<void> {
    await this.writing;
    if (this.backlog.length === 0) return;
    this.storeBacklog();
    await this.writing;
  }

  /** Resolves once the writes started so far are done (not the backlog: see flush). */
  written(): Promise<void> {
    return this.writing;
  }

  /** The recall tool's answer, once pending writes are stored. */
  async recall(idOrQuery: string): Promise<string> {
    await this.flush();
    return recallText(this.memory, idOrQuery);
  }
  /** The last step's retrieval query and what it returned (for inspection). */
  last?: { query: string; items: RetrievedItem[]; notes: number };
  /** Index of the current request in the history (its words are the goal). */
  private task = 0;
  /** What the last step showed, for feedback. */
  private view: StepView | undefined;
  /** The last compaction point (cache-aware mode); undefined while the whole history fits. */
  private frozen: Frozen | undefined;
  /** Estimated tokens of the whole history seen so far. */
  private historyTokens = 0;
  /** Characters of the history's text (and the preamble's): what a request of the whole history sends. */
  private historyChars = 0;
  /**
   * Steps staged but not stored yet (cache-aware): while requests only append, nothing is
   * retrieved from the store, so a step's messages wait and are stored in one batch at the
   * next compaction point (or flush) — a transaction and a rebalance per batch, not per step.
   * Each step keeps what the step before showed, for feedback once its messages are stored.
   */
  private backlog: { pending: Pending[]; shownBefore: StepView | undefined }[] = [];
  /** Why each chunk of the current context is in it, and in which form (see describe). */
  private why = new Map<string, { form: "full" | "stand-in"; why: string }>();
  private whyStep = 0;
  /** Compaction points so far (for reports and `hands memory show`). */
  compactions = 0;
  /** The token budget; `shrink` lowers it (e.g. after the provider said the context overflowed). */
  budget: number;

  constructor(
    private readonly memory: Memory,
    private readonly options: ContextOptions,
  ) {
    this.budget = options.budget;
  }

  /**
   * Lowers the budget to `factor` of itself (at least 1,000 tokens) and makes the next step a
   * compaction point: the entry point for a context-overflow error from the provider.
   */
  shrink(factor = 0.7): number {
    return this.setBudget(Math.floor(this.budget * factor));
  }

  /**
   * Lowers the budget to `tokens` (at least MIN_BUDGET; never raises it) and, when it moved,
   * makes the next step a compaction point, so that step's context is assembled within it.
   */
  setBudget(tokens: number): number {
    const next = Math.max(MIN_BUDGET, Math.floor(tokens));
    if (next >= this.budget) return this.budget;
    this.budget = next;
    this.frozen = undefined;
    this.forceCompaction = true;
    return this.budget;
  }
  private forceCompaction = false;
  /** Assistant messages before the current request whose thinking is sent back, and how far that is known. */
  private readonly oldThinking = new Set<Message>();
  private thinkingSettled = 0;
  /** Those messages without their thinking, by message (one object each). */
  private readonly bare = new WeakMap<Message, Message>();
  /** Content words of the context since the last compaction point (see recallHint). */
  private contextWords = new Set<string>();
  /**
   * Distinct content words of the messages appended since the last compaction point, split
   * once: the recall note reads them when a message is appended, the next compaction point
   * again (most of its context is those recent steps). Emptied at each compaction point.
   */
  private recentWords = new Map<Message, Set<string>>();
  /** Chunks the requests since the last compaction point show (not offered again as notes). */
  private inContext = new Set<string>();
  /** Paths named by tool calls, by call id (until their results are stored). */
  private readonly callPaths = new Map<string, string>();
  /** The preamble as one message object, the same in every request. */
  private preambleMessage: Message | undefined;

  /**
   * Maps the full history to the messages to send; the history is never changed. `task`: the
   * index of the current request — in a conversation, a later user message than history[1]
   * (which opened it); it is always sent, and the goal and the retrieval query follow it.
   */
  async assemble(history: readonly Message[], step: number, task = 1): Promise<Message[]> {
    const memory = this.memory;
    // The previous step's writes (not the backlog: it waits until memory needs it).
    await this.writing;
    memory.step = step;
    this.whyStep = step;
    if (this.seen === 0 && history.length >= 2) {
      // Memory already holds this scope (an earlier part of the conversation): the first
      // step is a compaction point, so its memory section can show what came before.
      if (this.options.cacheAware !== false && memory.store.count({ scope: memory.scope }) > 0)
        this.forceCompaction = true;
      const system = history[0]!.content;
      const opening = history[1]!.content;
      const storeFixed = async () => {
        const sys = await memory.add({
          type: "system_event",
          content: system,
          layer: "long_term",
          meta: { role: "system" },
        });
        const first = await memory.add({
          type: "user_input",
          content: opening,
          importance: 1,
          meta: { role: "task" },
        });
        this.fixedIds.push(sys.id, first.id);
      };
      this.seen = 2;
      this.historyTokens = messageTokens(history[0]!) + messageTokens(history[1]!);
      if (this.options.preamble) this.historyTokens += estimateTokens(this.options.preamble) + 4;
      this.historyChars =
        messageText(history[0]!).length +
        messageText(history[1]!).length +
        (this.options.preamble?.length ?? 0);
      // Sent as it is (the system prompt, the task and the preamble, within the budget): nothing
      // of this step is read back before its request leaves, so the two chunks (and the goal,
      // which they are stored without) are stored after it, as every later step's messages are;
      // the next step, a recall and flush wait for them. Otherwise (a compaction point) now.
      const sentAsItIs =
        history.length === 2 &&
        this.options.cacheAware !== false &&
        !this.forceCompaction &&
        this.historyTokens <= this.budget;
      if (sentAsItIs) {
        const goal = task !== this.task && history[task] ? history[task]!.content : undefined;
        if (goal !== undefined) this.task = task;
        this.later(async () => {
          await storeFixed();
          if (goal !== undefined) memory.setGoal(goal);
        });
      } else await storeFixed();
    }
    if (task !== this.task && history[task]) {
      this.task = task;
      memory.setGoal(history[task]!.content);
    }
    // New messages are grouped now but stored after retrieval: the query (the latest step)
    // then is not in the store, so its own one-off words do not count as rare matches.
    const pending = this.stage(history);
    this.settleOldThinking(history, task);
    const shownBefore = this.view;
    // A new request while something is left out of the context: its memory section is
    // retrieved again for it.
    if ((this.frozen || this.compactions > 0) && pending.some((p) => p.m.role === "user"))
      this.forceCompaction = true;
    if (this.options.cacheAware !== false && !this.forceCompaction) {
      const fits = await this.appendOnly(history);
      if (fits) {
        for (const p of pending) this.inContext.add(p.id);
        this.backlog.push({ pending, shownBefore });
        // Everything recent is shown as it is: the newest steps are what feedback judges.
        this.view = this.options.feedback ? this.recentView(fits) : undefined;
        return this.withoutOldThinking(fits);
      }
    }
    this.forceCompaction = false;
    // A compaction point retrieves from the store: everything older than this step must be in it.
    if (this.backlog.length) {
      this.storeBacklog();
      await this.writing;
    }
    const composed = await this.compose(history, task);
    const out = this.withoutOldThinking(composed);
    // What was dropped is not sent: it does not count.
    if (out !== composed) this.lastTokens = out.reduce((n, m) => n + messageTokens(m), 0);
    for (const p of pending) this.inContext.add(p.id);
    if (this.options.cacheAware !== false) {
      this.contextWords = this.wordsOfContext(out);
      this.recentWords = new Map();
      this.frozen = { sent: out, tokens: this.lastTokens, chars: this.charsOf(out), next: history.length };
      this.compactions++;
    }
    this.storeLater(pending, shownBefore);
    return out;
  }

  /**
   * Thinking of replies before the current request is not sent (see withoutOldThinking): from
   * the moment a new request starts, it no longer counts against the budget either.
   */
  private settleOldThinking(history: readonly Message[], task: number): void {
    for (let k = this.thinkingSettled; k < task; k++) {
      const m = history[k]!;
      const chars = sentThinkingChars(m);
      if (chars === 0) continue;
      this.oldThinking.add(m);
      const t = Math.ceil(chars / 4);
      this.historyTokens -= t;
      const id = this.chunkIdAt.get(k);
      const g = id === undefined ? undefined : this.groups[this.chunkToGroup.get(id) ?? -1];
      if (g) g.tokens -= t;
    }
    this.thinkingSettled = Math.max(this.thinkingSettled, task);
  }

  /**
   * `out` without the thinking of replies before the current request: providers need it back
   * only within the current turn (Anthropic's blocks in the tool-use loop, DeepSeek's
   * reasoning_content within the user turn), so older thinking is dropped first. The same
   * message always becomes the same object, so the requests' prefix stays the same.
   */
  private withoutOldThinking(out: Message[]): Message[] {
    if (this.oldThinking.size === 0) return out;
    let changed = false;
    const sent = out.map((m) => {
      if (m.role !== "assistant" || !this.oldThinking.has(m)) return m;
      changed = true;
      let bare = this.bare.get(m);
      if (!bare) {
        const { thinking: _dropped, ...rest } = m;
        bare = rest;
        this.bare.set(m, bare);
      }
      return bare;
    });
    if (!changed) return out;
    if (this.frozen && this.frozen.sent === out) this.frozen.sent = sent;
    return sent;
  }

  /** Characters of messages' text, each message measured once (a request repeats most of the last). */
  private charsOf(messages: readonly Message[]): number {
    let n = 0;
    for (const m of messages) {
      let c = this.chars.get(m);
      if (c === undefined) {
        c = messageText(m).length;
        this.chars.set(m, c);
      }
      n += c;
    }
    return n;
  }
  private readonly chars = new WeakMap<Message, number>();

  /** A message's distinct content words (see recentWords). */
  private wordsOf(m: Message): Set<string> {
    let words = this.recentWords.get(m);
    if (!words) {
      words = new Set(contentWords(messageText(m)));
      if (this.frozen) this.recentWords.set(m, words);
    }
    return words;
  }

  // The word loops below are functions of their own: they are what runs hot, and V8's
  // optimizing compiler then compiles them alone instead of the large async functions around
  // them (assemble, recallHint) with everything those inline — measured with --trace-opt, that
  // was ~70 ms of compiler time on V8's threads in a 200-step run.

  /** The content words of a context, message by message (not one array of the whole context). */
  private wordsOfContext(out: readonly Message[]): Set<string> {
    const words = new Set<string>();
    for (const m of out) for (const w of this.wordsOf(m)) words.add(w);
    return words;
  }

  /** Words of the new messages the context does not hold yet; they are added to it. */
  private freshWords(added: readonly Message[]): string[] {
    const fresh: string[] = [];
    for (const m of added)
      for (const w of this.wordsOf(m)) {
        if (this.contextWords.has(w)) continue;
        this.contextWords.add(w);
        fresh.push(w);
      }
    return fresh;
  }

  /** The request while no compaction is due: the history itself, or the last compaction point's context plus what came after it. */
  private async appendOnly(history: readonly Message[]): Promise<Message[] | undefined> {
    if (!this.frozen) {
      if (this.historyTokens > this.budget) return undefined;
      this.lastTokens = this.historyTokens;
      this.preambleMessage ??= this.options.preamble
        ? { role: "user", content: this.options.preamble }
        : undefined;
      const out = this.preambleMessage
        ? [history[0]!, history[1]!, this.preambleMessage, ...history.slice(2)]
        : history.slice();
      this.sentChars += this.historyChars;
      return out;
    }
    const added = history.slice(this.frozen.next);
    for (let k = this.frozen.next; k < history.length; k++) {
      const id = this.chunkIdAt.get(k);
      if (id)
        this.why.set(id, {
          form: "full",
          why: `appended at step ${this.whyStep}, after compaction point ${this.compactions}`,
        });
    }
    let tokens = this.frozen.tokens + added.reduce((n, m) => n + messageTokens(m), 0);
    if (tokens > this.budget) return undefined;
    const sent = [...this.frozen.sent, ...added];
    const hint = await this.recallHint(added, this.budget - tokens);
    if (hint) {
      sent.push(hint);
      tokens += messageTokens(hint);
    }
    // Only the new messages are measured: the rest is the last request's.
    const chars = this.frozen.chars + this.charsOf(added) + (hint ? hint.content.length : 0);
    // The next request repeats this one: the hint stays where it was shown.
    this.frozen = { sent, tokens, chars, next: history.length };
    this.lastTokens = tokens;
    this.sentChars += chars;
    return sent;
  }

  /**
   * Between compaction points the memory section stays as it was; what the latest step calls
   * for from further back comes as a small note after it (a few items, stand-ins first), which
   * later requests repeat in place, so the prefix still matches.
   */
  private async recallHint(added: readonly Message[], room: number): Promise<Message | undefined> {
    const budget = Math.min(room, Math.max(250, Math.floor(this.budget * 0.01)));
    // What the step brings up that the context does not hold yet is what may need recalling:
    // a step that only repeats known words costs no retrieval at all.
    const fresh = this.freshWords(added);
    // Bare numbers (a repeat count, line numbers, an exit code, a timing) turn up in nearly every
    // output: a step whose only new words are numbers relates to nothing in particular, and is
    // not worth a search (in a loop of the same call, the harness's repeat count alone was new
    // each step: a full-text search a step, half of what memory cost it).
    if (budget < 60 || !fresh.some((w) => !BARE_NUMBER.test(w))) return undefined;
    // A short query of the most specific of them: a few FTS terms, not 30.
    const query = specificWords(fresh.join(" "), 12).join(" ");
    if (!query) return undefined;
    // Only what matches the step's words is related to it: with no full-text match outside the
    // context there is no note (the most important chunks alone are not related to the step).
    const filter = { types: [...HINT_TYPES] };
    const textHits = this.memory.store.searchText(query, { scope: this.memory.scope, ...filter }, HINT_POOL);
    if (!textHits.some((h) => !this.inContext.has(h.id))) return undefined;
    const found = await this.memory.retrieve(query, {
      textHits,
      budget: budget - 30,
      exclude: this.inContext,
      touch: false,
      neighbors: 0,
      // The note holds a handful of items (at most 1% of the budget): a small pool is enough,
      // and each candidate's metadata is read.
      candidates: HINT_POOL,
      // The query is a few exact words: full text finds them; vectors would add cost, not recall.
      vectors: false,
      // Only what a note may show competes for its budget.
      filter,
    });
    // Results, user input and summaries carry what a step needs; calls and replies do not.
    const items = found.items.filter(
      (i) =>
        HINT_TYPES.has(i.chunk.type) && (this.chunkToGroup.has(i.chunk.id) || i.chunk.type === "summary"),
    );
    if (items.length === 0) return undefined;
    for (const i of items) {
      for (const w of contentWords(i.text)) this.contextWords.add(w);
      this.inContext.add(i.chunk.id);
      this.why.set(i.chunk.id, {
        form: i.form === "full" ? "full" : "stand-in",
        why: `recall note at step ${this.whyStep}: matches the step's words "${query.slice(0, 60)}" (relevance ${i.relevance.toFixed(2)})`,
      });
    }
    return {
      role: "user",
      content: `Memory (automatic note, not from the user) — earlier steps related to the latest one:\n${items.map(noteFor).join("\n\n")}`,
    };
  }

  /** Builds the context within the budget (at a compaction point: within its share). */
  private async compose(history: readonly Message[], task: number): Promise<Message[]> {
    const memory = this.memory;
    this.why = new Map();
    for (const [k, id] of this.fixedIds.entries())
      this.why.set(id, {
        form: "full",
        why: k === 0 ? "the system prompt: always sent" : "the task: always sent",
      });
    const budget =
      this.options.cacheAware !== false
        ? Math.floor(this.budget * (this.options.compactTo ?? 0.6))
        : this.budget;
    const head = history.slice(0, 2) as Message[];
    this.preambleMessage ??= this.options.preamble
      ? { role: "user", content: this.options.preamble }
      : undefined;
    const preamble = this.preambleMessage;
    let left = budget - head.reduce((n, m) => n + messageTokens(m), 0);
    if (preamble) left -= estimateTokens(preamble.content) + 4;
    if (this.groups.length === 0) {
      const out = [...head, ...(preamble ? [preamble] : [])];
      this.lastTokens = out.reduce((n, m) => n + messageTokens(m), 0);
      return out;
    }

    const chosen = new Map<number, Message[]>();
    // The latest step always goes in; compressed if it alone is over the budget.
    const lastIdx = this.groups.length - 1;
    const last = this.groups[lastIdx]!;
    if (last.tokens <= Math.max(0, left)) {
      chosen.set(lastIdx, last.messages);
      this.explain(lastIdx, "full", "the latest step");
      left -= last.tokens;
    } else {
      const squeezed = this.squeeze(last, Math.max(200, left));
      chosen.set(lastIdx, squeezed.messages);
      for (const [j, id] of last.chunkIds.entries())
        this.why.set(
          id,
          squeezed.messages[j] === last.messages[j]
            ? { form: "full", why: `the latest step (step ${this.whyStep})` }
            : {
                form: "stand-in",
                why: `the latest step, its output shortened to fit the budget (step ${this.whyStep})`,
              },
        );
      left -= squeezed.tokens;
    }
    const pinned = task > 1 ? this.groupStarting(task) : undefined;
    if (pinned !== undefined && !chosen.has(pinned)) {
      chosen.set(pinned, this.groups[pinned]!.messages);
      this.explain(pinned, "full", "the current request");
      left -= this.groups[pinned]!.tokens;
    }
    // Recent steps, newest first, within their share.
    let recentLeft = Math.floor(Math.max(0, left) * (this.options.recentShare ?? 0.5));
    let i = lastIdx - 1;
    for (; i >= 0; i--) {
      if (i === pinned) continue;
      const g = this.groups[i]!;
      if (g.tokens > recentLeft) break;
      chosen.set(i, g.messages);
      this.explain(i, "full", "a recent step, within the recent share of the budget");
      recentLeft -= g.tokens;
      left -= g.tokens;
    }
    // Older steps: the best of the rest, by retrieval against the current step.
    const notes: string[] = [];
    const shown: ShownChunk[] = [];
    if (i >= 0 && left > 50) {
      const exclude = new Set<string>(this.fixedIds);
      for (const [gi] of chosen) for (const id of this.groups[gi]!.chunkIds) exclude.add(id);
      this.inContext = exclude;
      // The task, and the end of the latest step (where results and the next need show).
      const lastText = last.messages.map(messageText).join("\n");
      const query = `${history[task]?.content ?? ""}\n${lastText.slice(-1500)}`;
      // Labels cost tokens too: ask for less, then enforce the real cost below.
      const noteBudget = Math.floor((left - 40) * 0.75);
      let noteLeft = left - 40;
      const found = await memory.retrieve(query, {
        budget: noteBudget,
        exclude,
        // The model's own thinking never competes with what the tools showed: it is only
        // offered below, with what this selection leaves of the budget.
        filter: { types: EVIDENCE_TYPES },
        // Being shown is not being used: feedback comes from recall (a real use) instead,
        // and the log is not flooded with an access per item per step.
        touch: false,
        neighborHits: 8,
        // Old steps here are few and large (tool outputs): a smaller pool keeps a step fast.
        candidates: 60,
        // Tool outputs run to thousands of tokens: here a stand-in that keeps the outline or the
        // failures must be able to win over one full output.
        select: { costExponent: 0.8, compressedValue: 0.75 },
      });
      this.last = { query, items: found.items, notes: 0 };
      const record = this.last;
      // An item goes in as a note if the notes' real cost (labels included) still fits.
      const addNote = (item: RetrievedItem, why: string) => {
        const note = noteFor(item);
        const cost = estimateTokens(note) + 1;
        if (cost > noteLeft) return;
        noteLeft -= cost;
        notes.push(note);
        shown.push({ id: item.chunk.id, text: item.text, retrieved: true });
        this.inContext.add(item.chunk.id);
        this.why.set(item.chunk.id, {
          form: item.form === "full" ? "full" : "stand-in",
          why: `memory section (compaction point ${this.compactions + 1}, step ${this.whyStep}): ${why}`,
        });
        record.notes++;
      };
      for (const item of found.items) {
        const gi = this.chunkToGroup.get(item.chunk.id);
        // Not in this history: from earlier in the conversation (before a /compact), unless a summary.
        if (gi === undefined ? !fromEarlier(item.chunk) : gi > i || chosen.has(gi)) continue;
        addNote(
          item,
          `relevance ${item.relevance.toFixed(2)} to the task and the latest step, importance ${item.chunk.importance.toFixed(2)}`,
        );
      }
      // Then, with what is left, the thinking behind the steps that are not shown.
      // (A full-text search filtered to a type the store does not hold still ranks every match
      // of the query before the filter drops them all: asked only when there is thinking.)
      if (noteLeft > 150 && this.holdsReasoning()) {
        const thoughts = await memory.retrieve(query, {
          budget: Math.floor(noteLeft * 0.75),
          exclude,
          filter: { types: ["agent_reasoning"] },
          touch: false,
          neighbors: 0,
          candidates: 20,
          select: { costExponent: 0.8, compressedValue: 0.75 },
        });
        for (const item of thoughts.items) {
          const of = item.chunk.meta.reasoningOf;
          const gi = of ? this.chunkToGroup.get(of) : undefined;
          // Thinking of a step that is sent already is beside the point (and not sent back).
          if (gi === undefined || gi > i || chosen.has(gi)) continue;
          addNote(
            item,
            `the model's own reasoning, after the evidence, relevance ${item.relevance.toFixed(2)}`,
          );
        }
      }
    }
    const out: Message[] = [...head];
    if (preamble) out.push(preamble);
    if (notes.length)
      out.push({
        role: "user",
        content: `Memory — earlier steps not shown in full, most relevant first (use the recall tool with an id to see the original):\n\n${notes.join("\n\n")}`,
      });
    for (const gi of [...chosen.keys()].sort((a, b) => a - b)) out.push(...chosen.get(gi)!);
    this.lastTokens = 0;
    for (const m of out) {
      this.sentChars += messageText(m).length;
      this.lastTokens += messageTokens(m);
    }
    if (this.options.feedback) this.view = this.stepView(out, chosen, shown);
    return out;
  }

  private reasoningStored = false;

  /** Whether memory holds any of the model's thinking in this scope (once it does, it always may). */
  private holdsReasoning(): boolean {
    this.reasoningStored ||=
      this.memory.store.count({ scope: this.memory.scope, types: ["agent_reasoning"] }) > 0;
    return this.reasoningStored;
  }

  /**
   * Stores the step's new messages off the critical path: the request goes out first, the
   * writes overlap the model's latency. The next step (or flush) waits for them.
   */
  private storeLater(pending: Pending[], shownBefore: StepView | undefined): void {
    this.storeSteps([{ pending, shownBefore }], true);
  }

  /** Stores the backlog's steps in one batch (see `backlog`), now: the caller waits for them. */
  private storeBacklog(): void {
    const steps = this.backlog;
    this.backlog = [];
    this.storeSteps(steps, false);
  }

  private storeSteps(
    steps: { pending: Pending[]; shownBefore: StepView | undefined }[],
    afterRequest: boolean,
  ): void {
    this.later(async () => {
      const t = performance.now();
      await this.persist(steps.flatMap((st) => st.pending));
      for (const st of steps)
        this.options.feedback?.observe(
          st.shownBefore,
          st.pending.map((p) => ({ id: p.id, message: p.m })),
        );
      this.ingestMs = performance.now() - t;
    }, afterRequest);
  }

  /**
   * Runs `write` off the current call: once the current request has gone out (options.defer)
   * when `afterRequest`, else at the next turn of the event loop (a write the caller itself
   * waits for before any request); `writing` until it is done.
   */
  private later(write: () => Promise<void>, afterRequest = true): void {
    const defer = (afterRequest && this.options.defer) || setImmediate;
    this.writing = new Promise((resolve, reject) => defer(() => write().then(resolve, reject)));
    // Handled here so a failed write never crashes the process; flush() still reports it.
    this.writing.catch(() => {});
  }

  /** What the model is shown: the notes, then user input and tool results sent verbatim, newest first. */
  private stepView(out: Message[], chosen: Map<number, Message[]>, shown: ShownChunk[]): StepView {
    const groups = [...chosen.keys()].sort((a, b) => b - a);
    for (const gi of groups) {
      this.pushShown(gi, chosen.get(gi)!, shown);
      if (shown.length >= MAX_JUDGED) break;
    }
    return this.viewOf(out, shown);
  }

  /**
   * stepView of a request that shows every recent step as it is (between compaction points):
   * the newest MAX_JUDGED groups, newest first, without a map of them to sort each step.
   */
  private recentView(out: Message[]): StepView {
    const shown: ShownChunk[] = [];
    const oldest = Math.max(0, this.groups.length - MAX_JUDGED);
    for (let gi = this.groups.length - 1; gi >= oldest && shown.length < MAX_JUDGED; gi--)
      this.pushShown(gi, this.groups[gi]!.messages, shown);
    return this.viewOf(out, shown);
  }

  /** User input and tool results of group `gi` as sent (`messages`), for feedback. */
  private pushShown(gi: number, messages: readonly Message[], shown: ShownChunk[]): void {
    const ids = this.groups[gi]!.chunkIds;
    for (let j = 0; j < messages.length; j++) {
      const m = messages[j]!;
      if (m.role === "tool" || m.role === "user")
        shown.push({ id: ids[j]!, text: m.content, retrieved: false });
    }
  }

  private viewOf(out: Message[], shown: ShownChunk[]): StepView {
    const fixed = out.slice(0, 2).map((m) => m.content);
    if (this.options.preamble) fixed.push(this.options.preamble);
    return { shown: shown.slice(0, MAX_JUDGED), fixed };
  }

  private explain(gi: number, form: "full" | "stand-in", why: string): void {
    for (const id of this.groups[gi]!.chunkIds)
      this.why.set(id, { form, why: `${why} (step ${this.whyStep})` });
  }

  /** What the latest request held, chunk by chunk: its form and why it is there. */
  describe(): ContextRecord {
    if (this.why.size === 0) {
      const why = "in the history, sent whole: it fits the budget, so nothing is left out";
      const ids = [...this.fixedIds, ...this.groups.flatMap((g) => g.chunkIds)];
      return {
        mode: `whole history (${this.lastTokens} of ${this.budget} tokens)`,
        tokens: this.lastTokens,
        items: ids.map((id) => ({ id, form: "full", why })),
      };
    }
    return {
      mode:
        this.options.cacheAware === false
          ? `assembled for this step (${this.lastTokens} of ${this.budget} tokens)`
          : `compaction point ${this.compactions}, then append-only (${this.lastTokens} of ${this.budget} tokens)`,
      tokens: this.lastTokens,
      items: [...this.why].map(([id, w]) => ({ id, ...w })),
    };
  }

  /** The group the message at `index` starts (a user message always starts one). */
  private groupStarting(index: number): number | undefined {
    for (let gi = this.groups.length - 1; gi >= 0; gi--) {
      const start = this.groups[gi]!.start;
      if (start === index) return gi;
      if (start < index) return undefined;
    }
    return undefined;
  }

  /** Records new history messages as chunks, grouped by step (a call with its results). */
  private stage(history: readonly Message[]): Pending[] {
    const pending: Pending[] = [];
    for (let k = this.seen; k < history.length; k++) {
      const m = history[k]!;
      const raw = messageText(m);
      const text = raw || "(empty)";
      this.historyChars += raw.length;
      // A message whose text memory already holds (a file read again, the same command
      // re-run with the same output) is the same chunk: stored once, one id for both.
      const key = createHash("sha1")
        .update(`${m.role}\u0000${m.role === "tool" ? m.name : ""}\u0000${text}\u0000${thinkingText(m)}`)
        .digest("base64");
      const known = this.byContent.get(key);
      const id = known ?? newId();
      if (!known) this.byContent.set(key, id);
      const toolFollows = m.role === "tool" && this.groups.length > 0;
      if (!toolFollows) this.groups.push({ start: k, messages: [], chunkIds: [], tokens: 0 });
      const g = this.groups[this.groups.length - 1]!;
      g.messages.push(m);
      g.chunkIds.push(id);
      const t = estimateTokens(text) + 4 + Math.ceil(sentThinkingChars(m) / 4);
      g.tokens += t;
      this.historyTokens += t;
      this.chunkToGroup.set(id, this.groups.length - 1);
      this.chunkIdAt.set(k, id);
      if (m.role === "assistant")
        for (const c of m.toolCalls ?? []) {
          const path = /"path"\s*:\s*"([^"\\]{1,400})"/.exec(c.arguments)?.[1];
          if (path) this.callPaths.set(c.id, path);
        }
      pending.push({ id, m, k, stored: known !== undefined });
    }
    this.seen = history.length;
    return pending;
  }

  /** Records staged messages as chunks, with the ids the context already refers to. */
  private async persist(pending: Pending[]): Promise<void> {
    const inputs: NewChunk[] = [];
    for (const { id, m, k, stored } of pending) {
      if (stored) {
        if (m.role === "tool") this.callPaths.delete(m.toolCallId);
        continue;
      }
      const meta: Record<string, string> = { role: m.role, index: String(k) };
      if (m.role === "tool") {
        meta.tool = m.name;
        // The file a read_file result is of: its stand-in is the file's outline.
        const path = this.callPaths.get(m.toolCallId);
        if (path) meta.path = path;
        this.callPaths.delete(m.toolCallId);
      }
      if (m.role === "tool" && m.isError) meta.error = "1";
      inputs.push({ id, type: chunkType(m), content: messageText(m) || "(empty)", meta });
      // The thinking behind a reply: its own chunk, the model's unverified reasoning.
      const thought = thinkingText(m);
      if (thought)
        inputs.push({
          type: "agent_reasoning",
          content: thought,
          confidence: 0.4,
          verification: "unverified",
          meta: { role: "assistant", index: String(k), reasoningOf: id },
        });
    }
    await this.memory.addMany(inputs);
    // The model is still thinking: a good moment to keep the full-text index compact.
    this.memory.compact();
  }

  /** A group too big for the budget: its tool results shortened (new objects), ids kept. */
  private squeeze(g: Group, budget: number): { messages: Message[]; tokens: number } {
    const toolMsgs = g.messages.filter((m) => m.role === "tool").length || 1;
    const per = Math.max(50, Math.floor(budget / toolMsgs) - 20);
    let tokens = 0;
    const messages = g.messages.map((m, j) => {
      if (m.role !== "tool" || estimateTokens(m.content) <= per) {
        tokens += messageTokens(m);
        return m;
      }
      const id = g.chunkIds[j]!;
      const head = m.content.slice(0, per * 2);
      const tail = m.content.slice(-per * 2);
      const content = `${head}\n… [output shortened to fit the context; recall "${id}" for all of it] …\n${tail}`;
      tokens += estimateTokens(content) + 4;
      return { ...m, content };
    });
    return { messages, tokens };
  }
}

/** The `n` most specific distinct content words (identifiers, numbers, paths, long words), in order. */
const BARE_NUMBER = /^\d+$/;

function specificWords(text: string, n: number): string[] {
  const ws = [...new Set(contentWords(text))];
  const score = (w: string) => (/[\d_./]/.test(w) ? 20 : 0) + Math.min(w.length, 14);
  const keep = new Set([...ws].sort((a, b) => score(b) - score(a)).slice(0, n));
  return ws.filter((w) => keep.has(w));
}

const HINT_TYPES = new Set<ChunkType>(["tool_result", "user_input", "summary", "fact"]);
/** Candidates a recall note's retrieval takes from each source. */
const HINT_POOL = 24;
/** Everything but the model's thinking (see compose). */
const EVIDENCE_TYPES: ChunkType[] = [
  "user_input",
  "agent_response",
  "tool_call",
  "tool_result",
  "system_event",
  "thought",
  "fact",
  "summary",
];

/** An item of the memory section: its id, step and kind, then its text (a stand-in says how to get the rest). */
function noteFor(item: RetrievedItem): string {
  const label = item.chunk.meta.tool
    ? `${item.chunk.meta.tool} result`
    : item.chunk.type === "agent_reasoning"
      ? "the model's own reasoning (unverified)"
      : item.chunk.type.replace("_", " ");
  return item.form === "full"
    ? `[${item.chunk.id}] step ${item.chunk.step ?? "?"} ${label}:\n${item.text}`
    : `[${item.chunk.id}] step ${item.chunk.step ?? "?"} ${label} (compressed; recall "${item.chunk.id}" for the full text): ${item.text}`;
}

/** A chunk of this scope that no history message stands for: an earlier part of the conversation. */
function fromEarlier(c: Chunk): boolean {
  return c.type !== "summary" && c.meta.role !== "system";
}

/** The text the recall tool returns for an id (summary expanded) or, failing that, a search. */
export async function recallText(memory: Memory, idOrQuery: string, budget = 4000): Promise<string> {
  const key = idOrQuery.trim();
  const hit = /^m[0-9a-f]{10}$/.test(key) ? memory.recall(key) : undefined;
  if (hit) {
    // Asking for it is the clearest sign a chunk matters: feedback for the learned scorer.
    memory.feedback(key, "used");
    const parts = hit.originals.length ? hit.originals : [hit.chunk];
    return parts.map((c) => `[${c.id}] step ${c.step ?? "?"} ${c.type}:\n${c.content}`).join("\n\n");
  }
  // The evidence first; the model's own earlier reasoning only after it, with what it leaves.
  const found = await memory.retrieve(key, { budget, fullOnly: true, filter: { types: EVIDENCE_TYPES } });
  const left = budget - found.tokens;
  const thoughts =
    left > 100
      ? await memory.retrieve(key, { budget: left, fullOnly: true, filter: { types: ["agent_reasoning"] } })
      : { items: [] };
  const items = [...found.items, ...thoughts.items];
  if (items.length === 0) return `Nothing in memory matches "${key}".`;
  return items
    .map((i) => `[${i.chunk.id}] step ${i.chunk.step ?? "?"} ${i.chunk.type}:\n${i.text}`)
    .join("\n\n");
}
