// Runs one turn's tool calls: consecutive read-only calls run in parallel, anything that
// writes or runs a command runs alone, in the order the model gave. Results keep that order.
import type { ToolCall, Usage } from "@hands/llm";
import type { ApproveHook } from "./approval.js";
import type { AgentEventInput } from "./events.js";
import { type HookOutcome, type Hooks, runHooks } from "./hooks.js";
import { capOutput } from "./output-cap.js";
import type { PreparedCall, ToolRegistry } from "./registry.js";
import { markWorkspaceChanged } from "./repo-map/freshness.js";
import type { ToolContext } from "./tools/types.js";

export interface ToolCallResult {
  call: ToolCall;
  output: string;
  isError: boolean;
  /** Model tokens the tool spent (a sub-agent). */
  usage?: Usage;
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
  /** preToolUse / postToolUse hooks (hooks.ts). */
  hooks?: Hooks;
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
    if (p.ok && (p.tool.readOnly || p.tool.concurrent)) {
      batch.push(i);
      continue;
    }
    await flush();
    results[i] = await runOne(calls[i]!, p, opts);
  }
  await flush();
  return results;
}

async function runOne(call: ToolCall, given: PreparedCall, opts: SchedulerOptions): Promise<ToolCallResult> {
  const { step, emit, ctx } = opts;
  const started = performance.now();
  let prepared = given;
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
  let usage: Usage | undefined;
  // preToolUse hooks first: they may refuse the call or change its arguments, and changed
  // arguments are checked against the schema and go through the approvals like the model's own.
  const hooked = prepared.ok && !ctx.signal.aborted ? await beforeTool(call, prepared, opts) : undefined;
  if (hooked?.ok === false) prepared = { ok: false, error: hooked.error };
  else if (hooked?.args && prepared.ok) prepared = { ...prepared, args: hooked.args };
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
      const tool = prepared.tool;
      // A command (or any tool that writes what it does not report) may have changed any file.
      if (!tool.readOnly && !tool.reportsWrites) markWorkspaceChanged(ctx.workspace);
      const r = await tool.execute(prepared.args, { ...ctx, onOutput, callId: call.id, step });
      if (!tool.readOnly && !tool.reportsWrites) markWorkspaceChanged(ctx.workspace);
      output = r.output;
      isError = r.isError ?? false;
      data = r.data;
      usage = r.usage;
    } catch (err) {
      // A throwing tool is a bug in the tool, but the run goes on: the model reads the error.
      output = `ERROR: ${call.name} failed: ${(err as Error)?.message ?? String(err)}`;
      isError = true;
    }
    if (opts.hooks?.postToolUse?.length && !ctx.signal.aborted)
      output += await afterTool(call, prepared.args, output, isError, opts);
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
  return { call, output: capped.text, isError, ...(usage ? { usage } : {}) };
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

function hookReporter(opts: SchedulerOptions, callId: string) {
  return (o: HookOutcome) =>
    opts.emit({
      type: "hook",
      step: opts.step,
      event: o.event,
      hook: o.hook,
      outcome: o.outcome,
      callId,
      ...(o.message ? { message: o.message } : {}),
    });
}

/** The preToolUse hooks' verdict: a refusal (as the call's error), changed arguments, or nothing. */
async function beforeTool(
  call: ToolCall,
  prepared: Extract<PreparedCall, { ok: true }>,
  opts: SchedulerOptions,
): Promise<{ ok: false; error: string } | { ok: true; args?: Record<string, unknown> } | undefined> {
  if (!opts.hooks?.preToolUse?.length) return undefined;
  const report = hookReporter(opts, call.id);
  let args = prepared.args;
  let changed = false;
  // Each hook sees the arguments as the hooks before it left them.
  for (const hook of opts.hooks.preToolUse) {
    const [ran] = await runHooks(
      { preToolUse: [hook] },
      "preToolUse",
      { tool: call.name, callId: call.id, step: opts.step, args },
      opts.ctx.signal,
      report,
    );
    if (!ran) continue;
    const { answer } = ran;
    if (answer.deny) {
      report({ hook: hook.name, event: "preToolUse", outcome: "denied", message: answer.deny });
      return {
        ok: false,
        error: `DENIED: ${call.name} was not run; refused by the hook ${JSON.stringify(hook.name)}. Reason: ${answer.deny}`,
      };
    }
    if (answer.args) {
      const problem = opts.registry.check(prepared.tool, answer.args);
      if (problem) {
        const message = `changed the arguments into ones the tool does not take: ${problem}`;
        report({ hook: hook.name, event: "preToolUse", outcome: "failed", message });
        return {
          ok: false,
          error: `ERROR: ${call.name} was not run: the hook ${JSON.stringify(hook.name)} ${message}`,
        };
      }
      args = answer.args;
      changed = true;
      report({ hook: hook.name, event: "preToolUse", outcome: "changed", message: JSON.stringify(args) });
    } else if (answer.addContext || answer.continue) {
      report({
        hook: hook.name,
        event: "preToolUse",
        outcome: "failed",
        message: "before a tool runs a hook may answer only deny or args; the rest is ignored",
      });
    }
  }
  return changed ? { ok: true, args } : { ok: true };
}

/** What the postToolUse hooks add to the result ("" when nothing). */
async function afterTool(
  call: ToolCall,
  args: Record<string, unknown>,
  output: string,
  isError: boolean,
  opts: SchedulerOptions,
): Promise<string> {
  const report = hookReporter(opts, call.id);
  const ran = await runHooks(
    opts.hooks,
    "postToolUse",
    { tool: call.name, callId: call.id, step: opts.step, args, output, isError },
    opts.ctx.signal,
    report,
  );
  let added = "";
  for (const { hook, answer } of ran) {
    if (!answer.addContext) continue;
    report({ hook: hook.name, event: "postToolUse", outcome: "added", message: answer.addContext });
    added += `\n\n[hook ${hook.name}]: ${answer.addContext}`;
  }
  return added;
}
