// Sub-agents: the `task` tool starts a child agent with a fresh context (only the prompt it is
// given), its own tool set and step budget, and a token budget inside the parent's. The parent
// sees the child's final answer as one tool result; the child's whole run goes to its own
// trace (and, with memory on, its own memory scope), linked from the parent's by a
// subagent_start event. Several task calls of one turn run in parallel (the tool is read-only
// by itself: every call its child makes goes through the same approvals), at most
// `maxConcurrent` at a time. Aborting the parent aborts them.
import { randomUUID } from "node:crypto";
import type { Agent, RunResult } from "./agent.js";
import type { TokenBudget } from "./budget.js";
import type { AgentEvent, AgentEventInput } from "./events.js";
import type { Tool, ToolResult } from "./tools/types.js";

export type ChildToolSet = "read-only" | "all";

/** What the session gives the child it builds. */
export interface ChildRequest {
  runId: string;
  tools: ChildToolSet;
  maxSteps: number;
  parentBudget: TokenBudget | undefined;
}

/** A child built by the session: the agent, where its trace goes, and what to close after. */
export interface Child {
  agent: Agent;
  tracePath?: string;
  /** Every event of the child's run (its trace writer). */
  onEvent?: (event: AgentEvent) => void;
  /** The model it runs on (for the parent's subagent_start event). */
  model: string;
  /** Its own memory scope, when memory is on (the parent's trace links it). */
  memoryScope?: string;
  close?: () => void | Promise<void>;
}

export interface SubagentOptions {
  /** Builds a child for one task call. */
  child: (request: ChildRequest) => Child | Promise<Child>;
  /** Children running at once (default 4); more calls wait for a free slot. */
  maxConcurrent?: number;
  /** A child's step limit when the call does not name one (default 30). */
  maxSteps?: number;
}

/** A counting semaphore whose waits end with the signal. */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(size: number) {
    this.free = Math.max(1, size);
  }
  async take(signal: AbortSignal): Promise<() => void> {
    if (this.free > 0) {
      this.free--;
      return () => this.give();
    }
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal.removeEventListener("abort", stop);
        resolve();
      };
      const stop = () => {
        const at = this.waiting.indexOf(go);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal.reason ?? new Error("aborted"));
      };
      if (signal.aborted) return stop();
      this.waiting.push(go);
      signal.addEventListener("abort", stop, { once: true });
    });
    return () => this.give();
  }
  private give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

/** One child run, start to end, reported on `emit`; the result as the parent's tool result. */
export async function runChild(
  options: SubagentOptions,
  slots: Slots,
  task: { prompt: string; tools: ChildToolSet; maxSteps?: number },
  parent: {
    signal: AbortSignal;
    budget?: TokenBudget;
    emit?: (e: AgentEventInput) => void;
    callId: string;
    step: number;
  },
): Promise<ToolResult & { result?: RunResult }> {
  let release: () => void;
  try {
    release = await slots.take(parent.signal);
  } catch {
    return { output: "ERROR: the run was aborted before this sub-agent started.", isError: true };
  }
  const runId = `task-${randomUUID().slice(0, 8)}`;
  let child: Child | undefined;
  try {
    child = await options.child({
      runId,
      tools: task.tools,
      maxSteps: task.maxSteps ?? options.maxSteps ?? 30,
      parentBudget: parent.budget,
    });
    parent.emit?.({
      type: "subagent_start",
      step: parent.step,
      callId: parent.callId,
      runId,
      task: task.prompt,
      model: child.model,
      tools: child.agent.registry.names,
      ...(child.tracePath ? { tracePath: child.tracePath } : {}),
      ...(child.memoryScope ? { memoryScope: child.memoryScope } : {}),
    });
    const result = await child.agent.run(task.prompt, {
      signal: parent.signal,
      ...(child.onEvent ? { onEvent: child.onEvent } : {}),
    });
    parent.emit?.({
      type: "subagent_end",
      step: parent.step,
      callId: parent.callId,
      runId,
      status: result.status,
      steps: result.steps,
      usage: result.usage,
      durationMs: result.durationMs,
      ...(result.reason ? { reason: result.reason } : {}),
    });
    const data = {
      runId,
      status: result.status,
      steps: result.steps,
      ...(child.tracePath ? { tracePath: child.tracePath } : {}),
    };
    if (result.status === "done")
      return {
        output: result.answer || "(the sub-agent finished without an answer)",
        data,
        usage: result.usage,
        result,
      };
    return {
      output: `ERROR: the sub-agent did not finish (${result.status}): ${result.reason ?? "no reason given"}`,
      isError: true,
      data,
      usage: result.usage,
      result,
    };
  } catch (err) {
    // A child that cannot be built or crashes is this call's error, never the parent's end.
    return {
      output: `ERROR: the sub-agent failed: ${(err as Error)?.message ?? String(err)}`,
      isError: true,
    };
  } finally {
    release();
    await Promise.resolve(child?.close?.()).catch(() => {});
  }
}

export const TASK_TOOL = "task";

/** The task tool: one child per call, in parallel with the turn's other task calls. */
export function createTaskTool(options: SubagentOptions): Tool {
  const slots = new Slots(options.maxConcurrent ?? 4);
  return {
    name: TASK_TOOL,
    description: [
      "Hand a self-contained piece of work to a sub-agent with a fresh context: it sees only `prompt`",
      "(say everything it needs: paths, what to look for, what to report), works with its own tools,",
      "and its final answer comes back as this call's result. Several task calls in one turn run in",
      'parallel: use them for independent parts (e.g. exploring different folders). tools: "read-only"',
      '(default: explorers that look and report) or "all" (may edit files and run commands).',
    ].join(" "),
    parameters: {
      type: "object",
      properties: {
        description: { type: "string", description: "A few words naming the task (for the live view)." },
        prompt: { type: "string", minLength: 1, description: "The whole task for the sub-agent." },
        tools: { type: "string", enum: ["read-only", "all"] },
        max_steps: { type: "integer", minimum: 1, maximum: 100 },
      },
      required: ["prompt"],
      additionalProperties: false,
    },
    readOnly: true,
    concurrent: true,
    async execute(args, ctx) {
      const a = args as { prompt: string; tools?: ChildToolSet; max_steps?: number };
      const { result: _r, ...out } = await runChild(
        options,
        slots,
        {
          prompt: a.prompt,
          tools: a.tools ?? "read-only",
          ...(a.max_steps ? { maxSteps: a.max_steps } : {}),
        },
        {
          signal: ctx.signal,
          ...(ctx.budget ? { budget: ctx.budget } : {}),
          ...(ctx.emit ? { emit: ctx.emit } : {}),
          callId: ctx.callId ?? runIdless(),
          step: ctx.step ?? 0,
        },
      );
      return out;
    },
  };
}

function runIdless(): string {
  return `call-${randomUUID().slice(0, 8)}`;
}
