// Keeps what the model is sent inside its context window once the server has said it is too
// long (a ContextOverflowError). The history itself stays whole; only the request shrinks:
// first the oldest tool outputs become pointers to their saved text (the model can read_file
// them back), then the oldest steps are left out whole (a call never without its result), and
// last, the newest outputs are cut to their head and tail. Each further overflow lowers the
// target, so an estimate that runs low still converges.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ContextOverflowError, Message, ToolMessage, ToolSchema } from "@hands/llm";

/** Characters per token for the estimate: low on purpose (code and JSON tokenize densely). */
const CHARS_PER_TOKEN = 3;
/** Tokens a message costs beyond its text (role, ids, separators). */
const MESSAGE_OVERHEAD = 8;
/** Share of the window the prompt may fill, leaving room for the reply. */
const FILL = 0.8;
/** Each further overflow at the same target shrinks it by this factor. */
const BACKOFF = 0.7;
/** Below this the window is too small to do anything in. */
const MIN_TARGET = 256;
/** Outputs shorter than this (characters) are not worth replacing by a pointer. */
const POINTER_WORTH = 600;
/** How many times one step may shrink and retry before the run gives up. */
export const MAX_OVERFLOW_RETRIES = 6;

const tokensOf = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

function messageTokens(m: Message): number {
  let chars = m.content.length;
  if (m.role === "assistant")
    for (const c of m.toolCalls ?? []) chars += c.name.length + c.arguments.length + 40;
  if (m.role === "tool") chars += m.toolCallId.length + m.name.length;
  return tokensOf(chars) + MESSAGE_OVERHEAD;
}

export class ContextWindow {
  /** Estimated tokens the prompt may use; undefined until the first overflow. */
  private target: number | undefined;
  private readonly sizes = new WeakMap<Message, number>();
  /** Stand-ins, kept so the same message shrinks to the same object (the encoder's prefix reuse). */
  private readonly pointers = new WeakMap<Message, ToolMessage>();
  private readonly cuts = new WeakMap<Message, { max: number; message: ToolMessage }>();
  private saved = 0;

  constructor(
    /** Where elided tool outputs are saved for read_file (the run's output dir), if any. */
    private readonly saveDir?: string,
  ) {}

  /** The window the server named (or our estimate of it), for the context hook. */
  get limitTokens(): number | undefined {
    return this.target === undefined ? undefined : Math.floor(this.target / FILL);
  }

  /**
   * The server rejected `sent` as too long: lower the target below both what it named and
   * what was sent. Returns false when the target is already as small as it can go.
   */
  overflowed(error: ContextOverflowError, sent: readonly Message[], tools: readonly ToolSchema[]): boolean {
    const sentTokens = this.tokens(sent) + this.toolTokens(tools);
    // The server's own figure when it names one (scaled to our estimate's, when it also names
    // the prompt's size); else a good deal less than what was just rejected.
    const ratio = error.limitTokens && error.promptTokens ? Math.max(1, sentTokens / error.promptTokens) : 1;
    const candidates = [
      error.limitTokens ? Math.floor(error.limitTokens * FILL * ratio) : Math.floor(sentTokens * BACKOFF),
    ];
    if (this.target !== undefined) candidates.push(Math.floor(this.target * BACKOFF));
    const before = this.target;
    this.target = Math.max(MIN_TARGET, Math.min(...candidates));
    return before === undefined || this.target < before;
  }

  /** `messages` shrunk to the target (unchanged when it fits or no overflow was seen yet). */
  fit(messages: Message[], taskIndex: number, tools: readonly ToolSchema[]): Message[] {
    if (this.target === undefined) return messages;
    const budget = this.target - this.toolTokens(tools);
    let total = this.tokens(messages);
    if (total <= budget) return messages;

    const out = [...messages];
    const keepFrom = lastStepStart(out, taskIndex);
    // Everything but the system prompt, the task and the newest step may shrink, oldest first.
    const shrinkable = (i: number) => i > 0 && i !== taskIndex && i < keepFrom;
    // 1. The oldest tool outputs become pointers.
    for (let i = 1; i < keepFrom && total > budget; i++) {
      const m = out[i]!;
      // A pointer costs about 80 tokens: shorter outputs stay as they are.
      if (m.role !== "tool" || m.content.length < POINTER_WORTH || !shrinkable(i)) continue;
      const pointer = this.pointerFor(m);
      total -= this.size(m) - this.size(pointer);
      out[i] = pointer;
    }
    if (total <= budget) return out;
    // 2. The oldest steps (a message and the tool results after it) are left out whole.
    const dropped = new Set<number>();
    for (let i = 1; i < keepFrom && total > budget; ) {
      if (!shrinkable(i)) {
        i++;
        continue;
      }
      const end = stepEnd(out, i, taskIndex);
      for (let j = i; j < end; j++) {
        total -= this.size(out[j]!);
        dropped.add(j);
      }
      i = end;
    }
    const note: Message = {
      role: "user",
      content: `[${dropped.size} earlier messages are left out to fit the model's context window${this.saveDir ? `; tool outputs that were shortened are saved under ${this.saveDir}` : ""}. Continue from the latest step.]`,
    };
    const kept: Message[] = [];
    out.forEach((m, i) => {
      if (!dropped.has(i)) kept.push(m);
      if (i === taskIndex && dropped.size) kept.push(note);
    });
    total += dropped.size ? this.size(note) : 0;
    if (total <= budget) return kept;
    // 3. What is left is still too long (a huge newest output): cut each tool output to fit.
    const outputs = kept.filter((m) => m.role === "tool").length || 1;
    const share = Math.max(
      200,
      Math.floor(((budget - (total - this.outputTokens(kept))) / outputs) * CHARS_PER_TOKEN),
    );
    return kept.map((m) => (m.role === "tool" && m.content.length > share ? this.cut(m, share) : m));
  }

  private cut(m: ToolMessage, max: number): ToolMessage {
    const known = this.cuts.get(m);
    if (known?.max === max) return known.message;
    const message = cutMiddle(m, max);
    this.cuts.set(m, { max, message });
    return message;
  }

  private outputTokens(messages: readonly Message[]): number {
    return messages.reduce((n, m) => n + (m.role === "tool" ? this.size(m) : 0), 0);
  }

  private pointerFor(m: ToolMessage): ToolMessage {
    let pointer = this.pointers.get(m);
    if (pointer) return pointer;
    const path = this.save(m);
    const where = path
      ? `the full output is saved at ${path}; read it with read_file if you need it again`
      : "run the call again if you need it";
    pointer = {
      ...m,
      content: `[output of ${m.name} (${m.content.length} chars) left out to fit the model's context window: ${where}]`,
    };
    this.pointers.set(m, pointer);
    return pointer;
  }

  private save(m: ToolMessage): string | undefined {
    if (!this.saveDir) return undefined;
    try {
      mkdirSync(this.saveDir, { recursive: true });
      const path = join(this.saveDir, `elided-${++this.saved}-${m.name.replace(/[^\w.-]/g, "_")}.txt`);
      writeFileSync(path, m.content);
      return path;
    } catch {
      return undefined; // best effort: the pointer then says to run the call again
    }
  }

  private size(m: Message): number {
    let n = this.sizes.get(m);
    if (n === undefined) {
      n = messageTokens(m);
      this.sizes.set(m, n);
    }
    return n;
  }

  private tokens(messages: readonly Message[]): number {
    let n = 0;
    for (const m of messages) n += this.size(m);
    return n;
  }

  private toolTokens(tools: readonly ToolSchema[]): number {
    return tools.length ? tokensOf(JSON.stringify(tools).length) : 0;
  }
}

/** Index of the newest step's first message: the model's last turn (and all after it) stays whole. */
function lastStepStart(messages: readonly Message[], taskIndex: number): number {
  for (let i = messages.length - 1; i > taskIndex; i--) if (messages[i]!.role === "assistant") return i;
  return messages.length;
}

/** The end (exclusive) of the step starting at `from`: a message and the tool results after it. */
function stepEnd(messages: readonly Message[], from: number, taskIndex: number): number {
  let end = from + 1;
  while (end < messages.length && end !== taskIndex && messages[end]!.role === "tool") end++;
  return end;
}

function cutMiddle(m: ToolMessage, max: number): ToolMessage {
  const head = Math.floor(max * 0.6);
  const tail = max - head;
  const cut = m.content.length - head - tail;
  return {
    ...m,
    content: `${m.content.slice(0, head)}\n\n[… ${cut} characters cut to fit the model's context window …]\n\n${m.content.slice(-tail)}`,
  };
}
