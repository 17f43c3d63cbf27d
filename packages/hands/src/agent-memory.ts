// Memory for the agent: loaded only when memory is on (a budget, --memory or memory.enabled),
// so a plain run never pays for SQLite. One AgentMemory serves a one-shot run or a whole
// interactive conversation: it assembles each step's context within the budget, answers the
// recall tool, puts memory moves on the run's event stream, keeps what each task taught the
// workspace, compacts a conversation on /compact, and runs lifecycle maintenance when due.
import { existsSync } from "node:fs";
import {
  type AgentOptions,
  type ContextInfo,
  type EventSource,
  type RecallSource,
  type RunResult,
  recallTool,
  type Tool,
} from "@hands/agent";
import type { Message, Provider } from "@hands/llm";
import type { ContextAssembler, Memory, SnapshotPoint } from "@hands/memory";
import { afterNextRequest, onEachRequestLeft } from "./after-request.js";
import { MemoryEventBridge } from "./memory-events.js";
import {
  hashedMemoryFile,
  type MemoryHost,
  maintainIfDue,
  memoryBudget,
  type OpenedMemory,
  openMemory,
} from "./memory-open.js";
import { repoFacts, scanProject } from "./project-scan.js";
import { RequestGate } from "./request-gate.js";

/** Tokens of conversation a /compact summarises (the newest; older ones stay recallable). */
const COMPACT_TOKENS = 16_000;
/**
 * Share of the model's window (as the agent loop states it) a context assembled by memory may
 * take: the loop lets a request fill 80% of the window by its own estimate, 3 characters a
 * token where memory counts 4 (so 0.35 here is ~0.47 there), leaving a third of the window
 * for the tool schemas, message framing and the reply.
 */
const WINDOW_SHARE = 0.35;

export class AgentMemory {
  private assembler: ContextAssembler | undefined;
  /** The agent's current step, and the steps of earlier requests of the conversation. */
  private step = 0;
  private stepBase = 0;
  /** Estimated tokens of the latest assembled context (on the scale of the budget). */
  contextTokens = 0;
  private readonly bridge = new MemoryEventBridge(() => this.step);
  /** The open memory file (deferred: from `settle` on). */
  private opened: OpenedMemory | undefined;
  private settling: Promise<void> | undefined;
  /** The first request, sent before a deferred memory was open: stored by `settle`. */
  private sentBeforeOpen: { history: Message[]; step: number; task: number } | undefined;
  /** Why a deferred memory could not be opened (then requests go out as they are). */
  private unavailable: string | undefined;
  /** Snapshot points taken during steps, saved between requests. */
  private readonly snapshotPoints: SnapshotPoint[] = [];
  /** A step's writes wait for its request to leave (see `provider`). */
  private readonly gate = new RequestGate();

  private constructor(
    readonly budget: number,
    private readonly host: MemoryHost,
    private readonly workspace: string,
    readonly scope: string,
  ) {}

  /**
   * A sub-agent's memory: the same file and settings, a scope of its own (under this one's
   * name), so what the child sees and does is neither in the parent's recall nor a sibling's.
   */
  child(runId: string): Promise<AgentMemory> {
    return AgentMemory.open(this.host, this.workspace, `${this.scope}/${runId}`);
  }

  static async open(host: MemoryHost, workspace: string, scope: string): Promise<AgentMemory> {
    const self = new AgentMemory(memoryBudget(host), host, workspace, scope);
    self.opened = await openMemory(host, scope, self.bridge.onEvent);
    return self;
  }

  /**
   * Memory whose file does not exist yet, so nothing in it can shape the first request (no
   * lessons of earlier tasks, no earlier conversation): that request is sent as the assembler
   * would send it (the conversation as it is) without loading memory, and `settle` — called once
   * the request has left, while the model answers — makes the file and stores the request, as if
   * memory had been open all along. Undefined when the file exists (use `open`), or when its name
   * depends on an embeddings endpoint (it is connected to first).
   */
  static deferred(host: MemoryHost, workspace: string, scope: string): AgentMemory | undefined {
    if (host.settings.embeddings || existsSync(hashedMemoryFile(host.dataDir))) return undefined;
    return new AgentMemory(memoryBudget(host), host, workspace, scope);
  }

  /**
   * `base` as the agent should use it with this memory: each request's leaving starts the writes
   * its step deferred, and a deferred memory is opened (settled) as the first one leaves.
   */
  provider(base: Provider): Provider {
    const told = onEachRequestLeft(base, this.gate.left);
    return this.unsettled ? afterNextRequest(told, () => this.settle()) : told;
  }

  /** A deferred memory that has not been opened yet (see `settle`). */
  get unsettled(): boolean {
    return !this.opened && !this.settling;
  }

  /**
   * Opens a deferred memory and stores the request sent before it was open; at once when open.
   * A file that cannot be made is a warning: the session goes on without memory (`unavailable`).
   */
  settle(): Promise<void> {
    this.settling ??= (async () => {
      if (this.opened) return;
      try {
        this.opened = await openMemory(this.host, this.scope, this.bridge.onEvent);
      } catch (err) {
        this.unavailable = (err as Error).message;
        this.host.warn(`memory: ${this.unavailable}; this session goes on without memory`);
        return;
      }
      const first = this.sentBeforeOpen;
      this.sentBeforeOpen = undefined;
      if (!first) return;
      this.assembler = await this.newAssembler(first.history[first.task]?.content ?? "");
      await this.assembler.assemble(first.history, first.step, first.task);
      // Stored before the answer is used, as the request it was sent as.
      await this.assembler.written();
      this.contextTokens = this.assembler.lastTokens;
    })();
    return this.settling;
  }

  /** Lets held writes run (before waiting for them outside a request: learn, compact, close). */
  private release(): void {
    this.gate.left();
  }

  private get memory(): Memory {
    if (!this.opened) throw new Error(this.unavailable ?? "memory is not open yet");
    return this.opened.memory;
  }

  /** The Agent's `context` hook. */
  readonly context = async (
    history: readonly Message[],
    step: number,
    info?: ContextInfo,
  ): Promise<Message[]> => {
    const task = info?.taskIndex ?? 1;
    // This step's writes wait for its request; an earlier step's held writes run first.
    this.gate.left();
    this.gate.close();
    if (this.unsettled && !this.sentBeforeOpen && sentAsItIs(history, step, task, this.budget)) {
      this.step = step;
      this.sentBeforeOpen = { history: history.slice(), step: this.stepBase + step, task };
      return history.slice();
    }
    // Before the step changes: what settling stores belongs to the step it was sent at.
    await this.settle();
    if (this.unavailable) return history.slice();
    // A new run of the conversation starts again at step 1.
    if (step <= this.step) this.stepBase += this.step;
    this.step = step;
    this.assembler ??= await this.newAssembler(history[task]?.content ?? "");
    // Steps count on across a conversation's requests, so each chunk's step (used to find
    // neighbouring turns) is unique in the conversation.
    // The model said its window is smaller than the budget assumed: assemble within it, so
    // memory chooses what is left out rather than the loop's last-resort cutting.
    if (info?.windowTokens) this.fitWindow(info.windowTokens);
    const compactions = this.assembler.compactions;
    const sent = await this.assembler.assemble(history, this.stepBase + step, task);
    this.contextTokens = this.assembler.lastTokens;
    if (this.assembler.compactions !== compactions) await this.markSnapshot("compaction point", false);
    return sent;
  };

  /**
   * After the provider said the context overflowed: a lower budget (`factor` of it), and the
   * next step is a compaction point. Returns the new budget (undefined before the first step).
   * The entry point for the agent's context-overflow hook.
   */
  shrink(factor = 0.7): number | undefined {
    return this.assembler?.shrink(factor);
  }

  /** Lowers the budget to fit a model window of `windowTokens` (see WINDOW_SHARE); returns it. */
  fitWindow(windowTokens: number): number | undefined {
    return this.assembler?.setBudget(Math.floor(windowTokens * WINDOW_SHARE));
  }

  /** The budget now (lowered after a context overflow). */
  get currentBudget(): number {
    return this.assembler?.budget ?? this.budget;
  }

  readonly recall: RecallSource = {
    recall: async (id) => {
      this.release();
      await this.settle();
      if (this.assembler) return this.assembler.recall(id);
      const { recallText } = await import("@hands/memory");
      return recallText(this.memory, id);
    },
  };

  /** Memory moves, for the run's event stream (Agent eventSources). */
  get events(): EventSource {
    return this.bridge.source;
  }

  /** What an Agent needs to use this memory: the context hook and the event source. */
  agentOptions(): Pick<AgentOptions, "context" | "eventSources"> {
    return { context: this.context, eventSources: [this.events] };
  }

  /** The recall tool, answered from this memory. */
  get tool(): Tool {
    return recallTool(this.recall) as Tool;
  }

  /** The first task of a conversation recalls what earlier tasks taught the workspace. */
  private async newAssembler(task: string): Promise<ContextAssembler> {
    const { ContextAssembler, FeedbackTracker } = await import("@hands/memory");
    const memory = this.memory;
    // Its "accessed" marks are written once the request has left, with the step's messages.
    const learned = await memory.recallWorkspace(this.workspace, task, Math.min(800, this.budget / 10), {
      touch: false,
    });
    this.gate.defer(() => {
      try {
        memory.touched(learned.items, task);
      } catch (err) {
        this.host.warn(`memory: could not mark what was recalled (${(err as Error).message})`);
      }
    });
    const preamble = learned.items.length
      ? `What earlier tasks in this workspace taught (may be out of date):\n${learned.items.map((i) => `- ${i.text}`).join("\n")}`
      : undefined;
    return new ContextAssembler(this.memory, {
      budget: this.budget,
      feedback: new FeedbackTracker(this.memory),
      ...(preamble ? { preamble } : {}),
      defer: this.gate.defer,
    });
  }

  /** After a task (a run, or one request of a session): its outcome, the commands that worked, repository facts. */
  async learn(task: string, result: RunResult): Promise<void> {
    this.release();
    await this.settle();
    if (this.unavailable) return;
    await this.assembler?.flush();
    await this.saveSnapshotPoints();
    // A run the model never answered (a refused key, an unknown model, no server) taught
    // nothing about the workspace: "Task: hi Outcome: error" is noise in every later context.
    if (!modelAnswered(task, result.messages)) return;
    const commands = commandsThatWorked(result.messages);
    await this.memory.learn(this.workspace, {
      task,
      outcome: `${result.status}${result.answer ? `: ${result.answer.slice(0, 400)}` : result.reason ? ` (${result.reason.slice(0, 200)})` : ""}`,
      commands,
      facts: repoFacts(scanProject(this.workspace), commands),
    });
  }

  /**
   * /compact: the conversation's requests, answers and calls become one summary in memory
   * (by the configured summarizer) that points back to them; returns the message that opens
   * the new history. Everything stays recallable. Undefined: memory has not seen the
   * conversation (e.g. a resumed session before its first request).
   */
  async compact(): Promise<string | undefined> {
    this.release();
    await this.settle();
    if (this.unavailable || !this.assembler) return undefined;
    await this.assembler.flush();
    const picked: string[] = [];
    let tokens = 0;
    for (const c of this.memory.store.list({
      scope: this.memory.scope,
      types: ["user_input", "agent_response", "tool_call"],
      uncompressedOnly: true,
      order: "newest",
      limit: 2000,
    })) {
      if (tokens + c.tokens > COMPACT_TOKENS) break;
      tokens += c.tokens;
      picked.push(c.id);
    }
    if (picked.length === 0) return undefined;
    const summary = await this.memory.compress(picked.reverse(), "the user compacted the conversation");
    await this.markSnapshot("/compact");
    // The next request starts a new history; the old one is still found by retrieval.
    this.assembler = undefined;
    return `Summary of the conversation so far (recall "${summary.id}" for all of it):\n${summary.content}`;
  }

  /**
   * Marks this point of the memory's log as a snapshot (the dashboard lists them and replays the
   * map to one). In the middle of a step the point is only read (a few indexed counts) and saved
   * with the next save, between requests: no write, and no new table, on the step's path.
   */
  private async markSnapshot(reason: string, save = true): Promise<void> {
    try {
      const { snapshotPoint, SqliteStore } = await import("@hands/memory");
      const store = this.memory.store;
      if (!(store instanceof SqliteStore)) return;
      this.snapshotPoints.push(
        snapshotPoint(store, { scope: this.memory.scope, reason, step: this.stepBase + this.step }),
      );
    } catch {
      // A mark is for people looking back: never a reason for a step or a close to fail.
    }
    if (save) await this.saveSnapshotPoints();
  }

  /** Saves the points marked during the steps (see markSnapshot). */
  private async saveSnapshotPoints(): Promise<void> {
    if (this.snapshotPoints.length === 0) return;
    try {
      const { saveSnapshotMarks, SqliteStore } = await import("@hands/memory");
      if (this.memory.store instanceof SqliteStore)
        saveSnapshotMarks(this.memory.store, this.snapshotPoints.splice(0));
    } catch {
      // As above.
    }
  }

  /** Stores what is pending, runs maintenance when due, closes the file. */
  async close(): Promise<void> {
    // A deferred memory never used (no request was sent) has nothing to store.
    if (this.unsettled) return;
    this.release();
    await this.settle();
    if (this.unavailable) return;
    try {
      await this.assembler?.flush();
      // For `hands memory show`: what the last request held, and why.
      if (this.assembler)
        this.memory.store.saveContext(this.memory.scope, {
          ...this.assembler.describe(),
          workspace: this.workspace,
        });
      maintainIfDue(this.memory, this.opened!.path, this.host.settings.maintainEveryMs);
      if (this.assembler) await this.markSnapshot("session end");
      else await this.saveSnapshotPoints();
    } finally {
      this.memory.close();
    }
  }
}

/**
 * Whether the assembler would send this step's history as it is when memory holds nothing yet:
 * the first step of a new conversation (the system prompt and the task) well within the budget
 * (memory counts about 4 characters a token; here a token per character, to be sure).
 */
function sentAsItIs(history: readonly Message[], step: number, task: number, budget: number): boolean {
  return (
    step === 1 &&
    task === 1 &&
    history.length === 2 &&
    history.every((m) => m.role !== "assistant") &&
    history.reduce((n, m) => n + m.content.length, 0) <= budget
  );
}

/**
 * Whether the model answered at least once in the run of `task`: an assistant message after
 * the task's (or, when the task was sent with more text, after the last user message).
 */
export function modelAnswered(task: string, messages: readonly Message[]): boolean {
  const users = messages.flatMap((m, i) => (m.role === "user" ? [i] : []));
  const own = users.filter((i) => messages[i]!.content === task).at(-1) ?? users.at(-1) ?? -1;
  return messages.slice(own + 1).some((m) => m.role === "assistant");
}

/** run_command calls whose result was not an error, in order, without repeats. */
export function commandsThatWorked(messages: Message[]): string[] {
  const calls = new Map<string, string>();
  const out = new Set<string>();
  for (const m of messages) {
    if (m.role === "assistant")
      for (const c of m.toolCalls ?? []) {
        if (c.name !== "run_command") continue;
        try {
          const args = JSON.parse(c.arguments) as { command?: unknown };
          if (typeof args.command === "string") calls.set(c.id, args.command);
        } catch {
          // Malformed arguments never ran.
        }
      }
    if (
      m.role === "tool" &&
      !m.isError &&
      calls.has(m.toolCallId) &&
      !/exit code [1-9]/i.test(m.content.slice(0, 200))
    )
      out.add(calls.get(m.toolCallId)!);
  }
  return [...out].slice(-10);
}
