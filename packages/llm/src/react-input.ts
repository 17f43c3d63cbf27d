// Reads the arguments of one ReAct Action. The protocol asks for one JSON object, but models
// tuned on other frameworks' traces write plain text ("Action Input: ls -la"), a quoted string,
// a call ("run_command('ls')", "Search[query]") or keyword arguments (path="a.txt"). A bare
// string is taken as the tool's one string parameter; a tool that needs more is refused with its
// schema, so the model can write the object.
import { findBalancedEnd, parseLenientJson } from "./lenient-json.js";
import type { JsonSchema, ToolSchema } from "./types.js";

export type InputResult =
  | {
      ok: true;
      input: Record<string, unknown>;
      /** Offset in the text read where the arguments end. */
      end: number;
    }
  | { ok: false; error: string };

/** Inputs that mean "no arguments". */
const NO_INPUT = /^(?:none|null|n\/a|\{\s*\}|\(\s*\))?$/i;
/** A `{` that starts a JSON object (a key or `}` follows), not shell braces such as `{ ls; }`. */
const OBJECT_START = /^\{\s*(?:["'}]|\/[/*]|[A-Za-z_$][\w$-]*\s*:)/;

const ok = (input: Record<string, unknown>, end: number): InputResult => ({ ok: true, input, end });

/**
 * The parameter a bare string argument belongs to: the one required parameter, or the only
 * parameter when none is required, provided it takes a string.
 */
export function stringParameter(schema: JsonSchema | undefined): string | undefined {
  const props = (schema?.properties ?? {}) as Record<string, JsonSchema | undefined>;
  const required = Array.isArray(schema?.required) ? (schema.required as string[]) : [];
  const names = Object.keys(props);
  const name =
    required.length === 1 ? required[0] : required.length === 0 && names.length === 1 ? names[0] : undefined;
  if (name === undefined) return undefined;
  const type = props[name]?.type;
  return type === undefined || type === "string" || (Array.isArray(type) && type.includes("string"))
    ? name
    : undefined;
}

function hasNoParameters(schema: JsonSchema | undefined): boolean {
  const props = schema?.properties;
  const required = schema?.required;
  return (!props || Object.keys(props).length === 0) && (!Array.isArray(required) || required.length === 0);
}

function shorten(text: string): string {
  const line = text.trim().split("\n")[0]!;
  return line.length > 80 ? `${line.slice(0, 80)}…` : line;
}

function needsObject(tool: ToolSchema, text: string): string {
  return `${tool.name} takes its arguments as one JSON object, not plain text (got: ${shorten(text)})`;
}

/**
 * Keeps a backslash before a character JSON cannot escape (`\w` in a regex, `C:\dir`): models
 * mean the backslash, and the lenient reader would drop it.
 */
function keepUnknownEscapes(text: string): string {
  return text.replace(/\\(u[0-9a-fA-F]{4}|[\s\S])/g, (pair, c: string) =>
    c.length > 1 || `"'\\/bfnrt`.includes(c) ? pair : `\\${pair}`,
  );
}

function parseModelJson(text: string): unknown {
  return parseLenientJson(keepUnknownEscapes(text));
}

/** Reads the JSON object at the start of `text`. */
function readJsonObject(text: string, offset = 0, tool?: ToolSchema): InputResult {
  const end = findBalancedEnd(text, 0);
  const source = end > 0 ? text.slice(0, end) : text;
  try {
    const value = parseModelJson(source);
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      return { ok: false, error: "Action Input must be a JSON object" };
    }
    return ok(value as Record<string, unknown>, offset + (end > 0 ? end : text.length));
  } catch (err) {
    // {path: src/a.ts}: unquoted values for the tool's string parameters.
    const bare = tool && end > 0 ? keywordArguments(source.slice(1, -1), tool) : undefined;
    if (bare) return ok(bare, offset + end);
    const why = end > 0 ? (err as Error).message : "the JSON object is not closed (missing })";
    return { ok: false, error: `Action Input is not valid JSON: ${why}` };
  }
}

/** Index just past the string literal opening at `i` ('', "", or Python triple quotes), or -1. */
function skipQuoted(text: string, i: number): number {
  const q = text[i]!;
  const triple = text.startsWith(q.repeat(3), i);
  const close = triple ? q.repeat(3) : q;
  for (let j = i + close.length; j < text.length; j++) {
    if (text[j] === "\\") j++;
    else if (text.startsWith(close, j)) return j + close.length;
  }
  return -1;
}

/**
 * Walks `text` from `start` outside string literals and brackets; returns the index of the
 * first top-level `stop` character, or -1.
 */
function findTopLevel(text: string, start: number, stop: string): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      const after = skipQuoted(text, i);
      if (after < 0) return -1;
      i = after - 1;
    } else if (depth === 0 && stop.includes(c)) return i;
    else if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth--;
  }
  return -1;
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let from = 0;
  for (;;) {
    const comma = findTopLevel(text, from, ",");
    if (comma < 0) break;
    parts.push(text.slice(from, comma));
    from = comma + 1;
  }
  parts.push(text.slice(from));
  return parts.map((p) => p.trim()).filter((p, i, all) => p !== "" || i < all.length - 1);
}

/** The value of a literal (string, number, true/false/None…), or undefined. */
function literal(text: string): { value: unknown } | undefined {
  if (!/^(?:["'+\-.\d]|true\b|false\b|null\b|True\b|False\b|None\b)/.test(text)) return undefined;
  try {
    return { value: parseModelJson(text) };
  } catch {
    return undefined;
  }
}

/** `path="a.txt", limit=20` when every key is one of the tool's parameters. */
function keywordArguments(text: string, tool: ToolSchema): Record<string, unknown> | undefined {
  const props = (tool.parameters.properties ?? {}) as Record<string, unknown>;
  // Entries, not assignments: a key named __proto__ must stay an ordinary key.
  const out: Array<[string, unknown]> = [];
  for (const part of splitTopLevel(text)) {
    const m = /^([A-Za-z_]\w*)\s*[=:]\s*/.exec(part);
    if (!m || !Object.hasOwn(props, m[1]!)) return undefined;
    const raw = part.slice(m[0].length);
    // An unquoted value for a string parameter (path=src/a.ts) is taken as written.
    const type = (props[m[1]!] as JsonSchema | undefined)?.type;
    const bare =
      raw && !/^["'{[(]/.test(raw) && (type === undefined || type === "string") ? { value: raw } : undefined;
    const value = literal(raw) ?? bare;
    if (!value) return undefined;
    out.push([m[1]!, value.value]);
  }
  return out.length ? Object.fromEntries(out) : undefined;
}

/** Arguments written as text: a quoted string, keyword arguments, or the bare value. */
function fromText(text: string, tool: ToolSchema, end: number): InputResult {
  if (NO_INPUT.test(text)) return ok({}, end);
  let value = text;
  const quoted = /^["']/.test(text) && skipQuoted(text, 0) === text.length ? literal(text) : undefined;
  if (quoted && typeof quoted.value === "string") {
    // A JSON object sent as a string: "{\"path\": \"a\"}".
    const inner = quoted.value.trim();
    if (OBJECT_START.test(inner)) {
      const object = readJsonObject(inner);
      if (object.ok) return ok(object.input, end);
    }
    value = quoted.value;
  } else {
    const kwargs = keywordArguments(text, tool);
    if (kwargs) return ok(kwargs, end);
    // An opening quote that never closes ("what is it) is dropped.
    const open = /^(["'])/.exec(text);
    if (open && !text.includes(open[1]!, 1)) value = text.slice(1);
  }
  if (hasNoParameters(tool.parameters)) return ok({}, end);
  const param = stringParameter(tool.parameters);
  if (param) return ok({ [param]: value }, end);
  return { ok: false, error: needsObject(tool, text) };
}

/**
 * Reads the text after "Action Input:". `plainEnd` is where the next keyword starts: a JSON
 * object may run past it (a keyword inside a string), plain text may not.
 */
export function readActionInput(text: string, plainEnd: number, tool: ToolSchema): InputResult {
  // Bold markers before the value (CrewAI traces: "Action Input: ** {…}"), not a leading "__" of a name.
  const lead = /^\s*(?:(?:\*\*|__)(?!\w)\s*)?/.exec(text)![0].length;
  const fence = /^```[\w-]*[ \t]*\n?/.exec(text.slice(lead));
  if (fence) {
    const from = lead + fence[0].length;
    const close = text.indexOf("```", from);
    const inner = text.slice(from, close < 0 ? text.length : close);
    const end = close < 0 ? text.length : close + 3;
    const body = inner.trim();
    if (OBJECT_START.test(body)) {
      const object = readJsonObject(body);
      return object.ok ? ok(object.input, end) : object;
    }
    return fromText(inner.replace(/\n$/, ""), tool, end);
  }
  const rest = text.slice(lead);
  if (OBJECT_START.test(rest)) return readJsonObject(rest, lead, tool);
  // The object wrapped in a call, as in LlamaIndex traces: QueryEngineTool({"a": 1}).
  const wrapped = /^[A-Za-z_][\w.]*\(\s*(?=\{)/.exec(rest);
  if (wrapped) {
    const object = readJsonObject(rest.slice(wrapped[0].length), lead + wrapped[0].length);
    if (object.ok) return object;
  }
  // Plain text ends at the next keyword. A one-line input ends at its line when a blank line
  // follows (a remark after a command must not run); longer inputs (code, a heredoc) stay whole.
  const plain = text.slice(lead, Math.max(lead, plainEnd));
  // "Run this Python:" over a fence: the fence holds the value.
  const introduced = /^[^\n`]*:[ \t]*\n[ \t]*```[\w-]*[ \t]*\n([\s\S]*?)\n?[ \t]*```\s*$/.exec(plain);
  if (introduced) return fromText(introduced[1]!, tool, lead + plain.length);
  const oneLine = /^[^\n]*(?=\n[ \t]*\n)/.exec(plain.trimEnd());
  const value = oneLine ? oneLine[0] : plain;
  return fromText(value.trim(), tool, lead + value.length);
}

/**
 * Reads arguments written on the Action line after the tool name: `(…)` call syntax (which
 * may span lines), `[…]` as in the ReAct paper, or a JSON object. Returns undefined when the
 * line has none.
 */
export function readLineArguments(text: string, tool: ToolSchema): InputResult | undefined {
  const lead = /^[ \t]*/.exec(text)![0].length;
  const open = text[lead];
  if (open === "{")
    return OBJECT_START.test(text.slice(lead)) ? readJsonObject(text.slice(lead), lead, tool) : undefined;
  if (open === "[") {
    const lineEnd = text.indexOf("\n");
    const line = lineEnd < 0 ? text : text.slice(0, lineEnd);
    const close = line.lastIndexOf("]");
    if (close <= lead) return undefined;
    return fromText(line.slice(lead + 1, close).trim(), tool, close + 1);
  }
  if (open !== "(") return undefined;
  // An unclosed call keeps to its line.
  const found = findTopLevel(text, lead + 1, ")");
  const lineEnd = text.indexOf("\n") < 0 ? text.length : text.indexOf("\n");
  const end = found < 0 ? lineEnd : found + 1;
  const inner = text.slice(lead + 1, found < 0 ? lineEnd : found).trim();
  if (OBJECT_START.test(inner)) {
    const object = readJsonObject(inner);
    return object.ok ? ok(object.input, end) : object;
  }
  const parts = splitTopLevel(inner);
  if (parts.length > 1) {
    const kwargs = keywordArguments(inner, tool);
    if (kwargs) return ok(kwargs, end);
    // Positional arguments, in the order the schema requires them.
    const required = Array.isArray(tool.parameters.required) ? (tool.parameters.required as string[]) : [];
    const values = parts.map(literal);
    if (values.length === required.length && values.every((v) => v !== undefined)) {
      return ok(Object.fromEntries(required.map((name, i) => [name, values[i]!.value])), end);
    }
    return { ok: false, error: needsObject(tool, inner) };
  }
  return fromText(inner, tool, end);
}

/** Arguments given as a value inside a JSON action ({"action_input": …}): an object or a string. */
export function argumentsFromValue(value: unknown, tool: ToolSchema): InputResult {
  if (value === undefined || value === null) return ok({}, 0);
  if (typeof value === "object" && !Array.isArray(value)) return ok(value as Record<string, unknown>, 0);
  if (typeof value === "string") return fromText(value.trim(), tool, 0);
  return { ok: false, error: needsObject(tool, JSON.stringify(value)) };
}

/** The answer inside a Finish action's arguments ({"answer": …} and its usual synonyms). */
export function finalFromInput(input: Record<string, unknown>, fallback: string): string {
  const answer = input.answer ?? input.final_answer ?? input.result ?? input.response ?? input.output;
  if (typeof answer === "string") return answer.trim();
  if (answer !== undefined) return JSON.stringify(answer);
  return fallback;
}
