// A run's events folded into its timeline: runs (a session's trace holds one per request), their
// steps, and in each step the request, the response, the tool calls with their approvals and
// results, memory moves, retries and corrections. Pure (no Node APIs): the server uses it for
// the runs list and the browser for the run page, where live events are added as they come.
import type { AgentEvent, MessageIdRanges, RunOutcome, TraceLiveness } from "@hands/agent";
import type { ToolCall, Usage } from "@hands/llm";

type Ev<T extends AgentEvent["type"]> = Extract<AgentEvent, { type: T }>;

export interface ToolView {
  callId: string;
  name: string;
  args: unknown;
  start: number;
  approval?: Omit<Ev<"approval">, "type" | "step" | "callId" | "name">;
  end?: Omit<Ev<"tool_end">, "type" | "step" | "callId" | "name">;
  /** A sub-agent this call started (the task tool): its run, trace (a run of its own) and outcome. */
  subagent?: {
    runId: string;
    tracePath?: string;
    model: string;
    status?: string;
    usage?: Usage;
    steps?: number;
  };
}

export interface StepView {
  /** Index of the run in the trace. */
  run: number;
  step: number;
  start: number;
  end?: number;
  messageCount?: number;
  chars?: number;
  /** The ids of the messages the request sent (undefined: a trace from before they were recorded). */
  sent?: MessageIdRanges;
  response?: {
    content: string;
    toolCalls: ToolCall[];
    finishReason: string;
    usage: Usage;
    durationMs: number;
  };
  thinking?: { text: string; tokens?: number; redacted?: boolean };
  retries: { time: number; attempt: number; delayMs: number; error: string }[];
  notices: string[];
  corrections: string[];
  tools: ToolView[];
  memory: Ev<"memory">[];
  /** The model routing chose for this step, and why. */
  choice?: { model: string; role: string; reason: string };
  /** Hooks that ran and did something, or failed. */
  hooks: { hook: string; event: string; outcome: string; message?: string }[];
}

/** A run: what its run_start event said, and what followed. */
export interface RunView extends Omit<Ev<"run_start">, "type" | "time"> {
  index: number;
  start: number;
  /** Last event time seen. */
  updated: number;
  plan?: string[];
  result?: RunOutcome & { time: number };
  steps: StepView[];
}

export class Timeline {
  readonly runs: RunView[] = [];
  /** Events that came before any run_start (a trace cut at its head, or another format). */
  orphans = 0;
  /** Bumped on every change, for views that re-render on it. */
  version = 0;

  constructor(events: Iterable<AgentEvent> = []) {
    for (const e of events) this.add(e);
  }

  private current(): RunView | undefined {
    return this.runs[this.runs.length - 1];
  }

  private stepOf(run: RunView, step: number, time: number): StepView {
    let s = run.steps[run.steps.length - 1];
    if (!s || s.step !== step) {
      s = run.steps.find((x) => x.step === step);
      if (!s) {
        s = {
          run: run.index,
          step,
          start: time,
          retries: [],
          notices: [],
          corrections: [],
          tools: [],
          memory: [],
          hooks: [],
        };
        run.steps.push(s);
      }
    }
    return s;
  }

  add(e: AgentEvent): void {
    this.version++;
    if (e.type === "run_start") {
      this.runs.push({
        index: this.runs.length,
        runId: e.runId,
        task: e.task,
        provider: e.provider,
        model: e.model,
        workspace: e.workspace,
        maxSteps: e.maxSteps,
        start: e.time,
        updated: e.time,
        steps: [],
      });
      return;
    }
    const run = this.current();
    if (!run) {
      this.orphans++;
      return;
    }
    run.updated = Math.max(run.updated, e.time);
    switch (e.type) {
      case "text_delta":
      case "thinking_delta":
      case "tool_output":
        return;
      case "plan":
        run.plan = e.items;
        return;
      case "result": {
        const { type: _t, ...outcome } = e;
        run.result = outcome;
        return;
      }
      default:
        break;
    }
    const s = this.stepOf(run, e.step, e.time);
    s.end = Math.max(s.end ?? e.time, e.time);
    switch (e.type) {
      case "model_request":
        s.start = e.time;
        s.messageCount = e.messageCount;
        s.chars = e.chars;
        if (e.sent) s.sent = e.sent;
        else delete s.sent;
        break;
      case "model_response":
        s.response = {
          content: e.content,
          toolCalls: e.toolCalls,
          finishReason: e.finishReason,
          usage: e.usage,
          durationMs: e.durationMs,
        };
        break;
      case "thinking":
        s.thinking = {
          text: e.text,
          ...(e.tokens !== undefined ? { tokens: e.tokens } : {}),
          ...(e.redacted ? { redacted: true } : {}),
        };
        break;
      case "model_notice":
        s.notices.push(e.message);
        break;
      case "model_retry":
        s.retries.push({ time: e.time, attempt: e.attempt, delayMs: e.delayMs, error: e.error });
        break;
      case "correction":
        s.corrections.push(e.text);
        break;
      case "tool_start":
        s.tools.push({ callId: e.callId, name: e.name, args: e.args, start: e.time });
        break;
      case "approval": {
        const { type: _t, step: _s, callId: _c, name: _n, ...approval } = e;
        const t = this.tool(s, e.callId, e.name, e.time);
        t.approval = approval;
        break;
      }
      case "tool_end": {
        const { type: _t, step: _s, callId: _c, name: _n, ...end } = e;
        this.tool(s, e.callId, e.name, e.time).end = end;
        break;
      }
      case "memory":
        s.memory.push(e);
        break;
      case "model_choice":
        s.choice = { model: e.model, role: e.role, reason: e.reason };
        break;
      case "hook":
        s.hooks.push({
          hook: e.hook,
          event: e.event,
          outcome: e.outcome,
          ...(e.message ? { message: e.message } : {}),
        });
        break;
      case "subagent_start":
        this.tool(s, e.callId, "task", e.time).subagent = {
          runId: e.runId,
          model: e.model,
          ...(e.tracePath ? { tracePath: e.tracePath } : {}),
        };
        break;
      case "subagent_end": {
        const t = this.tool(s, e.callId, "task", e.time);
        if (t.subagent) Object.assign(t.subagent, { status: e.status, usage: e.usage, steps: e.steps });
        break;
      }
    }
  }

  private tool(s: StepView, callId: string, name: string, time: number): ToolView {
    let t = s.tools.find((x) => x.callId === callId);
    if (!t) {
      t = { callId, name, args: undefined, start: time };
      s.tools.push(t);
    }
    return t;
  }

  /** Every step of every run, in order. */
  steps(): StepView[] {
    return this.runs.flatMap((r) => r.steps);
  }
}

/**
 * interrupted: the process writing the trace died before the run's result (killed, crashed);
 * unfinished: no result and no sign of a writer (a trace from an older Hands, or a copy).
 */
export type RunState = RunOutcome["status"] | "running" | "interrupted" | "unfinished";

/** How a run stands: its result; else whether the process writing its trace is alive (trace-live). */
export function runState(run: RunView, liveness: TraceLiveness): RunState {
  if (run.result) return run.result.status;
  return liveness === "running" ? "running" : liveness === "gone" ? "interrupted" : "unfinished";
}

/** Tokens in and out, cached tokens and cost over the steps (the result's usage once there). */
export function totals(run: RunView): { input: number; output: number; cached: number; costUsd: number } {
  const u = run.result?.usage;
  if (u)
    return {
      input: u.inputTokens,
      output: u.outputTokens,
      cached: u.cachedInputTokens ?? 0,
      costUsd: u.costUsd ?? 0,
    };
  const t = { input: 0, output: 0, cached: 0, costUsd: 0 };
  for (const s of run.steps) {
    const x = s.response?.usage;
    if (!x) continue;
    t.input += x.inputTokens;
    t.output += x.outputTokens;
    t.cached += x.cachedInputTokens ?? 0;
    t.costUsd += x.costUsd ?? 0;
  }
  return t;
}

/** Per step: the context sent (input tokens, or characters / 4 before the response) and the cost so far. */
export function stepSeries(steps: StepView[]): { x: number[]; context: (number | null)[]; cost: number[] } {
  const x: number[] = [];
  const context: (number | null)[] = [];
  const cost: number[] = [];
  let sum = 0;
  steps.forEach((s, i) => {
    x.push(i + 1);
    const u = s.response?.usage;
    context.push(u ? u.inputTokens : s.chars !== undefined ? Math.ceil(s.chars / 4) : null);
    sum += u?.costUsd ?? 0;
    cost.push(sum);
  });
  return { x, context, cost };
}

/** One model's share of a run: the steps it answered (or the sub-agents it ran) and their cost. */
export interface ModelShare {
  model: string;
  /** The router's role for it ("chat", "executor", "strong"), "subagent", or "" (no routing). */
  role: string;
  steps: number;
  input: number;
  output: number;
  costUsd: number;
}

/**
 * The run's cost split by model and role: each step counts for the model the router chose
 * (its model_choice; else the run's model), each sub-agent's tokens for its model.
 */
export function costByModel(run: RunView): ModelShare[] {
  const shares = new Map<string, ModelShare>();
  const add = (model: string, role: string, u: Usage | undefined, steps: number) => {
    if (!u) return;
    const key = `${model}\0${role}`;
    const s = shares.get(key) ?? { model, role, steps: 0, input: 0, output: 0, costUsd: 0 };
    s.steps += steps;
    s.input += u.inputTokens;
    s.output += u.outputTokens;
    s.costUsd += u.costUsd ?? 0;
    shares.set(key, s);
  };
  for (const s of run.steps) {
    add(s.choice?.model ?? run.model, s.choice?.role ?? "", s.response?.usage, 1);
    for (const t of s.tools)
      if (t.subagent?.usage) add(t.subagent.model, "subagent", t.subagent.usage, t.subagent.steps ?? 0);
  }
  return [...shares.values()];
}
