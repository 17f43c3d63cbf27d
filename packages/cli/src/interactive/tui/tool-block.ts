// One tool call on the screen: while it runs, its name, elapsed time and the last lines of its
// live output; when done, one summary line (✓/✗, time, first line of the result), expanded to
// the whole output on request. Every line is laid out for the width it is given.
import type { Component } from "@mariozechner/pi-tui";
import { truncateToWidth, visibleWidth } from "@mariozechner/pi-tui";
import {
  formatMs,
  mainArgument,
  oneLine,
  resultSummary,
  type Style,
  type ToolOutcome,
  toolMark,
} from "../../render.js";

/** Live output kept per call: enough for the last lines, never the whole of a huge output. */
const TAIL_CHARS = 16_384;
const LIVE_LINES = 5;
const EXPANDED_LINES = 400;

export class ToolBlock implements Component {
  private readonly started = performance.now();
  private tail = "";
  private done: { outcome: ToolOutcome; durationMs: number; summary: string; output: string } | undefined;
  expanded = false;

  constructor(
    readonly callId: string,
    readonly name: string,
    readonly args: unknown,
    private readonly style: Style,
  ) {}

  get running(): boolean {
    return this.done === undefined;
  }

  append(text: string): void {
    this.tail = (this.tail + text).slice(-TAIL_CHARS);
  }

  finish(outcome: ToolOutcome, durationMs: number, output: string): void {
    this.done = { outcome, durationMs, output, summary: oneLine(resultSummary(output), 200) };
  }

  invalidate(): void {}

  /** `mark name argument · time · summary`, the argument shortened first so the result shows. */
  private headLine(width: number, mark: string, time: string, summary: string, failed: boolean): string {
    const s = this.style;
    const arg = mainArgument(this.name, this.args);
    const fixed = `  ${mark} ${this.name}  · ${time}`;
    const summaryRoom = summary ? Math.min(visibleWidth(summary), Math.max(16, Math.floor(width * 0.4))) : 0;
    const argRoom = Math.max(8, width - visibleWidth(fixed) - (summary ? summaryRoom + 3 : 0) - 1);
    const argText = visibleWidth(arg) > argRoom ? truncateToWidth(arg, argRoom, "…") : arg;
    const tailText = summary ? ` ${s.dim("·")} ${failed ? s.red(summary) : s.dim(summary)}` : "";
    return truncateToWidth(
      `  ${mark} ${s.bold(this.name)} ${argText} ${s.dim(`· ${time}`)}${tailText}`,
      width,
      "…",
    );
  }

  render(width: number): string[] {
    const s = this.style;
    if (!this.done) {
      const elapsed = formatMs(performance.now() - this.started);
      const lines = [this.headLine(width, s.cyan("⋯"), elapsed, "", false)];
      const live = this.tail
        .replace(/\r\n?/g, "\n")
        .replace(/\n$/, "")
        .split("\n")
        .filter((l, i, all) => l || i < all.length - 1);
      for (const l of live.slice(-LIVE_LINES))
        lines.push(truncateToWidth(`    ${s.dim(clean(l))}`, width, "…"));
      return lines;
    }
    const d = this.done;
    const failed = d.outcome !== "ok";
    const lines = [this.headLine(width, toolMark(d.outcome, s), formatMs(d.durationMs), d.summary, failed)];
    if (this.expanded) {
      const out = d.output.split("\n");
      for (const l of out.slice(0, EXPANDED_LINES))
        lines.push(truncateToWidth(`    ${clean(l)}`, width, "…"));
      if (out.length > EXPANDED_LINES)
        lines.push(s.dim(`    … ${out.length - EXPANDED_LINES} more lines (/expand shows all)`));
    }
    return lines;
  }
}

/** Output of a command is untrusted: control characters would move the cursor or recolour. */
function clean(line: string): string {
  return line
    .replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f]/g, "")
    .replace(/\t/g, "  ");
}
