// What the session shows: streaming text, one line per tool call (rewritten in place with its
// status and duration in a terminal), a spinner while the model thinks, and the status line.
import type { AgentEvent, TodoItem } from "@hands/agent";
import { formatCost } from "@hands/llm";
import {
  fitWidth,
  formatMs,
  mainArgument,
  oneLine,
  resultSummary,
  type Style,
  shownOutput,
  thinkingLine,
  toolMark,
  toolOutcome,
} from "../render.js";
import type { StatusInfo, ToolRecord } from "./front.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export function formatTokens(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

export type { ToolRecord } from "./front.js";

export class SessionView {
  private spinner: NodeJS.Timeout | undefined;
  private spinStart = 0;
  private frame = 0;
  /** Text on the current line that is not ended yet (streamed text or a pending tool line). */
  private openLine: "text" | "tool" | "spinner" | undefined;
  private pendingTool: { callId: string; line: string } | undefined;
  private readonly toolStarts = new Map<string, { name: string; args: unknown }>();
  /** Completed tool calls, newest last, for /expand. */
  readonly tools: ToolRecord[] = [];
  /** The model's reasoning per response, newest last, for /thinking. */
  readonly thoughts: string[] = [];
  /** Characters of reasoning streamed in the current response (the spinner shows them). */
  private thinkingChars = 0;
  /** Tokens of this turn so far, for the spinner. */
  turnTokens = 0;
  /** The input tokens of the latest model call: how full the context is. */
  contextTokens = 0;
  todos: TodoItem[] = [];

  constructor(
    private readonly write: (text: string) => void,
    readonly style: Style,
    readonly tty: boolean,
    /** The terminal's width: a tool line longer than it would wrap, and a wrapped line cannot
     * be rewritten in place. Undefined (a pipe) leaves lines whole. */
    private readonly columns: () => number | undefined = () => undefined,
  ) {}

  /** A tool line cut to the terminal's width. */
  private fit(text: string): string {
    const columns = this.columns();
    // One column spare: text in the last column leaves some terminals waiting to wrap.
    return this.tty && columns && columns >= 20 ? fitWidth(text, columns - 1) : text;
  }

  /** Ends whatever line is open, so the next output starts on a fresh line. */
  breakLine(): void {
    this.stopSpinner();
    if (this.openLine === "text" || this.openLine === "tool") this.write("\n");
    this.openLine = undefined;
    this.pendingTool = undefined;
  }

  print(text: string): void {
    this.breakLine();
    this.write(text.endsWith("\n") ? text : `${text}\n`);
  }

  startSpinner(label = "thinking"): void {
    if (!this.tty || this.spinner) return;
    this.breakLine();
    this.spinStart = performance.now();
    const draw = () => {
      const elapsed = formatMs(performance.now() - this.spinStart);
      const f = FRAMES[this.frame++ % FRAMES.length];
      const thinking = this.thinkingChars ? ` · thinking (${formatTokens(this.thinkingChars)} chars)` : "";
      this.write(
        `\r\x1b[2K${this.style.cyan(f ?? "")} ${this.style.dim(`${label}${thinking} · ${elapsed} · ${formatTokens(this.turnTokens)} tokens · Ctrl-C to stop`)}`,
      );
    };
    draw();
    this.openLine = "spinner";
    this.spinner = setInterval(draw, 100);
  }

  stopSpinner(): void {
    if (!this.spinner) return;
    clearInterval(this.spinner);
    this.spinner = undefined;
    this.write("\r\x1b[2K");
    if (this.openLine === "spinner") this.openLine = undefined;
  }

  readonly onEvent = (e: AgentEvent): void => {
    const s = this.style;
    switch (e.type) {
      case "model_request":
        this.thinkingChars = 0;
        this.startSpinner();
        break;
      case "thinking_delta":
        // Thinking stays collapsed: the spinner says it is happening, the text waits for /thinking.
        this.thinkingChars += e.text.length;
        break;
      case "thinking":
        this.thoughts.push(e.text);
        this.print(s.dim(`${thinkingLine(e.text, e.tokens, 90)} · /thinking to expand`));
        break;
      case "model_notice":
        this.print(s.yellow(`  ! ${oneLine(e.message, 160)}`));
        break;
      case "text_delta":
        if (this.openLine !== "text") {
          this.breakLine();
          this.openLine = "text";
        }
        this.write(e.text);
        break;
      case "model_retry":
        this.print(
          s.yellow(`  ↻ model call failed (${e.error}); retry ${e.attempt} in ${formatMs(e.delayMs)}`),
        );
        break;
      case "model_response":
        this.stopSpinner();
        this.turnTokens += e.usage.inputTokens + e.usage.outputTokens;
        this.contextTokens = e.usage.inputTokens;
        if (this.openLine === "text") this.breakLine();
        else if (e.content.trim() && this.openLine === undefined && e.toolCalls.length === 0)
          this.print(e.content);
        break;
      case "correction":
        this.print(s.yellow(`  ! ${oneLine(e.text, 160)}`));
        break;
      case "tool_start": {
        this.toolStarts.set(e.callId, { name: e.name, args: e.args });
        const line = `${s.bold(e.name)} ${mainArgument(e.name, e.args)}`;
        if (this.tty) {
          this.breakLine();
          this.write(this.fit(`  ${s.cyan("⋯")} ${line}`));
          this.openLine = "tool";
          this.pendingTool = { callId: e.callId, line };
        }
        break;
      }
      case "approval": {
        const denied = deniedLine(e, s);
        if (denied) this.print(denied);
        break;
      }
      case "tool_end": {
        const start = this.toolStarts.get(e.callId);
        this.tools.push({ name: e.name, args: start?.args, output: e.output, isError: e.isError });
        if (e.name === "todo" && Array.isArray(e.data?.["todos"])) this.todos = e.data["todos"] as TodoItem[];
        const line = `${s.bold(e.name)} ${mainArgument(e.name, start?.args)}`;
        const outcome = toolOutcome(e);
        const summary = oneLine(resultSummary(shownOutput(e.output, e.data)), 90);
        const text = this.fit(
          `  ${toolMark(outcome, s)} ${line} ${s.dim(`· ${formatMs(e.durationMs)} ·`)} ${outcome === "ok" ? s.dim(summary) : s.red(summary)}`,
        );
        if (this.pendingTool?.callId === e.callId && this.openLine === "tool") {
          this.write(`\r\x1b[2K${text}\n`);
          this.openLine = undefined;
          this.pendingTool = undefined;
        } else this.print(text);
        break;
      }
      case "result":
        this.breakLine();
        if (e.status !== "done") this.print(s.red(`✘ ${e.status}: ${e.reason ?? ""}`));
        break;
    }
  };

  /** model · workspace · sandbox · context · cost · approval · todo */
  statusLine(info: StatusInfo): string {
    const ctx = `ctx ${formatTokens(this.contextTokens)}${info.contextBudget ? `/${formatTokens(info.contextBudget)}` : ""}`;
    const cost = formatCost(info.usage.costUsd);
    const parts = [
      info.model,
      shortPath(info.workspace),
      `sandbox ${info.sandbox}`,
      ctx,
      cost,
      `approval ${info.approval}`,
    ];
    if (this.todos.length) {
      const done = this.todos.filter((t) => t.status === "done").length;
      const current = this.todos.find((t) => t.status === "in_progress");
      parts.push(`todo ${done}/${this.todos.length}${current ? `: ${oneLine(current.text, 30)}` : ""}`);
    }
    const line = `── ${parts.join(" · ")} ──`;
    return this.style.dim(info.width ? oneLine(line, info.width) : line);
  }
}

function shortPath(p: string): string {
  const home = process.env.HOME;
  return home && p.startsWith(`${home}/`) ? `~${p.slice(home.length)}` : p;
}

/** The first `max` lines of a text, and how many more there were. */
export function capLines(text: string, max: number): string {
  const lines = text.split("\n");
  return lines.length <= max
    ? text
    : [...lines.slice(0, max), `… ${lines.length - max} more lines`].join("\n");
}

/** A unified diff with + and - lines coloured. */
export function colorDiff(diff: string, style: Style): string {
  return diff
    .split("\n")
    .map((l) =>
      l.startsWith("+++") || l.startsWith("---")
        ? style.bold(l)
        : l.startsWith("+")
          ? style.green(l)
          : l.startsWith("-")
            ? style.red(l)
            : l.startsWith("@@")
              ? style.cyan(l)
              : l,
    )
    .join("\n");
}

/** The line shown when a tool call was refused by someone other than the user (policy, mode…). */
export function deniedLine(e: Extract<AgentEvent, { type: "approval" }>, s: Style): string | undefined {
  if (e.allow || e.source === "user") return undefined;
  const by = e.source === "policy" ? `policy${e.rule ? ` (${e.rule})` : ""}` : e.source;
  return s.red(`  ⊘ denied by ${by}: ${e.reason ?? ""}`);
}
