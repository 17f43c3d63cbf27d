// Recovers tool calls that a model printed as text instead of using native tool calling, which
// local models (Qwen, Hermes, Llama served without a tool parser) do a lot.
import { findBalancedEnd, parseLenientJson } from "./lenient-json.js";
import type { ToolCall } from "./types.js";

let counter = 0;

interface Span {
  start: number;
  end: number;
  calls: ToolCall[];
}

/** Turns `{name, arguments|parameters}` (or OpenAI's `{function: {...}}`) into a ToolCall. */
function toCall(value: unknown, toolNames: ReadonlySet<string>): ToolCall | null {
  if (!value || typeof value !== "object" || Array.isArray(value)) return null;
  const obj = value as Record<string, unknown>;
  if (obj.function && typeof obj.function === "object") return toCall(obj.function, toolNames);
  if (typeof obj.name !== "string" || !toolNames.has(obj.name)) return null;
  const args = obj.arguments ?? obj.parameters ?? obj.args ?? obj.input ?? {};
  let json: string;
  if (typeof args === "string") {
    try {
      const parsed = parseLenientJson(args);
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return null;
      json = JSON.stringify(parsed);
    } catch {
      return null;
    }
  } else if (typeof args === "object" && args !== null && !Array.isArray(args)) {
    json = JSON.stringify(args);
  } else return null;
  return { id: `text_call_${++counter}`, name: obj.name, arguments: json };
}

/** Parses a JSON object or list of objects into calls; null unless every element is a known call. */
function callsFrom(source: string, toolNames: ReadonlySet<string>): ToolCall[] | null {
  let value: unknown;
  try {
    value = parseLenientJson(source.trim());
  } catch {
    return null;
  }
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return null;
  const calls: ToolCall[] = [];
  for (const item of items) {
    const call = toCall(item, toolNames);
    if (!call) return null;
    calls.push(call);
  }
  return calls;
}

function overlaps(spans: Span[], start: number, end: number): boolean {
  return spans.some((s) => start < s.end && end > s.start);
}

/**
 * Finds tool calls written as text: `<tool_call>{…}</tool_call>`, a ```json fence, or a bare
 * JSON object / list of `{"name": …, "arguments"|"parameters": {…}}`. Only names in
 * `toolNames` count. Returns the calls and the text outside them, or null when there are none.
 */
export function extractTextToolCallsWithRest(
  text: string,
  toolNames: Iterable<string>,
): { calls: ToolCall[]; rest: string } | null {
  const names = new Set(toolNames);
  if (names.size === 0 || !text.includes("{")) return null;
  const spans: Span[] = [];
  const add = (start: number, end: number, source: string) => {
    if (overlaps(spans, start, end)) return;
    const calls = callsFrom(source, names);
    if (calls) spans.push({ start, end, calls });
  };
  for (const m of text.matchAll(/<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g)) {
    add(m.index, m.index + m[0].length, m[1]!);
  }
  for (const m of text.matchAll(/```[\w-]*[ \t]*\n?([\s\S]*?)```/g)) {
    add(m.index, m.index + m[0].length, m[1]!);
  }
  // Bare JSON: only objects that start like a call, so prose braces are left alone.
  for (const m of text.matchAll(/[[{]\s*\{?\s*["']?(?:name|function|type)["']?\s*:/g)) {
    if (overlaps(spans, m.index, m.index + 1)) continue;
    const end = findBalancedEnd(text, m.index);
    if (end > 0) add(m.index, end, text.slice(m.index, end));
  }
  if (spans.length === 0) return null;
  spans.sort((a, b) => a.start - b.start);
  let rest = "";
  let cursor = 0;
  for (const span of spans) {
    rest += text.slice(cursor, span.start);
    cursor = span.end;
  }
  rest += text.slice(cursor);
  return { calls: spans.flatMap((s) => s.calls), rest: rest.replace(/\n{3,}/g, "\n\n").trim() };
}

/** The tool calls printed as text in `text`, or null when there are none (see above). */
export function extractTextToolCalls(text: string, toolNames: Iterable<string>): ToolCall[] | null {
  return extractTextToolCallsWithRest(text, toolNames)?.calls ?? null;
}
