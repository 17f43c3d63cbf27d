// Runs one turn's tool calls: consecutive read-only calls run in parallel, anything that
// writes or runs a command runs alone, in the order the model gave. Results keep that order.
import type { ToolCall } from "@hands/llm";
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
  if (!prepared.ok) {
    output = prepared.error;
    isError = true;
  } else if (ctx.signal.aborted) {
    output = "ERROR: the run was aborted before this tool ran.";
    isError = true;
  } else {
    try {
      const r = await prepared.tool.execute(prepared.args, ctx);
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
    durationMs: performance.now() - started,
    ...(data ? { data } : {}),
  });
  return { call, output: capped.text, isError };
}
