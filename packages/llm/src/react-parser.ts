// Parses one ReAct turn (Thought / Action / Action Input, or Final Answer) from free text.
// Forgiving by design: format drift is the most common way small models fail, and every
// slip we can read safely saves a correction turn.
import { findBalancedEnd, parseLenientJson } from "./lenient-json.js";

export type ReactErrorReason = "no_keywords" | "no_decision" | "no_tool_name" | "unknown_tool" | "bad_input";

export type ReactParse =
  | {
      kind: "action";
      thought: string;
      tool: string;
      /** The arguments re-serialised as strict JSON. */
      arguments: string;
      input: Record<string, unknown>;
    }
  | { kind: "final"; thought: string; answer: string }
  | { kind: "error"; thought: string; reason: ReactErrorReason; error: string };

type Key = "thought" | "action" | "input" | "final" | "observation";

interface Mark {
  key: Key;
  /** Where the keyword starts. */
  start: number;
  /** Where the text after "Keyword:" starts. */
  body: number;
}

// Optional markdown decoration (**, __, #, >), the keyword, optional closing **, a colon
// (ASCII or full-width, as Chinese-tuned models emit).
const KEYWORD = String.raw`(thought|action[ \t_-]*input|action|final[ \t_-]*answer|observation)[ \t]*(?:\*\*|__)?[ \t]*[:：](?:[ \t]*(?:\*\*|__))?[ \t]*`;
const ANCHORED = new RegExp(String.raw`^[ \t]*(?:[*_#>]+[ \t]*)*${KEYWORD}`, "gim");
const ANYWHERE = new RegExp(String.raw`\b${KEYWORD}`, "gi");

function keyOf(word: string): Key {
  const w = word.toLowerCase().replace(/[ \t_-]+/g, "");
  if (w === "actioninput") return "input";
  if (w === "finalanswer") return "final";
  return w as Key;
}

function findMarks(text: string, pattern: RegExp): Mark[] {
  const marks: Mark[] = [];
  for (const m of text.matchAll(pattern)) {
    marks.push({ key: keyOf(m[1]!), start: m.index, body: m.index + m[0].length });
  }
  return marks;
}

/** Drops anything from a line-start "Observation:" on: the model must not invent results. */
export function cutAtObservation(text: string): string {
  const m = /^[ \t]*(?:[*_#>]+[ \t]*)*observation[ \t]*(?:\*\*)?[ \t]*[:：]/im.exec(text);
  return m ? text.slice(0, m.index) : text;
}

/**
 * Reads the tool name from the Action line, tolerating backticks, bold, quotes and "()". When
 * arguments follow on the same line ("read_file({...})" or "read_file {...}"), returns the
 * offset in `line` where they start.
 */
function readToolName(line: string): { name: string; argsAt?: number } {
  const lead = /^[\s`"'*]*/.exec(line)![0].length;
  const name = /^[\w.-]*/.exec(line.slice(lead))![0];
  const afterName = lead + name.length;
  const tail = /^[`"'*\s]*/.exec(line.slice(afterName))![0].length + afterName;
  if (line[tail] === "(") {
    const inside = line.slice(tail + 1).replace(/\)[\s`*]*$/, "");
    return inside.trim() ? { name, argsAt: tail + 1 } : { name };
  }
  const brace = line.indexOf("{", tail);
  return brace >= 0 ? { name, argsAt: brace } : { name };
}

/** Strips a ``` fence that wraps the start of `text`. */
function unfence(text: string): string {
  const m = /^\s*```[\w-]*[ \t]*\n?/.exec(text);
  if (!m) return text;
  const rest = text.slice(m[0].length);
  const close = rest.indexOf("```");
  return close >= 0 ? rest.slice(0, close) : rest;
}

type InputResult = { ok: true; input: Record<string, unknown> } | { ok: false; error: string };

/** Reads the JSON object at the start of `text` (after an optional fence). */
function readInput(text: string): InputResult {
  const body = unfence(text);
  const open = body.search(/\S/);
  if (open < 0) return { ok: true, input: {} };
  if (body[open] !== "{") {
    const shown = body.trim().split("\n")[0]!.slice(0, 80);
    return { ok: false, error: `Action Input must be a JSON object, got: ${shown}` };
  }
  const end = findBalancedEnd(body, open);
  const source = end > 0 ? body.slice(open, end) : body.slice(open);
  try {
    const value = parseLenientJson(source);
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      return { ok: false, error: "Action Input must be a JSON object" };
    }
    return { ok: true, input: value as Record<string, unknown> };
  } catch (err) {
    const why = end > 0 ? (err as Error).message : "the JSON object is not closed (missing })";
    return { ok: false, error: `Action Input is not valid JSON: ${why}` };
  }
}

function finalFromInput(input: Record<string, unknown>, thought: string): string {
  const answer = input.answer ?? input.final_answer ?? input.result ?? input.response;
  if (typeof answer === "string") return answer.trim();
  if (answer !== undefined) return JSON.stringify(answer);
  return thought;
}

function resolveTool(name: string, toolNames: readonly string[]): string | undefined {
  if (toolNames.includes(name)) return name;
  const lower = name.toLowerCase();
  return toolNames.find((t) => t.toLowerCase() === lower);
}

/**
 * Parses a ReAct reply. The first Action wins (one action per turn); an Action FINISH (any
 * case) with `{"answer": …}` counts as a final answer; a missing Action Input means `{}`.
 */
export function parseReact(text: string, toolNames: readonly string[]): ReactParse {
  const cut = cutAtObservation(text);
  let marks = findMarks(cut, ANCHORED);
  if (!marks.some((m) => m.key === "action" || m.key === "final")) {
    // Fall back to keywords mid-line ("Thought: x. Action: y") only when no line starts one.
    marks = findMarks(cut, ANYWHERE);
  }
  const action = marks.find((m) => m.key === "action");
  const final = marks.find((m) => m.key === "final");
  const decision = action && (!final || action.start < final.start) ? action : final;
  const after = (mark: Mark) => marks.find((m) => m.start > mark.start)?.start ?? cut.length;
  const thoughtMark = marks.find((m) => m.key === "thought" && (!decision || m.start < decision.start));
  const thought = (
    thoughtMark
      ? cut.slice(thoughtMark.body, after(thoughtMark))
      : cut.slice(0, decision?.start ?? cut.length)
  ).trim();

  if (!decision) {
    if (marks.length === 0) {
      return {
        kind: "error",
        thought,
        reason: "no_keywords",
        error: "your reply has no Action and no Final Answer",
      };
    }
    return {
      kind: "error",
      thought,
      reason: "no_decision",
      error: "your reply has a Thought but no Action and no Final Answer",
    };
  }
  if (decision.key === "final") {
    return { kind: "final", thought, answer: cut.slice(decision.body).trim() };
  }

  const lineEnd = cut.indexOf("\n", decision.body);
  const { name, argsAt } = readToolName(cut.slice(decision.body, lineEnd < 0 ? cut.length : lineEnd));
  const nextAction = marks.find((m) => m.key === "action" && m.start > decision.start)?.start ?? cut.length;
  const inputMark = marks.find((m) => m.key === "input" && m.start > decision.start && m.start < nextAction);
  let parsed: InputResult;
  if (inputMark) parsed = readInput(cut.slice(inputMark.body, nextAction));
  else if (argsAt !== undefined) parsed = readInput(cut.slice(decision.body + argsAt, nextAction));
  else {
    // No "Action Input:" label: accept a JSON object right below the Action line.
    const below = lineEnd < 0 ? "" : cut.slice(lineEnd + 1, nextAction);
    parsed = /^\s*(```|\{)/.test(below) ? readInput(below) : { ok: true, input: {} };
  }

  if (/^finish$/i.test(name) || /^final[_ ]?answer$/i.test(name)) {
    if (!parsed.ok) {
      return { kind: "error", thought, reason: "bad_input", error: parsed.error };
    }
    return { kind: "final", thought, answer: finalFromInput(parsed.input, thought) };
  }
  if (!name) {
    return { kind: "error", thought, reason: "no_tool_name", error: "the Action line has no tool name" };
  }
  const tool = resolveTool(name, toolNames);
  if (!tool) return { kind: "error", thought, reason: "unknown_tool", error: `unknown tool "${name}"` };
  if (!parsed.ok) return { kind: "error", thought, reason: "bad_input", error: parsed.error };
  return { kind: "action", thought, tool, arguments: JSON.stringify(parsed.input), input: parsed.input };
}
