// Builds what the model sees each step from the agent's full history, within a token budget:
// the system prompt and the task always; then the latest step; then the most recent steps that
// fit a share of the budget; then, from everything older, what retrieval finds most relevant
// to the current step — verbatim or compressed (with the id that `recall` expands).
// Messages sent unchanged are the history's own objects (never mutated), so the request
// encoder can reuse their bytes; changed ones are new objects.
import type { Message } from "@hands/llm";
import { type ContextFeedback, MAX_JUDGED, type ShownChunk, type StepView } from "./feedback.js";
import { type Memory, newId, type RetrievedItem } from "./memory.js";
import { estimateTokens } from "./text.js";
import type { Chunk, ChunkType } from "./types.js";

export interface ContextOptions {
  /** Tokens for the whole context. */
  budget: number;
  /** Share of what is left after system + task + memory note kept for the most recent steps. */
  recentShare?: number;
  /** Workspace knowledge from earlier tasks, shown after the task. */
  preamble?: string;
  /** Told, once a step's new messages are stored, what the step before showed (see FeedbackTracker). */
  feedback?: ContextFeedback;
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

/** A message's cost against the budget: its text, plus 4 tokens of framing. */
function messageTokens(m: Message): number {
  return estimateTokens(messageText(m)) + 4;
}

function chunkType(m: Message): ChunkType {
  if (m.role === "user") return "user_input";
  if (m.role === "tool") return "tool_result";
  if (m.role === "system") return "system_event";
  return m.toolCalls?.length ? "tool_call" : "agent_response";
}

export class ContextAssembler {
  private seen = 0;
  /** System prompt and task: always sent, never retrieved. */
  private readonly fixedIds: string[] = [];
  private readonly groups: Group[] = [];
  private readonly chunkToGroup = new Map<string, number>();
  /** Characters sent over the run (for reports). */
  sentChars = 0;
  /** Estimated tokens of the latest assembled context, on the budget's scale. */
  lastTokens = 0;
  /** Time the last step's messages took to store (off the critical path). */
  ingestMs = 0;
  private writing: Promise<void> = Promise.resolve();

  /** Waits until every message seen so far is stored (e.g. before closing the memory). */
  flush(): Promise<void> {
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

  constructor(
    private readonly memory: Memory,
    private readonly options: ContextOptions,
  ) {}

  /**
   * Maps the full history to the messages to send; the history is never changed. `task`: the
   * index of the current request — in a conversation, a later user message than history[1]
   * (which opened it); it is always sent, and the goal and the retrieval query follow it.
   */
  async assemble(history: readonly Message[], step: number, task = 1): Promise<Message[]> {
    const memory = this.memory;
    await this.flush();
    memory.step = step;
    if (this.seen === 0 && history.length >= 2) {
      const sys = await memory.add({
        type: "system_event",
        content: history[0]!.content,
        layer: "long_term",
        meta: { role: "system" },
      });
      const first = await memory.add({
        type: "user_input",
        content: history[1]!.content,
        importance: 1,
        meta: { role: "task" },
      });
      this.fixedIds.push(sys.id, first.id);
      this.seen = 2;
    }
    if (task !== this.task && history[task]) {
      this.task = task;
      memory.setGoal(history[task]!.content);
    }
    // New messages are grouped now but stored after retrieval: the query (the latest step)
    // then is not in the store, so its own one-off words do not count as rare matches.
    const pending = this.stage(history);
    const shownBefore = this.view;
    const head = history.slice(0, 2) as Message[];
    const preamble = this.options.preamble
      ? ({ role: "user", content: this.options.preamble } as Message)
      : undefined;
    let left = this.options.budget - head.reduce((n, m) => n + messageTokens(m), 0);
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
      left -= last.tokens;
    } else {
      const squeezed = this.squeeze(last, Math.max(200, left));
      chosen.set(lastIdx, squeezed.messages);
      left -= squeezed.tokens;
    }
    const pinned = task > 1 ? this.groupStarting(task) : undefined;
    if (pinned !== undefined && !chosen.has(pinned)) {
      chosen.set(pinned, this.groups[pinned]!.messages);
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
      recentLeft -= g.tokens;
      left -= g.tokens;
    }
    // Older steps: the best of the rest, by retrieval against the current step.
    const notes: string[] = [];
    const shown: ShownChunk[] = [];
    if (i >= 0 && left > 50) {
      const exclude = new Set<string>(this.fixedIds);
      for (const [gi] of chosen) for (const id of this.groups[gi]!.chunkIds) exclude.add(id);
      // The task, and the end of the latest step (where results and the next need show).
      const lastText = last.messages.map(messageText).join("\n");
      const query = `${history[task]?.content ?? ""}\n${lastText.slice(-1500)}`;
      // Labels cost tokens too: ask for less, then enforce the real cost below.
      const noteBudget = Math.floor((left - 40) * 0.75);
      let noteLeft = left - 40;
      const found = await memory.retrieve(query, {
        budget: noteBudget,
        exclude,
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
      for (const item of found.items) {
        const gi = this.chunkToGroup.get(item.chunk.id);
        // Not in this history: from earlier in the conversation (before a /compact), unless a summary.
        if (gi === undefined ? !fromEarlier(item.chunk) : gi > i || chosen.has(gi)) continue;
        const label = item.chunk.meta.tool
          ? `${item.chunk.meta.tool} result`
          : item.chunk.type.replace("_", " ");
        const note =
          item.form === "full"
            ? `[${item.chunk.id}] step ${item.chunk.step ?? "?"} ${label}:\n${item.text}`
            : `[${item.chunk.id}] step ${item.chunk.step ?? "?"} ${label} (compressed; recall "${item.chunk.id}" for the full text): ${item.text}`;
        const cost = estimateTokens(note) + 1;
        if (cost > noteLeft) continue;
        noteLeft -= cost;
        notes.push(note);
        shown.push({ id: item.chunk.id, text: item.text, retrieved: true });
        this.last.notes++;
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
    // Stored off the critical path: the request goes out first, the writes overlap the model's
    // latency. The next step (or flush) waits for them.
    this.writing = new Promise((resolve, reject) =>
      setImmediate(() => {
        const t = performance.now();
        this.persist(pending).then(() => {
          this.options.feedback?.observe(
            shownBefore,
            pending.map((p) => ({ id: p.id, message: p.m })),
          );
          this.ingestMs = performance.now() - t;
          resolve();
        }, reject);
      }),
    );
    // Handled here so a failed write never crashes the process; flush() still reports it.
    this.writing.catch(() => {});
    return out;
  }

  /** What the model is shown: the notes, then user input and tool results sent verbatim, newest first. */
  private stepView(out: Message[], chosen: Map<number, Message[]>, shown: ShownChunk[]): StepView {
    const groups = [...chosen.keys()].sort((a, b) => b - a);
    for (const gi of groups) {
      const ids = this.groups[gi]!.chunkIds;
      for (const [j, m] of chosen.get(gi)!.entries())
        if (m.role === "tool" || m.role === "user")
          shown.push({ id: ids[j]!, text: m.content, retrieved: false });
      if (shown.length >= MAX_JUDGED) break;
    }
    const fixed = out.slice(0, 2).map((m) => m.content);
    if (this.options.preamble) fixed.push(this.options.preamble);
    return { shown: shown.slice(0, MAX_JUDGED), fixed };
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
  private stage(history: readonly Message[]): { id: string; m: Message; k: number }[] {
    const pending: { id: string; m: Message; k: number }[] = [];
    for (let k = this.seen; k < history.length; k++) {
      const m = history[k]!;
      const id = newId();
      const toolFollows = m.role === "tool" && this.groups.length > 0;
      if (!toolFollows) this.groups.push({ start: k, messages: [], chunkIds: [], tokens: 0 });
      const g = this.groups[this.groups.length - 1]!;
      g.messages.push(m);
      g.chunkIds.push(id);
      g.tokens += estimateTokens(messageText(m) || "(empty)") + 4;
      this.chunkToGroup.set(id, this.groups.length - 1);
      pending.push({ id, m, k });
    }
    this.seen = history.length;
    return pending;
  }

  /** Records staged messages as chunks, with the ids the context already refers to. */
  private async persist(pending: { id: string; m: Message; k: number }[]): Promise<void> {
    for (const { id, m, k } of pending) {
      const meta: Record<string, string> = { role: m.role, index: String(k) };
      if (m.role === "tool") meta.tool = m.name;
      if (m.role === "tool" && m.isError) meta.error = "1";
      await this.memory.add({ id, type: chunkType(m), content: messageText(m) || "(empty)", meta });
    }
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
  const found = await memory.retrieve(key, { budget, fullOnly: true });
  if (found.items.length === 0) return `Nothing in memory matches "${key}".`;
  return found.items
    .map((i) => `[${i.chunk.id}] step ${i.chunk.step ?? "?"} ${i.chunk.type}:\n${i.text}`)
    .join("\n\n");
}
