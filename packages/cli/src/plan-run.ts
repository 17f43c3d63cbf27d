// `hands --plan "task"` with nobody at the keyboard: plan with read-only tools, show the plan
// (a `plan` line with --json), then execute it item by item with the todo tool. The planning
// run's conversation carries over, so the model keeps what it learned while looking.
import { type AgentEvent, createTodoTool, type RunResult, type Tool } from "@hands/agent";
import type { HandsSession, SessionRunOptions } from "@hands/sdk/root";
import {
  extractPlan,
  formatPlan,
  type ItemReports,
  isIndependent,
  itemText,
  PLAN_INSTRUCTIONS,
  planExecutionRequest,
  planRequest,
} from "./plan.js";
import type { Style } from "./render.js";

export async function runWithPlan(
  session: HandsSession,
  task: string,
  run: Pick<SessionRunOptions, "signal" | "onEvent">,
  /** Told the plan once it is known; an empty list means the model gave no checklist. */
  onPlan: (items: string[]) => void,
): Promise<RunResult> {
  const planned = await session.run(planRequest(task), {
    ...run,
    readOnly: true,
    role: "planner",
    instructions: PLAN_INSTRUCTIONS,
  });
  if (planned.status !== "done") return planned;
  const items = extractPlan(planned.answer);
  // On the run's stream too, so --json and the trace show what is about to be executed.
  const emit = (e: AgentEvent) => {
    session.record(e);
    run.onEvent?.(e);
  };
  emit({ type: "plan", time: Date.now(), items });
  onPlan(items);
  if (items.length === 0) {
    const failed: RunResult = {
      ...planned,
      status: "error",
      reason: "the model's plan has no checklist, so nothing was executed",
    };
    // The whole run's outcome, so the live view and --json's last line say why it failed.
    const { runId: _, messages: __, ...outcome } = failed;
    emit({ type: "result", time: Date.now(), ...outcome });
    return failed;
  }

  let used = planned.usage.inputTokens + planned.usage.outputTokens;
  const budget = session.settings.maxTokens;
  // Items the plan marks independent (two or more) run at once, each as a sub-agent of its own;
  // the execution run gets their reports and does the rest. Their tokens are in the budget.
  const reports: ItemReports = new Map();
  const independent = items.flatMap((t, i) => (isIndependent(t) ? [i] : []));
  if (independent.length >= 2) {
    const results = await session.runSubagents(
      independent.map((i) => itemText(items[i]!)),
      {
        ...(run.signal ? { signal: run.signal } : {}),
        ...(run.onEvent ? { onEvent: run.onEvent } : {}),
        ...(budget ? { maxTokens: Math.max(1, budget - used) } : {}),
      },
    );
    results.forEach((r, k) => {
      reports.set(independent[k]!, r);
      if (r.usage) used += r.usage.inputTokens + r.usage.outputTokens;
    });
    if (run.signal?.aborted) {
      const aborted: RunResult = { ...planned, status: "aborted", reason: "aborted by the user", answer: "" };
      return aborted;
    }
  }
  // The planning run's conversation carries on in the session; the token budget covers all runs.
  const executed = await session.run(planExecutionRequest(items, reports), {
    ...run,
    extraTools: [createTodoTool() as Tool],
    ...(budget ? { maxTokens: Math.max(1, budget - used) } : {}),
  });
  return executed;
}

/** The plan on stderr, and why it runs without anyone accepting it. */
export function planNotice(items: string[], json: boolean, style: Style): string {
  if (items.length === 0) return "";
  const why = json ? "--json output" : "standard input is not a terminal";
  return `${style.bold("Plan:")}\n${formatPlan(items)}\n${style.dim(`No one to accept or edit it (${why}): executing it as proposed.`)}\n`;
}
