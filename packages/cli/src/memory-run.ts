// Memory for a run: loaded only when --context-budget (or --memory) is on, so a plain run
// never pays for SQLite. Assembles each step's context within the budget, gives the model a
// recall tool, and after the run keeps what it learned for the workspace's next tasks.
import { join } from "node:path";
import type { EventSource, RecallSource, RunResult } from "@hands/agent";
import type { Message } from "@hands/llm";
import { MemoryEventBridge } from "./memory-events.js";
import { repoFacts, scanProject } from "./project-scan.js";

/** Context windows of common models, in tokens; others are assumed to have 128k. */
const WINDOWS: [RegExp, number][] = [
  [/claude/, 200_000],
  [/gpt-4\.1/, 1_000_000],
  [/gpt-4o|gpt-5|o[134]/, 128_000],
  [/llama|qwen|mistral|gemma/, 32_000],
];

/** The default budget: a share (half) of the model's context window. */
export function defaultContextBudget(model: string): number {
  const w = WINDOWS.find(([re]) => re.test(model))?.[1] ?? 128_000;
  return Math.floor(w / 2);
}

export interface RunMemory {
  context: (history: readonly Message[], step: number) => Promise<Message[]>;
  recall: RecallSource;
  /** Memory moves, for the run's event stream. */
  events: EventSource;
  finish(task: string, result: RunResult): Promise<void>;
}

export async function openRunMemory(opts: {
  dataDir: string;
  runId: string;
  workspace: string;
  task: string;
  budget: number;
}): Promise<RunMemory> {
  const { ContextAssembler, FeedbackTracker, Memory } = await import("@hands/memory");
  const bridge = new MemoryEventBridge((): number => memory.step);
  const memory = new Memory({
    path: join(opts.dataDir, "memory.db"),
    scope: opts.runId,
    policy: { workingBudget: opts.budget },
    onEvent: bridge.onEvent,
  });
  const learned = await memory.recallWorkspace(opts.workspace, opts.task, Math.min(800, opts.budget / 10));
  const preamble = learned.items.length
    ? `What earlier tasks in this workspace taught (may be out of date):\n${learned.items.map((i) => `- ${i.text}`).join("\n")}`
    : undefined;
  const assembler = new ContextAssembler(memory, {
    budget: opts.budget,
    feedback: new FeedbackTracker(memory),
    ...(preamble ? { preamble } : {}),
  });
  return {
    context: (history, step) => assembler.assemble(history, step),
    recall: { recall: (id) => assembler.recall(id) },
    events: bridge.source,
    async finish(task, result) {
      try {
        await assembler.flush();
        const commands = commandsThatWorked(result.messages);
        await memory.learn(opts.workspace, {
          task,
          outcome: `${result.status}${result.answer ? `: ${result.answer.slice(0, 400)}` : ""}`,
          commands,
          facts: repoFacts(scanProject(opts.workspace), commands),
        });
      } finally {
        memory.close();
      }
    },
  };
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
