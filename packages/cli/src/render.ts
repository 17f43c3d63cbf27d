// The live view on stderr: one readable line per thought, tool call and result.
import type { AgentEvent } from "@hands/agent";
import { formatCost } from "@hands/llm";

export interface Style {
  dim(s: string): string;
  bold(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

const wrap = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;
export const COLOR: Style = {
  dim: wrap(2, 22),
  bold: wrap(1, 22),
  red: wrap(31, 39),
  green: wrap(32, 39),
  yellow: wrap(33, 39),
  cyan: wrap(36, 39),
};
const id = (s: string) => s;
export const PLAIN: Style = { dim: id, bold: id, red: id, green: id, yellow: id, cyan: id };

/** The argument that says what a call is about (path, pattern, command…), on one line. */
export function mainArgument(name: string, args: unknown): string {
  if (typeof args !== "object" || args === null) return oneLine(String(args ?? ""), 80);
  const a = args as Record<string, unknown>;
  const preferred = ["path", "pattern", "command", "code"].find((k) => typeof a[k] === "string");
  const value = preferred ? (a[preferred] as string) : Object.values(a).find((v) => typeof v === "string");
  if (name === "list_dir" && value === undefined) return ".";
  return oneLine(typeof value === "string" ? value : "", 80);
}

const WIDE =
  /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]|[\u{1f300}-\u{1faff}\u{20000}-\u{3fffd}]/u;

/** Columns a character takes in a terminal: wide (East Asian, emoji) ones take two. */
function charWidth(ch: string): number {
  return WIDE.test(ch) ? 2 : 1;
}

/** Columns text takes in a terminal (no escape sequences in it). */
export function displayWidth(text: string): number {
  let n = 0;
  for (const ch of text) n += charWidth(ch);
  return n;
}

/**
 * Cuts styled text to `columns` terminal columns (escape sequences take none), ending with "…"
 * and a style reset when cut. A line that would wrap cannot be rewritten in place with `\r`.
 */
export function fitWidth(text: string, columns: number): string {
  if (displayWidth(stripStyle(text)) <= columns) return text;
  let used = 0;
  let out = "";
  for (let i = 0; i < text.length; ) {
    const styleCode = /^\x1b\[[0-9;]*m/.exec(text.slice(i, i + 16));
    if (styleCode) {
      out += styleCode[0];
      i += styleCode[0].length;
      continue;
    }
    const ch = String.fromCodePoint(text.codePointAt(i) ?? 32);
    if (used + charWidth(ch) > columns - 1) break; // room for the "…"
    out += ch;
    used += charWidth(ch);
    i += ch.length;
  }
  return `${out}…${text.includes("\x1b[") ? "\x1b[0m" : ""}`;
}

function stripStyle(text: string): string {
  return text.replace(/\x1b\[[0-9;]*m/g, "");
}

export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * A tool's output as the person watching sees it: a command's clean run reaches the model as its
 * output alone (formatExecResult), and is shown with its exit code as every other run is.
 */
export function shownOutput(output: string, data?: Record<string, unknown> | undefined): string {
  if (data?.["exitCode"] === 0 && !output.startsWith("exit code:")) return `exit code: 0\n${output}`;
  return output;
}

/** The first informative lines of a tool's output: "exit code: 0 · 55" rather than a section header. */
export function resultSummary(output: string): string {
  const lines = output
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !/^(stdout|stderr):$/.test(l));
  return lines.slice(0, /^exit code:/.test(lines[0] ?? "") ? 2 : 1).join(" · ");
}

/** A response's thinking collapsed to one dim line: how much, and how it begins. */
export function thinkingLine(text: string, tokens: number | undefined, width = 100): string {
  const size = tokens ? `${tokens.toLocaleString("en")} tokens` : `${text.length.toLocaleString("en")} chars`;
  return `✻ thought (${size}): ${oneLine(text, width)}`;
}

/** How a tool call ended. A command that ran and failed is a normal result for the model (not
 * isError), but the person watching must not see it as a success. */
export type ToolOutcome = "ok" | "error" | "timed out" | "aborted";

export function toolOutcome(e: {
  isError: boolean;
  data?: Record<string, unknown> | undefined;
}): ToolOutcome {
  if (e.isError) return "error";
  const d = e.data ?? {};
  if (d["timedOut"] === true) return "timed out";
  if (d["aborted"] === true) return "aborted";
  // null: killed by a signal; a number other than 0: the command failed.
  if ("exitCode" in d && d["exitCode"] !== 0) return "error";
  return "ok";
}

/** ✓ for success, ✗ for a failure, ⏱ for a timeout, ⊘ for a call stopped by the user. */
export function toolMark(outcome: ToolOutcome, s: Style): string {
  switch (outcome) {
    case "ok":
      return s.green("✓");
    case "error":
      return s.red("✗");
    case "timed out":
      return s.red("⏱");
    case "aborted":
      return s.yellow("⊘");
  }
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export class LiveView {
  /** With --plan the first run only plans: its success is a plan, not the task done. */
  private planning: boolean;

  constructor(
    private readonly write: (text: string) => void,
    private readonly style: Style,
    options: { plan?: boolean; answer?: AnswerStream } = {},
  ) {
    this.planning = options.plan ?? false;
    this.answer = options.answer;
  }

  /** When the answer streams to the terminal, a step's text is not repeated here. */
  private readonly answer: AnswerStream | undefined;

  readonly onEvent = (e: AgentEvent): void => {
    const s = this.style;
    switch (e.type) {
      case "run_start":
        this.write(s.dim(`hands · ${e.provider} · ${e.model} · ${e.workspace}\n`));
        break;
      case "model_retry":
        this.write(
          s.yellow(`  ↻ model call failed (${e.error}); retry ${e.attempt} in ${formatMs(e.delayMs)}\n`),
        );
        break;
      case "thinking":
        this.write(s.dim(`${thinkingLine(e.text, e.tokens)}\n`));
        break;
      case "model_notice":
        this.write(s.yellow(`  ! ${oneLine(e.message, 200)}\n`));
        break;
      case "model_response":
        // A thought that comes with tool calls; a final answer goes to stdout instead.
        if (e.toolCalls.length > 0 && e.content.trim() && !this.answer?.streamed)
          this.write(s.dim(`● ${oneLine(e.content, 200)}\n`));
        break;
      case "correction":
        this.write(s.yellow(`  ! ${oneLine(e.text, 160)}\n`));
        break;
      case "model_choice":
        // Only a change of model is news (routing: chat, escalation, back to the executor).
        if (e.changed) this.write(s.dim(`  ⇄ ${e.model} (${e.role}: ${e.reason})\n`));
        break;
      case "hook":
        if (e.outcome === "failed")
          this.write(
            s.yellow(`  ! hook ${e.event} ${oneLine(e.hook, 60)} failed: ${oneLine(e.message ?? "", 160)}\n`),
          );
        else if (e.outcome === "denied" || e.outcome === "changed" || e.outcome === "continued")
          this.write(
            s.dim(
              `  ⚑ hook ${e.event} ${oneLine(e.hook, 60)}: ${e.outcome}${e.message ? ` (${oneLine(e.message, 120)})` : ""}\n`,
            ),
          );
        break;
      case "subagent_start":
        this.write(s.dim(`  ⤷ sub-agent ${e.runId} on ${e.model}: ${oneLine(e.task, 100)}\n`));
        break;
      case "subagent_end":
        this.write(
          s.dim(
            `  ⤶ sub-agent ${e.runId}: ${e.status} · ${e.steps} steps · ${(e.usage.inputTokens + e.usage.outputTokens).toLocaleString("en")} tokens\n`,
          ),
        );
        break;
      case "tool_start":
        this.write(`${s.cyan("→")} ${s.bold(e.name)} ${mainArgument(e.name, e.args)}\n`);
        break;
      case "tool_end": {
        const outcome = toolOutcome(e);
        const first = oneLine(resultSummary(shownOutput(e.output, e.data)), 100);
        this.write(
          `  ${toolMark(outcome, s)} ${outcome === "ok" ? s.dim(first) : s.red(first)} ${s.dim(`· ${formatMs(e.durationMs)}`)}\n`,
        );
        break;
      }
      case "result": {
        const tokens = e.usage.inputTokens + e.usage.outputTokens;
        const cost = e.usage.costUsd ? ` · ${formatCost(e.usage.costUsd)}` : "";
        const summary = `${e.steps} step${e.steps === 1 ? "" : "s"} · ${tokens.toLocaleString("en")} tokens${cost} · ${formatMs(e.durationMs)}`;
        const planned = this.planning;
        this.planning = false;
        if (e.status === "done") this.write(s.green(`✔ ${planned ? "planned" : "done"} · ${summary}\n`));
        else this.write(s.red(`✘ ${e.status}: ${e.reason ?? ""} · ${summary}\n`));
        break;
      }
    }
  };
}

/**
 * A one-shot run in a terminal: the answer is written to stdout as it streams, not all at the
 * end. Text of a step that turns out to call tools stays where it is (it was the model's
 * preamble); `finish` then writes the answer only when it was not streamed whole.
 */
export class AnswerStream {
  /** What this step streamed so far. */
  private step = "";
  /** Text of the step that ended without tool calls: the answer, as shown. */
  private last: string | undefined;

  constructor(private readonly write: (text: string) => void) {}

  /** True when the step's text went to the terminal (the live view need not repeat it). */
  get streamed(): boolean {
    return this.step.length > 0;
  }

  readonly onEvent = (e: AgentEvent): void => {
    if (e.type === "model_request") this.step = "";
    else if (e.type === "text_delta") {
      this.step += e.text;
      this.write(e.text);
    } else if (e.type === "model_response") {
      if (this.step && !this.step.endsWith("\n")) this.write("\n");
      this.last = e.toolCalls.length === 0 ? this.step : undefined;
    }
  };

  /** Ends the run's output with its answer, unless that is what was streamed. */
  finish(answer: string): void {
    if (this.last === undefined || this.last.trim() !== answer.trim()) this.write(`${answer}\n`);
  }
}
