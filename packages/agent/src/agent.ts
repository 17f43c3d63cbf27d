// The agent loop: a state machine over messages. Each transition is one model call and the
// tool results it causes. It stops on a final answer, the step limit, the token budget, an
// abort, or an error — and the result always says which.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import {
  ContextOverflowError,
  type Message,
  type ModelResponse,
  type Provider,
  type ToolCall,
} from "@hands/llm";
import type { Sandbox } from "@hands/sandbox";
import type { ApproveHook } from "./approval.js";
import { TokenBudget } from "./budget.js";
import { ContextWindow, MAX_OVERFLOW_RETRIES } from "./context-window.js";
import type { Diagnostics } from "./diagnostics/service.js";
import {
  type AgentEvent,
  type AgentEventInput,
  type AgentEventListener,
  type RunOutcome,
  type RunStatus,
  SENT_MESSAGES,
} from "./events.js";
import { type HookOutcome, type Hooks, runHooks } from "./hooks.js";
import { buildSystemPrompt } from "./prompt.js";
import { ToolRegistry } from "./registry.js";
import { markWorkspaceChanged } from "./repo-map/freshness.js";
import { runToolCalls } from "./scheduler.js";
import type { EditorAccess } from "./tools/editor-access.js";
import type { DiagnoseCommand, Tool, ToolContext } from "./tools/types.js";
import { addUsage, emptyUsage } from "./usage.js";

/**
 * Events from outside the loop that join a run's stream while the run lasts (e.g. memory moves):
 * called with the run's emitter when the run starts; returns the function that detaches it,
 * called just before the result event.
 */
export type EventSource = (emit: (event: AgentEventInput) => void) => () => void;

/** What the context hook is told besides the history and the step. */
export interface ContextInfo {
  /** Index in the history of this run's task (after earlier turns of a conversation). */
  taskIndex: number;
  /**
   * Set once the model rejected a context as too long: about how many tokens its window holds.
   * Return a context within it (e.g. assemble with a smaller budget); the loop still shortens
   * whatever does not fit, so ignoring it is safe, only less smart.
   */
  windowTokens?: number;
}

export interface AgentOptions {
  provider: Provider;
  /** Real path of the workspace root. */
  workspace: string;
  tools: Tool[];
  /** Creates the task's sandbox session; called at most once, on the first command. */
  createSandbox: () => Promise<Sandbox>;
  /** Why a failed command failed (tools/types.ts DiagnoseCommand); none: results say only what ran. */
  diagnose?: DiagnoseCommand;
  maxSteps?: number;
  /** Stop once this many tokens (input + output, summed over steps) have been used. */
  maxTokens?: number;
  /** Replaces the built-in system prompt entirely. */
  systemPrompt?: string;
  /** Appended to the built-in system prompt (e.g. AGENTS.md). */
  instructions?: string;
  /**
   * Context for finding one's way (the repository map), sent before the task in the task's
   * user message — never stored in the history — until a tool has shown the model the code
   * (read_file, code_outline, grep, repo_map), at most in the first three requests. Outside the system prompt, so the prompt and
   * tools stay one cacheable prefix from request to request and session to session.
   */
  orientation?: string;
  /** Where capped tool outputs are saved in full (readable by the model). */
  outputDir?: string;
  maxOutputChars?: number;
  runId?: string;
  /** Asked before each call of a tool that is not read-only (approvals, command policy). */
  approve?: ApproveHook;
  /**
   * Tools left out of this run because they could not be used (name → why): a call to one is
   * answered with the reason instead of "unknown tool" (e.g. one the history shows it calling).
   */
  withheldTools?: Record<string, string>;
  /**
   * Maps the full history to what the model is sent this step (e.g. memory assembling a
   * context within a token budget). Must not change the history; on error the full history is sent.
   * Called once a step; after a context overflow, `info.windowTokens` is set on later steps.
   */
  context?: (history: readonly Message[], step: number, info: ContextInfo) => Message[] | Promise<Message[]>;
  /** Their events join the run's stream, between run_start and the result. */
  eventSources?: EventSource[];
  /** Language servers whose new errors write_file/edit_file report (diagnostics/); the caller closes it. */
  diagnostics?: Diagnostics;
  /** preToolUse, postToolUse and stop hooks (hooks.ts); session hooks are the session's. */
  hooks?: Hooks;
  /**
   * The budget of the run this one works for (a sub-agent's parent): this run's tokens count
   * against it too, and the run stops when it is spent.
   */
  parentBudget?: TokenBudget;
  /**
   * Picks the provider of each step (model routing); default: `provider` for every step.
   * Its choice is reported as a model_choice event when it names one.
   */
  route?: (info: RouteInfo) => RouteChoice | undefined;
  /** The editor driving the run (ACP): files through its buffers, commands in its terminal. */
  editor?: EditorAccess;
}

/** What a router is told about the step to come. */
export interface RouteInfo {
  step: number;
  task: string;
  /** The conversation so far (this run's task included). */
  messages: readonly Message[];
  /** Tool results in a row that were errors, up to the last step. */
  failuresInARow: number;
}

export interface RouteChoice {
  provider: Provider;
  /** The role the model plays (executor, chat, escalation…). */
  role: string;
  /** Why this model (e.g. "3 failed tool calls in a row"). */
  reason: string;
}

export interface RunOptions {
  signal?: AbortSignal;
  onEvent?: AgentEventListener;
  /**
   * The conversation so far (a multi-turn session): the task continues it as a new user
   * message. System messages in it are replaced by the current system prompt.
   */
  history?: Message[];
  /** Called with each message added to the conversation (the task first), e.g. to save a session. */
  onMessage?: (message: Message) => void;
}

/** A stop hook may send the run on this many times at most (a hook that always objects would never end it). */
const MAX_STOP_CONTINUES = 3;

export interface RunResult extends RunOutcome {
  runId: string;
  messages: Message[];
}

/** Identical calls in a row before the model is told it is going in circles. */
const REPEAT_WARNING_AFTER = 3;

/**
 * Whether the `repeats`-th identical call in a row carries the note: the third, then each time
 * the count doubles (6, 12, 24, …). Every request repeats the whole history, so a note on every
 * call of a long loop would be sent again and again; the earlier notes are still in view.
 */
export function repeatNoteDue(repeats: number): boolean {
  if (repeats < REPEAT_WARNING_AFTER || repeats % REPEAT_WARNING_AFTER !== 0) return false;
  const k = repeats / REPEAT_WARNING_AFTER;
  return (k & (k - 1)) === 0;
}

/** Tools whose result shows the workspace's code: once one has answered, the map has done its job. */
const CODE_READING_TOOLS = new Set(["read_file", "code_outline", "grep", "repo_map"]);
/**
 * Requests that carry the orientation at most: it is for choosing where to start, and a run of
 * commands (which may cat and grep too) has chosen by then; repo_map shows it again on request.
 */
const ORIENTATION_REQUESTS = 3;
/** Empty replies tolerated before the run ends with what it has. */
const MAX_EMPTY_REPLIES = 2;

export class Agent {
  readonly registry: ToolRegistry;
  constructor(private readonly options: AgentOptions) {
    this.registry = new ToolRegistry(options.tools, options.withheldTools);
  }

  async run(task: string, runOptions: RunOptions = {}): Promise<RunResult> {
    const opts = this.options;
    const runId = opts.runId ?? randomUUID();
    const maxSteps = opts.maxSteps ?? 50;
    const started = performance.now();
    const usage = emptyUsage();
    const budget = opts.parentBudget
      ? opts.parentBudget.child(opts.maxTokens)
      : new TokenBudget(opts.maxTokens);
    const listener = runOptions.onEvent;
    // Files may have changed since the last task (a person, an editor): the next map walks.
    markWorkspaceChanged(opts.workspace);
    const emit = (event: AgentEventInput) => listener?.({ ...event, time: Date.now() } as AgentEvent);

    // One controller for the run, so tools see an abort from the caller.
    const controller = new AbortController();
    const outer = runOptions.signal;
    const onAbort = () => controller.abort(outer?.reason);
    if (outer?.aborted) controller.abort(outer.reason);
    else outer?.addEventListener("abort", onAbort, { once: true });
    const signal = controller.signal;

    let sandbox: Promise<Sandbox> | undefined;
    const outputDir = opts.outputDir ? join(opts.outputDir, runId) : undefined;
    const ctx: ToolContext = {
      workspace: opts.workspace,
      readRoots: outputDir ? [outputDir] : [],
      sandbox: () => {
        sandbox ??= opts.createSandbox();
        return sandbox;
      },
      signal,
      ...(opts.diagnose ? { diagnose: opts.diagnose } : {}),
      budget,
      emit: (event) => emit(event),
      ...(opts.diagnostics ? { diagnostics: opts.diagnostics } : {}),
      ...(opts.editor ? { editor: opts.editor } : {}),
    };

    const system =
      opts.systemPrompt ??
      buildSystemPrompt({
        workspace: opts.workspace,
        instructions: opts.instructions,
        tools: this.registry.names,
      });
    const messages: Message[] = [{ role: "system", content: system }];
    let chars = system.length;
    for (const m of runOptions.history ?? []) {
      if (m.role === "system") continue;
      messages.push(m);
      chars += messageChars(m);
    }
    const push = (m: Message) => {
      messages.push(m);
      chars += messageChars(m);
      runOptions.onMessage?.(m);
    };
    push({ role: "user", content: task });
    const contextInfo: ContextInfo = { taskIndex: messages.length - 1 };
    // Learns the model's window from overflow errors and keeps requests inside it.
    const window = new ContextWindow(outputDir);

    emit({
      type: "run_start",
      runId,
      task,
      provider: opts.provider.name,
      model: opts.provider.model,
      workspace: opts.workspace,
      maxSteps,
    });
    // Nothing from outside may follow the result, the stream's last event.
    let attached = true;
    const fromSource = (event: AgentEventInput) => {
      if (attached) emit(event);
    };
    const detachers = (opts.eventSources ?? []).map((source) => source(fromSource));
    const detach = () => {
      attached = false;
      for (const d of detachers.splice(0)) d();
    };

    let step = 0;
    let orientation = opts.orientation || undefined;
    let emptyReplies = 0;
    let lastCallKey = "";
    let repeats = 0;
    let stopContinues = 0;
    let failuresInARow = 0;
    let lastChoice = "";
    const finish = (status: RunStatus, answer: string, reason?: string): RunResult => {
      const outcome: RunOutcome = {
        status,
        answer,
        ...(reason ? { reason } : {}),
        steps: step,
        usage,
        durationMs: performance.now() - started,
      };
      detach();
      emit({ type: "result", ...outcome });
      return { runId, ...outcome, messages };
    };

    try {
      while (step < maxSteps) {
        if (signal.aborted) return finish("aborted", "", "aborted by the user");
        step++;
        let sent = messages;
        if (opts.context) {
          try {
            sent = await opts.context(messages, step, contextInfo);
          } catch {
            sent = messages;
          }
        }
        if (step > ORIENTATION_REQUESTS) orientation = undefined;
        const tools = this.registry.schemas();
        const choice = opts.route?.({ step, task, messages, failuresInARow });
        const provider = choice?.provider ?? opts.provider;
        if (choice) {
          const key = `${choice.provider.model}\u0000${choice.role}`;
          emit({
            type: "model_choice",
            step,
            model: choice.provider.model,
            role: choice.role,
            reason: choice.reason,
            changed: key !== lastChoice,
          });
          lastChoice = key;
        }
        let response: ModelResponse | undefined;
        for (let overflows = 0; response === undefined; ) {
          const taskAt =
            sent === messages ? contextInfo.taskIndex : taskIndexIn(sent, messages[contextInfo.taskIndex]!);
          const fitted = window.fit(orientation ? oriented(sent, taskAt, orientation) : sent, taskAt, tools);
          emit({
            type: "model_request",
            step,
            messageCount: fitted.length,
            chars: fitted === messages ? chars : fitted.reduce((n, m) => n + messageChars(m), 0),
            [SENT_MESSAGES]: fitted,
          });
          try {
            response = await provider.complete({
              messages: fitted,
              tools,
              signal,
              onEvent: (e) => {
                if (e.type === "text_delta") emit({ type: "text_delta", step, text: e.text });
                else if (e.type === "thinking_delta") emit({ type: "thinking_delta", step, text: e.text });
                else if (e.type === "notice") emit({ type: "model_notice", step, message: e.message });
                else if (e.type === "retry")
                  emit({ type: "model_retry", step, attempt: e.attempt, delayMs: e.delayMs, error: e.error });
              },
            });
          } catch (err) {
            if (signal.aborted) return finish("aborted", "", "aborted by the user");
            const shrink =
              err instanceof ContextOverflowError &&
              overflows < MAX_OVERFLOW_RETRIES &&
              window.overflowed(err, fitted, tools);
            if (!shrink)
              return finish("error", "", `model call failed: ${(err as Error)?.message ?? String(err)}`);
            overflows++;
            // From the next step on, the hook is told the window (called once a step: memory
            // stores what it sees); this step's retry is shortened by the loop alone.
            contextInfo.windowTokens = window.limitTokens;
            emit({
              type: "model_retry",
              step,
              attempt: overflows,
              delayMs: 0,
              error: `the context did not fit the model's window (${err.limitTokens ? `${err.limitTokens} tokens` : "size not given"}); sending a shorter one`,
            });
          }
        }
        addUsage(usage, response.usage);
        budget.add(response.usage.inputTokens + response.usage.outputTokens);
        const toolCalls = response.message.toolCalls ?? [];
        const thought = response.message.thinking;
        if (thought) {
          emit({
            type: "thinking",
            step,
            text: thought.text,
            ...(response.usage.reasoningTokens ? { tokens: response.usage.reasoningTokens } : {}),
            ...(thought.blocks?.some((b) => b.type === "redacted_thinking") ? { redacted: true } : {}),
          });
        }
        emit({
          type: "model_response",
          step,
          content: response.message.content,
          toolCalls,
          finishReason: response.finishReason,
          usage: response.usage,
          durationMs: response.durationMs,
        });
        push(response.message);

        if (response.correction) {
          emit({ type: "correction", step, text: response.correction });
          push({ role: "user", content: response.correction });
        } else if (toolCalls.length === 0) {
          const answer = response.message.content.trim();
          if (answer || emptyReplies >= MAX_EMPTY_REPLIES) {
            const more =
              stopContinues < MAX_STOP_CONTINUES
                ? await stopHookSays(opts.hooks, answer, step, signal, emit)
                : undefined;
            if (!more) return finish("done", answer);
            stopContinues++;
            push({ role: "user", content: more });
            continue;
          }
          emptyReplies++;
          const nudge =
            "Your reply was empty. Continue the task with a tool call, or give your final answer as text.";
          emit({ type: "correction", step, text: nudge });
          push({ role: "user", content: nudge });
        } else {
          const results = await runToolCalls(toolCalls, {
            registry: this.registry,
            ctx,
            step,
            emit,
            ...(opts.approve ? { approve: opts.approve } : {}),
            ...(outputDir ? { outputDir } : {}),
            ...(opts.maxOutputChars ? { maxOutputChars: opts.maxOutputChars } : {}),
            ...(opts.hooks ? { hooks: opts.hooks } : {}),
          });
          for (const r of results) {
            // A sub-agent's tokens are the parent's too (its budget counted them already).
            if (r.usage) addUsage(usage, r.usage);
            failuresInARow = r.isError ? failuresInARow + 1 : 0;
            if (!r.isError && CODE_READING_TOOLS.has(r.call.name)) orientation = undefined;
            let content = r.output;
            const key = callKey(r.call);
            repeats = key === lastCallKey ? repeats + 1 : 1;
            lastCallKey = key;
            if (repeatNoteDue(repeats)) {
              // Short: it stays in every later request. (Not "will not change": a command's can.)
              content += `\n\nNOTE: the same call ${repeats} times in a row.`;
            }
            push({
              role: "tool",
              toolCallId: r.call.id,
              name: r.call.name,
              content,
              ...(r.isError ? { isError: true } : {}),
            });
          }
          if (signal.aborted) return finish("aborted", "", "aborted by the user");
        }

        const spent = budget.spent();
        if (spent) {
          return finish(
            "token_budget",
            "",
            spent === budget
              ? `token budget of ${spent.limit} reached (${budget.used} used)`
              : `the parent run's token budget of ${spent.limit} reached (${spent.used} used, ${budget.used} by this run)`,
          );
        }
      }
      return finish(
        "max_steps",
        "",
        `stopped after the step limit of ${maxSteps} steps without a final answer`,
      );
    } finally {
      detach();
      outer?.removeEventListener("abort", onAbort);
      if (sandbox) await sandbox.then((s) => s.destroy()).catch(() => {});
    }
  }
}

/** The stop hooks' "go on" (the first one given), or undefined to end the run. */
async function stopHookSays(
  hooks: Hooks | undefined,
  answer: string,
  step: number,
  signal: AbortSignal,
  emit: (event: AgentEventInput) => void,
): Promise<string | undefined> {
  if (!hooks?.stop?.length) return undefined;
  const report = (o: HookOutcome) =>
    emit({
      type: "hook",
      step,
      event: o.event,
      hook: o.hook,
      outcome: o.outcome,
      ...(o.message ? { message: o.message } : {}),
    });
  const ran = await runHooks(hooks, "stop", { status: "done", answer, steps: step }, signal, report);
  for (const { hook, answer: a } of ran) {
    if (!a.continue) continue;
    report({ hook: hook.name, event: "stop", outcome: "continued", message: a.continue });
    return a.continue;
  }
  return undefined;
}

/** Where the task is in what the context hook returned (its own arrangement of the history). */
/** `sent` with `orientation` before the text of its task message (at `taskAt`), a copy. */
function oriented(sent: readonly Message[], taskAt: number, orientation: string): Message[] {
  const out = [...sent];
  const task = out[taskAt];
  if (task?.role === "user") out[taskAt] = { ...task, content: `${orientation}\n\n${task.content}` };
  return out;
}

function taskIndexIn(sent: readonly Message[], task: Message): number {
  const at = sent.indexOf(task);
  if (at >= 0) return at;
  const firstUser = sent.findIndex((m) => m.role === "user");
  return Math.max(firstUser, 0);
}

function callKey(call: ToolCall): string {
  return `${call.name}\u0000${call.arguments}`;
}

function messageChars(m: Message): number {
  let n = m.content.length;
  if (m.role === "assistant" && m.toolCalls)
    for (const c of m.toolCalls) n += c.name.length + c.arguments.length;
  return n;
}
