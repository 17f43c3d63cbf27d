// Provider-neutral message, tool and stream types. Every provider translates to and from these.

/** A JSON Schema object describing a tool's arguments. */
export type JsonSchema = { [key: string]: unknown };

export interface ToolSchema {
  name: string;
  description: string;
  /** JSON Schema of the arguments object (type: "object"). */
  parameters: JsonSchema;
}

export interface ToolCall {
  /** Provider-assigned id (generated when the protocol has none, e.g. ReAct). */
  id: string;
  name: string;
  /** The raw JSON text of the arguments, as the model produced it (may be malformed). */
  arguments: string;
}

export interface SystemMessage {
  role: "system";
  content: string;
}
export interface UserMessage {
  role: "user";
  content: string;
}
export interface AssistantMessage {
  role: "assistant";
  /** Visible text (for ReAct: the Thought). Empty string when none. */
  content: string;
  toolCalls?: ToolCall[];
}
export interface ToolMessage {
  role: "tool";
  toolCallId: string;
  name: string;
  content: string;
  isError?: boolean;
}
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens served from the provider's prompt cache, when reported. */
  cachedInputTokens?: number;
  /** Cost in US dollars, when the model's price is known. */
  costUsd?: number;
}

/** Incremental events while a response streams in. */
export type StreamEvent =
  | { type: "text_delta"; text: string }
  | { type: "tool_call_delta"; index: number; id?: string; name?: string; argumentsDelta?: string }
  /**
   * A failed attempt will be retried after `delayMs`. `attempt` is the retry number (1 = first retry).
   * Deltas already streamed by the failed attempt are void: consumers should discard them.
   */
  | { type: "retry"; attempt: number; delayMs: number; error: string };

export interface ModelRequest {
  messages: Message[];
  tools: ToolSchema[];
  signal?: AbortSignal;
  maxTokens?: number;
  temperature?: number;
  /** Stop sequences (used by the ReAct protocol to stop before a hallucinated "Observation:"). */
  stop?: string[];
  /** Receives deltas and retry notices as they happen. */
  onEvent?: (event: StreamEvent) => void;
}

export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter" | "other";

export interface ModelResponse {
  message: AssistantMessage;
  usage: Usage;
  finishReason: FinishReason;
  /**
   * Set when the model's reply could not be understood under the provider's protocol
   * (e.g. a malformed ReAct block). The loop appends `message` and then this text as a
   * user turn, so the model can correct itself instead of the run ending.
   */
  correction?: string;
  /** Wall time of the request including retries, in milliseconds. */
  durationMs: number;
}

export interface Provider {
  /** "openai" | "anthropic" | "react" | "scripted" | … */
  readonly name: string;
  readonly model: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
}

/** Thrown when a model call fails for good (after retries), with a message fit for users. */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly retryable = false,
  ) {
    super(message);
    this.name = "ModelError";
  }
}
