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
  /** Visible text (for ReAct: the Thought). Empty string when none. Never holds the thinking. */
  content: string;
  toolCalls?: ToolCall[];
  /** What a reasoning model thought before this reply, when it showed it. */
  thinking?: Thinking;
}

/** One block of Anthropic thinking, kept byte for byte: the API verifies the signature. */
export type ThinkingBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string };

/**
 * A reply's reasoning. `text` is for people (the live view, traces, memory); the other fields
 * say how it came over the wire, so it can be sent back exactly the way that API requires.
 */
export interface Thinking {
  text: string;
  /** Anthropic: the thinking / redacted_thinking blocks as received, signatures included. */
  blocks?: ThinkingBlock[];
  /**
   * OpenAI-compatible: the message field that carried it ("reasoning_content": DeepSeek, vLLM,
   * SGLang, llama.cpp; "reasoning": OpenRouter, Ollama) when it must go back in that field
   * (a reply inside a tool-call loop); absent when it must not be sent back.
   */
  sendBackAs?: "reasoning_content" | "reasoning";
  /** OpenRouter: `reasoning_details` as received (may hold encrypted reasoning), sent back as is. */
  details?: unknown[];
  /** Where it came from: a reasoning field, `<think>` tags in the content, or thinking blocks. */
  source: "field" | "think_tag" | "blocks";
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
  /** Output tokens spent on reasoning (already part of outputTokens), when reported. */
  reasoningTokens?: number;
  /** Cost in US dollars, when the model's price is known. */
  costUsd?: number;
}

/** Incremental events while a response streams in. */
export type StreamEvent =
  | { type: "text_delta"; text: string }
  /** A piece of the model's reasoning (never part of the answer). */
  | { type: "thinking_delta"; text: string }
  /** Something the user should know about this request that is not an error (one line). */
  | { type: "notice"; message: string }
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
  /** How hard a reasoning model should think (default: the provider's or server's own default). */
  reasoning?: ReasoningLevel;
}

/** `off` asks a model to answer without thinking where the API can switch it off. */
export type ReasoningLevel = "off" | "low" | "medium" | "high";
export const REASONING_LEVELS: readonly ReasoningLevel[] = ["off", "low", "medium", "high"];

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
  /**
   * Starts loading what the first request needs (an SDK client) without waiting for it, so the
   * loading overlaps the caller's other start-up work; a failure shows at the first request.
   */
  prepare?(): void;
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
