// Runs one turn's tool calls: consecutive read-only calls run in parallel, anything that
// writes or runs a command runs alone, in the order the model gave. Results keep that order.
import type { ToolCall } from "@hands/llm";
import type { ApproveHook } from "./approval.js";
import type { AgentEventInput } from "./events.js";
import { capOutput } from "./output-cap.js";
import type { PreparedCall, ToolRegistry } from "./registry.js";
import type { ToolContext } from "./tools/types.js";

export interface ToolCallResult {
  call: ToolCall;
  output: string;
  isError: boolean;
}

export interface SchedulerOptions {
  registry: ToolRegistry;
  ctx: ToolContext;
  step: number;
  /** Where full outputs of capped results are saved. */
  outputDir?: string;
  maxOutputChars?: number;
  emit: (event: AgentEventInput) => void;
  /** Asked before every tool that is not read-only; a denial becomes the call's result. */
  approve?: ApproveHook;
}

export async function runToolCalls(calls: ToolCall[], opts: SchedulerOptions): Promise<ToolCallResult[]> {
  const results: ToolCallResult[] = new Array(calls.length);
  const prepared = calls.map((c) => opts.registry.prepare(c));
  let batch: number[] = [];

  const flush = async () => {
    await Promise.all(batch.map(async (i) => (results[i] = await runOne(calls[i]!, prepared[i]!, opts))));
    batch = [];
  };

  for (let i = 0; i < calls.length; i++) {
    const p = prepared[i]!;
    if (p.ok && p.tool.readOnly) {
      batch.push(i);
      continue;
    }
    await flush();
    results[i] = await runOne(calls[i]!, p, opts);
  }
  await flush();
  return results;
}

async function runOne(
  call: ToolCall,
  prepared: PreparedCall,
  opts: SchedulerOptions,
): Promise<ToolCallResult> {
  const { step, emit, ctx } = opts;
  const started = performance.now();
  emit({
    type: "tool_start",
    step,
    callId: call.id,
    name: call.name,
    args: prepared.ok ? prepared.args : call.arguments,
  });

  let output: string;
  let isError: boolean;
  let data: Record<string, unknown> | undefined;
  // Ask before anything that writes or runs; a refusal is the call's result.
  const asks = prepared.ok && !prepared.tool.readOnly && opts.approve !== undefined && !ctx.signal.aborted;
  const denial =
    asks && prepared.ok && opts.approve
      ? await askApproval(opts.approve, call, prepared.tool.name, prepared.args, opts)
      : undefined;
  // The wait for a decision (a person may take minutes) is its own figure, not the tool's time.
  const approvalMs = asks ? performance.now() - started : undefined;
  const ranFrom = performance.now();
  if (!prepared.ok) {
    output = prepared.error;
    isError = true;
  } else if (ctx.signal.aborted) {
    output = "ERROR: the run was aborted before this tool ran.";
    isError = true;
  } else if (denial !== undefined) {
    output = denial;
    isError = true;
  } else {
    try {
      // Commands stream their output to live views as it comes.
      const onOutput = (stream: "stdout" | "stderr", text: string) =>
        emit({ type: "tool_output", step, callId: call.id, name: call.name, stream, text });
      const r = await prepared.tool.execute(prepared.args, { ...ctx, onOutput });
      output = r.output;
      isError = r.isError ?? false;
      data = r.data;
    } catch (err) {
      // A throwing tool is a bug in the tool, but the run goes on: the model reads the error.
      output = `ERROR: ${call.name} failed: ${(err as Error)?.message ?? String(err)}`;
      isError = true;
    }
  }

  const capped = capOutput(output, {
    name: `step${step}-${call.id}`,
    ...(opts.outputDir ? { saveDir: opts.outputDir } : {}),
    ...(opts.maxOutputChars ? { maxChars: opts.maxOutputChars } : {}),
  });
  emit({
    type: "tool_end",
    step,
    callId: call.id,
    name: call.name,
    isError,
    output: capped.text,
    resultChars: output.length,
    truncated: capped.truncated,
    ...(capped.fullOutputPath ? { fullOutputPath: capped.fullOutputPath } : {}),
    durationMs: performance.now() - ranFrom,
    ...(approvalMs !== undefined ? { approvalMs } : {}),
    ...(data ? { data } : {}),
  });
  return { call, output: capped.text, isError };
}

/** Asks the hook; returns the observation for the model when the call is refused. */
async function askApproval(
  approve: ApproveHook,
  call: ToolCall,
  name: string,
  args: Record<string, unknown>,
  opts: SchedulerOptions,
): Promise<string | undefined> {
  let d: Awaited<ReturnType<ApproveHook>>;
  try {
    d = await approve({ call, name, args, step: opts.step, signal: opts.ctx.signal });
  } catch (err) {
    d = {
      allow: false,
      source: "mode",
      reason: `approval failed: ${(err as Error)?.message ?? String(err)}`,
    };
  }
  opts.emit({
    type: "approval",
    step: opts.step,
    callId: call.id,
    name,
    allow: d.allow,
    source: d.source,
    ...(d.rule ? { rule: d.rule } : {}),
    ...(d.reason ? { reason: d.reason } : {}),
  });
  if (d.allow) return undefined;
  const who =
    d.source === "policy"
      ? `the command policy${d.rule ? ` (rule "${d.rule}")` : ""}`
      : d.source === "user"
        ? "the user"
        : "the approval mode";
  return `DENIED: ${name} was not run; refused by ${who}.${d.reason ? ` Reason: ${d.reason}` : ""} Do not retry the same call; take this into account and continue another way, or ask the user.`;
}
