// The approval hook: asked before every call that writes or runs something, so a person (or a
// policy) can refuse it. A refusal is an observation the model reads, never an exception.
import type { ToolCall } from "@hands/llm";
import type { ApprovalSource } from "./events.js";

export interface ApprovalRequest {
  call: ToolCall;
  name: string;
  /** The validated arguments. */
  args: Record<string, unknown>;
  step: number;
  signal: AbortSignal;
}

export interface ApprovalDecision {
  allow: boolean;
  source: ApprovalSource;
  /** The policy rule that decided, when one did. */
  rule?: string;
  /** Why (shown to the model on a refusal). */
  reason?: string;
}

export type ApproveHook = (request: ApprovalRequest) => Promise<ApprovalDecision>;
