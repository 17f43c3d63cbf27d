// One typed event stream per run: the CLI's live view, --json output and the trace writer
// all consume these.
import type { FinishReason, Message, ToolCall, Usage } from "@hands/llm";
import type { HookEventName, HookOutcome } from "./hooks.js";

/**
 * On a model_request event: the messages the request sent, for listeners in the same process
 * (the trace writer records them). A symbol key, so JSON output (--json, the dashboard's
 * streams) leaves the array out and costs nothing.
 */
export const SENT_MESSAGES: unique symbol = Symbol.for("hands.sentMessages");

/** Trace message ids as inclusive [first, last] ranges, in the order they were sent. */
export type MessageIdRanges = [number, number][];

export type ApprovalSource = "mode" | "policy" | "user" | "session";

export type RunStatus = "done" | "max_steps" | "token_budget" | "error" | "aborted";

/** How a run ended: the last event of a run, and the core of its result. */
export interface RunOutcome {
  status: RunStatus;
  answer: string;
  /** Why the run ended, in words (always set for statuses other than done). */
  reason?: string;
  steps: number;
  usage: Usage;
  durationMs: number;
}

/** What happened to a memory chunk (the kinds of @hands/memory's event log). */
export type MemoryAction =
  | "created"
  | "scored"
  | "promoted"
  | "demoted"
  | "compressed"
  | "recalled"
  | "accessed"
  | "verified"
  | "archived"
  | "deleted";

interface Base {
  /** Milliseconds since the epoch. */
  time: number;
}

export type AgentEvent =
  | (Base & {
      type: "run_start";
      runId: string;
      task: string;
      provider: string;
      model: string;
      workspace: string;
      maxSteps: number;
    })
  | (Base & {
      type: "model_request";
      step: number;
      messageCount: number;
      chars: number;
      /**
       * In a trace: the messages this request sent, by the ids of the trace's message lines
       * (each distinct message is written once). Absent in traces from before it was recorded.
       */
      sent?: MessageIdRanges;
      [SENT_MESSAGES]?: readonly Message[];
    })
  | (Base & { type: "text_delta"; step: number; text: string })
  /** A piece of the model's reasoning as it streams (live views only; the trace keeps `thinking`). */
  | (Base & { type: "thinking_delta"; step: number; text: string })
  /** The reasoning of one response, whole; `tokens` when the provider counts them. Never in the answer. */
  | (Base & { type: "thinking"; step: number; text: string; tokens?: number; redacted?: boolean })
  /** Something about a model request the user should know that is not an error. */
  | (Base & { type: "model_notice"; step: number; message: string })
  | (Base & { type: "model_retry"; step: number; attempt: number; delayMs: number; error: string })
  | (Base & {
      type: "model_response";
      step: number;
      content: string;
      toolCalls: ToolCall[];
      finishReason: FinishReason;
      usage: Usage;
      durationMs: number;
    })
  | (Base & { type: "correction"; step: number; text: string })
  | (Base & { type: "tool_start"; step: number; callId: string; name: string; args: unknown })
  /** Output of a running command as it comes (live views only; the trace keeps `tool_end`). */
  | (Base & {
      type: "tool_output";
      step: number;
      callId: string;
      name: string;
      stream: "stdout" | "stderr";
      text: string;
    })
  /** A decision on a call that writes or runs something (see AgentOptions.approve). */
  | (Base & {
      type: "approval";
      step: number;
      callId: string;
      name: string;
      allow: boolean;
      /** Who decided: the approval mode, a policy rule, the user, or an earlier "always". */
      source: ApprovalSource;
      rule?: string;
      reason?: string;
    })
  | (Base & {
      type: "tool_end";
      step: number;
      callId: string;
      name: string;
      isError: boolean;
      /** The text the model receives (already capped). */
      output: string;
      /** Size of the tool's full output before capping. */
      resultChars: number;
      truncated: boolean;
      /** Where the full output was saved when it was capped. */
      fullOutputPath?: string;
      /** The tool's own run time (not the wait for approval). */
      durationMs: number;
      /** How long the call waited for an approval decision (set when one was asked for). */
      approvalMs?: number;
      data?: Record<string, unknown>;
    })
  /** A memory move (when memory assembles the context): a chunk stored, scored, moved, compressed… */
  | (Base & {
      type: "memory";
      step: number;
      action: MemoryAction;
      chunkId: string;
      /** Sequence number in the memory's own log (`hands memory show ID` lists a chunk's moves). */
      seq: number;
      reason: string;
      /** The layer it is in (created) or moved to (promoted, demoted, archived). */
      layer?: string;
      chunkType?: string;
      tokens?: number;
      /** Its importance (created) or new importance (scored). */
      importance?: number;
      /** compressed: the summary that now stands for it. */
      summaryId?: string;
      /** verified: confirmed, corrected… */
      verification?: string;
    })
  /** Model routing: the model chosen for this step, the role it plays and why (`changed`: another than the last step's). */
  | (Base & {
      type: "model_choice";
      step: number;
      model: string;
      role: string;
      reason: string;
      changed: boolean;
    })
  /** A sub-agent (the task tool) started: its own run, with its trace at `tracePath`. */
  | (Base & {
      type: "subagent_start";
      step: number;
      callId: string;
      runId: string;
      task: string;
      model: string;
      tools: string[];
      tracePath?: string;
      /** The child's own memory scope (memory on). */
      memoryScope?: string;
    })
  /** A sub-agent ended; its tokens are in the parent's usage too. */
  | (Base & {
      type: "subagent_end";
      step: number;
      callId: string;
      runId: string;
      status: RunStatus;
      steps: number;
      usage: Usage;
      durationMs: number;
      reason?: string;
    })
  /** A hook ran and did something, or failed (a failing hook is reported and skipped, never fatal). */
  | (Base & {
      type: "hook";
      /** The step it ran in (0: outside a run's steps, e.g. session start). */
      step: number;
      event: HookEventName;
      hook: string;
      outcome: HookOutcome["outcome"];
      callId?: string;
      message?: string;
    })
  /** `--plan` without anyone to accept it: the checklist about to be executed (empty: none found). */
  | (Base & { type: "plan"; items: string[] })
  | (Base & { type: "result" } & RunOutcome);

export type AgentEventType = AgentEvent["type"];
/** Distributes over the union so each event keeps its own fields. */
type WithoutTime<E> = E extends unknown ? Omit<E, "time"> : never;
export type AgentEventInput = WithoutTime<AgentEvent>;
export type AgentEventListener = (event: AgentEvent) => void;
