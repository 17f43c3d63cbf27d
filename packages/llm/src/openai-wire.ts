// Translation between our messages and the OpenAI chat-completions wire format.
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import type { FinishReason, Message, ToolSchema, Usage } from "./types.js";

export function toOpenAIMessages(messages: readonly Message[]): ChatCompletionMessageParam[] {
  return messages.map(toOpenAIMessage);
}

export function toOpenAIMessage(m: Message): ChatCompletionMessageParam {
  switch (m.role) {
    case "system":
    case "user":
      return { role: m.role, content: m.content };
    case "tool":
      return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
    case "assistant": {
      // Reasoning goes back only where the server asked for it (see ReasoningCollector.result).
      const t = m.thinking;
      const thinking = {
        ...(t?.sendBackAs ? { [t.sendBackAs]: t.text } : {}),
        ...(t?.details ? { reasoning_details: t.details } : {}),
      };
      if (!m.toolCalls?.length) return { role: "assistant", content: m.content, ...thinking };
      return {
        role: "assistant",
        // Some servers reject "" next to tool calls; null is the canonical "no text".
        content: m.content || null,
        ...thinking,
        tool_calls: m.toolCalls.map((c) => ({
          id: c.id,
          type: "function" as const,
          function: { name: c.name, arguments: c.arguments || "{}" },
        })),
      };
    }
  }
  throw new Error(`unknown message role: ${(m as { role: string }).role}`);
}

export function toOpenAITools(tools: readonly ToolSchema[]): ChatCompletionFunctionTool[] {
  return tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

export function fromOpenAIFinish(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "stop":
    case "length":
    case "content_filter":
    case "tool_calls":
      return reason;
    case "function_call":
      return "tool_calls";
    default:
      return "other";
  }
}

interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

export function fromOpenAIUsage(usage: WireUsage | null | undefined): Usage {
  const result: Usage = {
    inputTokens: usage?.prompt_tokens ?? 0,
    outputTokens: usage?.completion_tokens ?? 0,
  };
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  if (typeof cached === "number") result.cachedInputTokens = cached;
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === "number" && reasoning > 0) result.reasoningTokens = reasoning;
  return result;
}

/** Newer OpenAI reasoning models reject `max_tokens`; most compatible servers only know it. */
export function maxTokensParam(model: string, maxTokens: number): Record<string, number> {
  return /^(o\d|gpt-5)/i.test(model) ? { max_completion_tokens: maxTokens } : { max_tokens: maxTokens };
}
