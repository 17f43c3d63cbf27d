// Reads an Action written as one JSON object instead of Thought/Action lines: LangChain's chat
// agents emit {"action": "search", "action_input": "…"} (in a fence, often under "Action:"),
// other prompts {"tool": …, "args": …},
// tool-tuned models {"name": …, "arguments": …} or <tool_call>…</tool_call>. Only objects that
// name an offered tool (or the final answer) count, so JSON that merely has an "action" key
// is left alone.
import { findBalancedEnd, parseLenientJson } from "./lenient-json.js";
import { argumentsFromValue, finalFromInput } from "./react-input.js";
import { extractTextToolCallsWithRest } from "./text-tool-calls.js";
import type { ToolSchema } from "./types.js";

export type JsonAction =
  | { kind: "action"; tool: string; input: Record<string, unknown>; more: number }
  | { kind: "final"; answer: string }
  | { kind: "error"; tool: string; error: string };

const FINAL = /^final[ _-]?answer$/i;

function fromActionObject(value: unknown, tools: readonly ToolSchema[]): JsonAction | undefined {
  if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
  const obj = value as Record<string, unknown>;
  const name = obj.action ?? obj.tool ?? obj.tool_name;
  if (typeof name !== "string") return undefined;
  const input = obj.action_input ?? obj.actionInput ?? obj.args ?? obj.arguments ?? obj.input;
  if (FINAL.test(name.trim())) {
    if (typeof input === "string") return { kind: "final", answer: input.trim() };
    const answer =
      input && typeof input === "object" ? finalFromInput(input as Record<string, unknown>, "") : "";
    return { kind: "final", answer };
  }
  const lower = name.toLowerCase();
  const tool = tools.find((t) => t.name === name) ?? tools.find((t) => t.name.toLowerCase() === lower);
  if (!tool) return undefined;
  const args = argumentsFromValue(input, tool);
  if (!args.ok) return { kind: "error", tool: tool.name, error: args.error };
  return { kind: "action", tool: tool.name, input: args.input, more: 0 };
}

/** The first JSON action in `text`, or undefined. */
export function readJsonAction(text: string, tools: readonly ToolSchema[]): JsonAction | undefined {
  for (const m of text.matchAll(/\{\s*["']?(?:action|tool|tool_name)["']?\s*:/g)) {
    const end = findBalancedEnd(text, m.index);
    if (end < 0) continue;
    let value: unknown;
    try {
      value = parseLenientJson(text.slice(m.index, end));
    } catch {
      continue;
    }
    const found = fromActionObject(value, tools);
    if (found) return found;
  }
  const calls = extractTextToolCallsWithRest(
    text,
    tools.map((t) => t.name),
  )?.calls;
  const first = calls?.[0];
  if (!first) return undefined;
  return { kind: "action", tool: first.name, input: JSON.parse(first.arguments), more: calls!.length - 1 };
}
