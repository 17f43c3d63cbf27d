// Parses one ReAct turn (Thought / Action / Action Input, or Final Answer) from free text.
// Forgiving by design: format drift is the most common way small models fail, and every
// slip we can read safely saves a correction turn. What the structure says wins over what
// merely looks like a keyword: text inside <think>, a quoted example in a code fence, or an
// "Observation:" echoed before the model's own Thought never become a decision.
import { finalFromInput, type InputResult, readActionInput, readLineArguments } from "./react-input.js";
import { type JsonAction, readJsonAction } from "./react-json-action.js";
import type { ToolSchema } from "./types.js";

export type ReactErrorReason = "no_keywords" | "no_decision" | "no_tool_name" | "unknown_tool" | "bad_input";

export type ReactParse =
  | {
      kind: "action";
      thought: string;
      tool: string;
      /** The arguments re-serialised as strict JSON. */
      arguments: string;
      input: Record<string, unknown>;
      /** Further Actions in the same reply, which are not run (one Action per turn). */
      ignoredActions: number;
    }
  | { kind: "final"; thought: string; answer: string }
  | {
      kind: "error";
      thought: string;
      reason: ReactErrorReason;
      error: string;
      /** The tool whose input was refused (reason "bad_input"). */
      tool?: string;
    };

type Key = "thought" | "action" | "input" | "final" | "observation";

interface Mark {
  key: Key;
  /** A bare "Answer:", which decides only when no Action follows it. */
  weak?: boolean;
  /** Where the keyword starts. */
  start: number;
  /** Where the text after "Keyword:" starts. */
  body: number;
}

// The keyword, an optional step number ("Thought 2:", as in the ReAct paper), optional closing
// ** and a colon (ASCII or full-width, as Chinese-tuned models emit). "Answer:" (LlamaIndex's
// final keyword) counts only at a line start.
const WORDS = String.raw`thought|action[ \t_-]*input|action|final[ \t_-]*answer|observation`;
const TAIL = String.raw`(?:[ \t]+\d+)?[ \t]*(?:\*\*|__)?[ \t]*[:：](?:[ \t]*(?:\*\*|__)(?!\w))?[ \t]*`;
// Line start, then optional markdown decoration (**, __, #, >), one character per step so a
// long run of them cannot make the pattern backtrack exponentially.
const ANCHORED = new RegExp(String.raw`^[ \t]*(?:[*_#>][ \t]*)*(${WORDS}|answer)${TAIL}`, "gim");
const ANYWHERE = new RegExp(String.raw`\b(${WORDS})${TAIL}`, "gi");
const FINISH_NAME = /^(?:finish|final[ _-]?answer|answer)$/i;
/** "Action: None" / "N/A" / "no action": the model means to answer without a tool. */
const NO_ACTION = /^[\s`"'*]*(?:none|n\/a|no[ _-]?(?:action|tool)s?(?: needed)?)(?![\w/])/i;
/** An "Action Input: None" line under "Action: None". */
const NO_INPUT_LINE =
  /^\s*(?:[*_#>][ \t]*)*action[ \t_-]*input[ \t]*[:：][ \t]*(?:none|n\/a|null|\{\s*\})?[ \t]*(?:\n|$)/i;
/** A reply cut inside a trailing "Observation" keyword (e.g. at the token limit). */
const PARTIAL_OBSERVATION = /\n[ \t]*obs(?:e(?:r(?:v(?:a(?:t(?:i(?:o(?:n)?)?)?)?)?)?)?)?[ \t]*$/i;
const THINK_OPEN = /^\s*<(think|thinking|reasoning)>/i;
const THINK_CLOSE = /(?:^|\n)[ \t]*<\/(think|thinking|reasoning)>/i;

function keyOf(word: string): Key {
  const w = word.toLowerCase().replace(/[ \t_-]+/g, "");
  if (w === "actioninput") return "input";
  if (w === "finalanswer" || w === "answer") return "final";
  return w as Key;
}

function findMarks(text: string, pattern: RegExp): Mark[] {
  const marks: Mark[] = [];
  for (const m of text.matchAll(pattern)) {
    const weak = m[1]!.toLowerCase() === "answer";
    marks.push({ key: keyOf(m[1]!), start: m.index, body: m.index + m[0].length, ...(weak ? { weak } : {}) });
  }
  return marks;
}

const isDecision = (m: Mark) => m.key === "action" || m.key === "final";

/**
 * Splits off a leading reasoning block (<think>…</think>, or only the closing tag when the chat
 * template opened it). The reply proper is what follows; an unclosed block leaves none.
 */
export function splitThinking(text: string): { thinking: string; body: string } {
  const open = THINK_OPEN.exec(text);
  if (open) {
    const closeTag = `</${open[1]!.toLowerCase()}>`;
    const close = text.toLowerCase().indexOf(closeTag, open[0].length);
    if (close < 0) return { thinking: text.slice(open[0].length), body: "" };
    return { thinking: text.slice(open[0].length, close), body: text.slice(close + closeTag.length) };
  }
  const close = THINK_CLOSE.exec(text);
  if (close && !/<(think|thinking|reasoning)>/i.test(text.slice(0, close.index))) {
    return { thinking: text.slice(0, close.index), body: text.slice(close.index + close[0].length) };
  }
  return { thinking: "", body: text };
}

/** [start, end) of each ``` block; an unclosed one runs to the end. */
function fencedBlocks(text: string): Array<[number, number]> {
  const lines = [...text.matchAll(/^[ \t]*```[^\n]*/gm)];
  const blocks: Array<[number, number]> = [];
  for (let i = 0; i < lines.length; i += 2) {
    const close = lines[i + 1];
    blocks.push([lines[i]!.index, close ? close.index + close[0].length : text.length]);
  }
  return blocks;
}

/**
 * The keyword marks that carry the reply's structure. Keywords inside a code fence are a quoted
 * example unless the fence holds the whole decision and nothing follows it (a reply wrapped in
 * ```). Mid-line keywords count only in a reply that starts with one ("Thought: x. Action: y").
 */
function structureMarks(body: string): Mark[] {
  const all = findMarks(body, ANCHORED);
  const blocks = fencedBlocks(body);
  const blockOf = (m: Mark) => blocks.find(([a, b]) => m.start > a && m.start < b);
  const outside = all.filter((m) => !blockOf(m));
  let marks = outside;
  if (!outside.some(isDecision)) {
    const last = all.filter(isDecision).map(blockOf).at(-1);
    if (last && body.slice(last[1]).trim() === "") marks = all;
  }
  if (!marks.some(isDecision) && all[0] && body.slice(0, all[0].start).trim() === "") {
    const loose = findMarks(body, ANYWHERE).filter((m) => !blockOf(m));
    if (loose.some(isDecision)) return loose;
  }
  // "Action: grep Action Input: x" on one line: the input keyword counts on an Action line.
  // (Anchored marks start at their line's start.)
  const actionLines = new Set(marks.filter((m) => m.key === "action").map((m) => m.start));
  const onActionLine = findMarks(body, ANYWHERE).filter((m) => {
    if (m.key !== "input") return false;
    const lineStart = body.lastIndexOf("\n", m.start - 1) + 1;
    return actionLines.has(lineStart) && !/^[ \t*_#>]*$/.test(body.slice(lineStart, m.start));
  });
  return onActionLine.length ? [...marks, ...onActionLine].sort((a, b) => a.start - b.start) : marks;
}

/**
 * An Observation echoed before the decision holds the tool's output, which may contain
 * keyword lines of its own (a file that is a ReAct transcript): when the model's own Thought
 * follows, everything between is the echo and carries no structure.
 */
function dropEchoes(marks: readonly Mark[]): Mark[] {
  // nextThought[i]: index of the first Thought mark after i, or -1.
  const nextThought: number[] = new Array(marks.length);
  for (let i = marks.length - 1, t = -1; i >= 0; i--) {
    nextThought[i] = t;
    if (marks[i]!.key === "thought") t = i;
  }
  const out: Mark[] = [];
  for (let i = 0; i < marks.length; i++) {
    const m = marks[i]!;
    out.push(m);
    if (isDecision(m)) return out.concat(marks.slice(i + 1));
    if (m.key === "observation" && nextThought[i]! > 0) i = nextThought[i]! - 1;
  }
  return out;
}

/** Where a hallucinated "Observation:" starts: the first one after the decision. */
function observationCut(body: string, marks: readonly Mark[], after: number | undefined): number {
  for (const m of marks) {
    if (m.key !== "observation") continue;
    // Without a decision, an Observation that opens the reply is an echo: keep what follows.
    if (after === undefined ? body.slice(0, m.start).trim() !== "" : m.start > after) return m.start;
  }
  return body.length;
}

/**
 * The reply as the model meant it: without a leading reasoning block and without an
 * Observation it wrote after its Action (the model must not invent results).
 */
export function cutAtObservation(text: string): string {
  const { body } = splitThinking(text);
  const marks = dropEchoes(structureMarks(body));
  return body.slice(0, observationCut(body, marks, marks.find(isDecision)?.start));
}

function normalise(name: string): string {
  return name
    .toLowerCase()
    .replace(/^(?:functions|tools?)[.:]/, "")
    .replace(/[\s_.-]+/g, "");
}

/** Exact, then case-insensitive, then ignoring separators and a "functions." prefix. */
function findTool(name: string, tools: readonly ToolSchema[]): ToolSchema | undefined {
  if (!name) return undefined;
  const lower = name.toLowerCase();
  const key = normalise(name);
  return (
    tools.find((t) => t.name === name) ??
    tools.find((t) => t.name.toLowerCase() === lower) ??
    tools.find((t) => normalise(t.name) === key)
  );
}

/**
 * A tool named as a whole word in a wordy Action line ("Action: use the `grep` tool"), if only
 * one is and the line does not say not to.
 */
function mentionedTool(line: string, tools: readonly ToolSchema[]): ToolSchema | undefined {
  if (/\b(?:not|no|never|instead|without|don't|won't|can't|cannot)\b/i.test(line)) return undefined;
  const named = tools.filter((t) =>
    new RegExp(String.raw`(?:^|[^\w-])${t.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\w-])`, "i").test(
      line,
    ),
  );
  return named.length === 1 ? named[0] : undefined;
}

/**
 * Reads the tool name at the start of an Action line, tolerating backticks, bold and quotes;
 * returns the offset in `line` where anything after the name (arguments, words) starts.
 */
function readToolName(line: string): { name: string; after: number } {
  const lead = /^[\s`"'*]*/.exec(line)![0].length;
  const name = /^[\p{L}\p{N}_.-]*/u.exec(line.slice(lead))![0].replace(/\.+$/, "");
  const afterName = lead + name.length;
  const after = /^[`"'*]*/.exec(line.slice(afterName))![0].length + afterName;
  return { name, after };
}

const FINISH_TOOL: ToolSchema = {
  name: "Finish",
  description: "",
  parameters: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
};

function fromJsonAction(json: JsonAction, thought: string): ReactParse {
  if (json.kind === "final") return { kind: "final", thought, answer: json.answer || thought };
  if (json.kind === "error")
    return { kind: "error", thought, reason: "bad_input", error: json.error, tool: json.tool };
  return {
    kind: "action",
    thought,
    tool: json.tool,
    arguments: JSON.stringify(json.input),
    input: json.input,
    ignoredActions: json.more,
  };
}

/**
 * Parses a ReAct reply. The first Action or Final Answer decides (one action per turn); an
 * Action FINISH (any case) counts as a final answer, "Action: None" too; a missing Action Input
 * means `{}`; a plain-text input goes to the tool's one string parameter.
 */
export function parseReact(text: string, tools: readonly ToolSchema[]): ReactParse {
  const body = splitThinking(text).body.replace(PARTIAL_OBSERVATION, "");
  const marks = dropEchoes(structureMarks(body));
  const decision = marks.find(
    (m, i) => isDecision(m) && !(m.weak && marks.slice(i + 1).some((n) => n.key === "action")),
  );
  let end = observationCut(body, marks, decision?.start);
  const live = () => marks.filter((m) => m.start < end);
  const next = (mark: Mark) => live().find((m) => m.start > mark.start)?.start ?? end;
  const thoughtOf = () => {
    const current = live();
    const mark = current.find((m) => m.key === "thought" && (!decision || m.start < decision.start));
    return (mark ? body.slice(mark.body, next(mark)) : body.slice(0, current[0]?.start ?? end)).trim();
  };

  if (!decision) {
    const thought = thoughtOf();
    const json = readJsonAction(body, tools);
    if (json) return fromJsonAction(json, thought);
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
    return { kind: "final", thought: thoughtOf(), answer: body.slice(decision.body, end).trim() };
  }

  // The tool name is on the Action line, or on the next line when that one is empty.
  const nextMark = next(decision);
  let lineStart = decision.body;
  if (/^[ \t]*(\n|$)/.test(body.slice(lineStart, nextMark))) {
    const below = /^[ \t]*\n\s*/.exec(body.slice(lineStart, nextMark));
    if (below) lineStart += below[0].length;
  }
  const lineBreak = body.indexOf("\n", lineStart);
  const lineEnd = lineBreak < 0 || lineBreak > end ? end : lineBreak;
  const line = body.slice(lineStart, Math.max(lineStart, Math.min(lineEnd, nextMark)));
  const { name, after } = readToolName(line);
  const thought = thoughtOf();
  if (!name || /^\s*(```|\{)/.test(line)) {
    // "Action:" over a JSON blob, as LangChain's chat agents write it.
    const json = readJsonAction(body.slice(decision.body, end), tools);
    if (json) return fromJsonAction(json, thought);
  }

  const nextDecision = marks.find((m) => isDecision(m) && m.start > decision.start)?.start ?? end;
  const inputMark = marks.find(
    (m) => m.key === "input" && m.start > decision.start && m.start < nextDecision,
  );
  const shift = (read: InputResult | undefined, by: number) =>
    read?.ok ? { ...read, end: read.end + by } : read;
  // JSON may run past a keyword that sits inside one of its strings, so readers get the rest of
  // the reply; plain text stops at the next keyword.
  const readFor = (tool: ToolSchema): InputResult => {
    const fromLine = () => shift(readLineArguments(body.slice(lineStart + after), tool), lineStart + after);
    if (inputMark) {
      const read = shift(
        readActionInput(body.slice(inputMark.body), next(inputMark) - inputMark.body, tool),
        inputMark.body,
      )!;
      // "Action: read_file(a.txt)" above an empty "Action Input:" line.
      return read.ok && Object.keys(read.input).length === 0 ? (fromLine() ?? read) : read;
    }
    const onLine = fromLine();
    if (onLine) return onLine;
    // No "Action Input:" label: accept a JSON object or fence right below the Action line.
    const below = body.slice(lineEnd, nextMark);
    if (/^\s*(```|\{)/.test(below))
      return shift(readActionInput(body.slice(lineEnd), below.length, tool), lineEnd)!;
    return { ok: true, input: {}, end: lineEnd };
  };

  if (FINISH_NAME.test(name) || /^final answer\b/i.test(line.trim())) {
    const parsed = readFor(FINISH_TOOL);
    if (!parsed.ok) return { kind: "error", thought, reason: "bad_input", error: parsed.error };
    return { kind: "final", thought, answer: finalFromInput(parsed.input, thought) };
  }
  let tool = findTool(name, tools);
  if (!tool && NO_ACTION.test(line)) {
    // CrewAI traces answer this way: what follows the Action line is the answer. Without one,
    // taking the thought as the answer could end a task on "I need to look first".
    const rest = body.slice(lineEnd, end).replace(NO_INPUT_LINE, "").trim();
    if (rest) return { kind: "final", thought, answer: rest };
    return {
      kind: "error",
      thought,
      reason: "no_decision",
      error: `"Action: ${line.trim()}" names no tool; to answer without one, write "Final Answer: <your answer>"`,
    };
  }
  if (name) tool ??= mentionedTool(line, tools);
  if (!name && !tool) {
    return { kind: "error", thought, reason: "no_tool_name", error: "the Action line has no tool name" };
  }
  if (!tool) {
    const words = line.trim().replace(/[`"'*]/g, "");
    const shown = words === name ? name : words.length > 60 ? `${words.slice(0, 60)}…` : words;
    return { kind: "error", thought, reason: "unknown_tool", error: `unknown tool "${shown}"` };
  }
  const parsed = readFor(tool);
  if (!parsed.ok)
    return { kind: "error", thought, reason: "bad_input", error: parsed.error, tool: tool.name };
  // A hallucinated Observation is the first one after the arguments.
  end = observationCut(body, marks, Math.max(decision.start, parsed.end - 1));
  const ignoredActions = marks.filter(
    (m) => m.key === "action" && m.start >= parsed.end && m.start < end,
  ).length;
  return {
    kind: "action",
    thought,
    tool: tool.name,
    arguments: JSON.stringify(parsed.input),
    input: parsed.input,
    ignoredActions,
  };
}
