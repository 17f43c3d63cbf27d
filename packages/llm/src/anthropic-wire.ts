// Translation between our messages and Anthropic's messages API.
import type {
  ContentBlockParam,
  MessageParam,
  StopReason,
  TextBlockParam,
  Tool,
  ToolResultBlockParam,
  ToolUseBlockParam,
} from "@anthropic-ai/sdk/resources/messages/messages";
import type { FinishReason, Message, ThinkingBlock, ToolSchema, Usage } from "./types.js";

/** Anthropic only accepts [a-zA-Z0-9_-] in tool_use ids; ids from other providers may differ. */
export function anthropicId(id: string): string {
  return id.replace(/[^a-zA-Z0-9_-]/g, "_") || "id";
}

function parseInput(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args || "{}");
    return value && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    // The model produced broken JSON earlier; the API insists on an object.
    return {};
  }
}

/** A non-system message as Anthropic content blocks. */
export function blocksOf(m: Exclude<Message, { role: "system" }>): ContentBlockParam[] {
  if (m.role === "user") return [{ type: "text", text: m.content }];
  if (m.role === "tool") {
    return [
      {
        type: "tool_result",
        tool_use_id: anthropicId(m.toolCallId),
        content: m.content,
        ...(m.isError ? { is_error: true } : {}),
      },
    ];
  }
  // Thinking blocks go back first and unmodified: with thinking on, the API rejects a
  // tool_result turn whose assistant turn lacks them or alters them (the signature is
  // checked) — docs.anthropic.com, "Extended thinking", "Preserving thinking blocks".
  const blocks: ContentBlockParam[] = [...(m.thinking?.blocks ?? []).map(toThinkingParam)];
  if (m.content.trim()) blocks.push({ type: "text", text: m.content });
  for (const call of m.toolCalls ?? []) {
    blocks.push({
      type: "tool_use",
      id: anthropicId(call.id),
      name: call.name,
      input: parseInput(call.arguments),
    });
  }
  return blocks;
}

/**
 * The system prompts, and the other messages as turns: consecutive messages of one role merge
 * (the API expects alternation), and in a user turn tool_result blocks come first (in order).
 * `blocksOfMessage` gives a message's blocks (`isResult` tells a tool_result); shared by
 * toAnthropic and the streamed body's encoder (anthropic-body.ts), which gives them encoded.
 */
export function turnsOf<B>(
  messages: readonly Message[],
  blocksOfMessage: (m: Exclude<Message, { role: "system" }>) => B[],
  isResult: (b: B) => boolean,
): { system: string[]; turns: { role: "user" | "assistant"; blocks: B[] }[] } {
  const system: string[] = [];
  const turns: { role: "user" | "assistant"; blocks: B[] }[] = [];
  for (const m of messages) {
    if (m.role === "system") {
      system.push(m.content);
      continue;
    }
    const blocks = blocksOfMessage(m);
    if (blocks.length === 0) continue;
    const role = m.role === "assistant" ? "assistant" : "user";
    const last = turns[turns.length - 1];
    if (last && last.role === role) for (const b of blocks) last.blocks.push(b);
    else turns.push({ role, blocks: blocks.slice() });
  }
  for (const turn of turns)
    if (turn.role === "user" && turn.blocks.some(isResult) && !turn.blocks.every(isResult))
      turn.blocks = [...turn.blocks.filter(isResult), ...turn.blocks.filter((b) => !isResult(b))];
  return { system, turns };
}

/** Splits out the system prompt and converts the rest (see turnsOf). */
export function toAnthropic(messages: readonly Message[]): { system: string; messages: MessageParam[] } {
  const { system, turns } = turnsOf(messages, blocksOf, (b) => b.type === "tool_result");
  return { system: system.join("\n\n"), messages: turns.map((t) => ({ role: t.role, content: t.blocks })) };
}

function toThinkingParam(b: ThinkingBlock): ContentBlockParam {
  return b.type === "thinking"
    ? { type: "thinking", thinking: b.thinking, signature: b.signature }
    : { type: "redacted_thinking", data: b.data };
}

/** The blocks a cache breakpoint may be put on (thinking blocks take none). */
export function takesCacheControl(
  block: ContentBlockParam,
): block is TextBlockParam | ToolResultBlockParam | ToolUseBlockParam {
  return block.type === "text" || block.type === "tool_result" || block.type === "tool_use";
}

/**
 * Prompt-cache breakpoints. Anthropic caches a request's prefix only up to a block marked
 * `cache_control`, and reads the longest cached prefix at a later breakpoint: one at the end
 * of the system prompt (every request repeats it), one at the request's last block (the next
 * request is this one plus new messages, so it reads all of this one from the cache). Two of
 * the four breakpoints allowed; a prefix under the model's minimum is simply not cached.
 */
export function withCacheBreakpoints(wire: { system: string; messages: MessageParam[] }): {
  system?: TextBlockParam[];
  messages: MessageParam[];
} {
  const ephemeral = { type: "ephemeral" as const };
  const last = wire.messages.at(-1);
  if (last && Array.isArray(last.content) && last.content.length > 0) {
    const blocks = last.content as ContentBlockParam[];
    const end = blocks[blocks.length - 1]!;
    if (takesCacheControl(end)) blocks[blocks.length - 1] = { ...end, cache_control: ephemeral };
  }
  return {
    ...(wire.system ? { system: [{ type: "text", text: wire.system, cache_control: ephemeral }] } : {}),
    messages: wire.messages,
  };
}

export function toAnthropicTools(tools: readonly ToolSchema[]): Tool[] {
  return tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: { type: "object", ...t.parameters } as Tool["input_schema"],
  }));
}

export function fromAnthropicStop(reason: StopReason | string | null | undefined): FinishReason {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "tool_use":
      return "tool_calls";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "refusal":
      return "content_filter";
    default:
      return "other";
  }
}

interface WireUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** Anthropic counts cache reads and writes apart from input_tokens; we report the total input. */
export function fromAnthropicUsage(usage: WireUsage): Usage {
  const cached = usage.cache_read_input_tokens ?? 0;
  const result: Usage = {
    inputTokens: (usage.input_tokens ?? 0) + cached + (usage.cache_creation_input_tokens ?? 0),
    outputTokens: usage.output_tokens ?? 0,
  };
  if (usage.cache_read_input_tokens != null) result.cachedInputTokens = cached;
  return result;
}
