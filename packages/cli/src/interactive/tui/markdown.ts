// The model's answer as it streams: markdown rendered by pi-tui's Markdown component (marked),
// code fences highlighted by their language, fences without box characters or indentation (a
// copied block is the code). While text still arrives, only what can no longer change its
// shape is rendered: complete lines, and a table only once its separator row has come, so a
// half-received fence or table never flickers between two layouts.
import { type Component, Markdown, type MarkdownTheme } from "@mariozechner/pi-tui";
import { Block } from "./block.js";
import { highlightCode } from "./highlight.js";

const sgr = (open: string, close: string) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;

export const MARKDOWN_THEME: MarkdownTheme = {
  heading: sgr("1;36", "22;39"),
  link: sgr("4;34", "24;39"),
  linkUrl: sgr("2", "22"),
  code: sgr("33", "39"),
  codeBlock: (s) => s,
  codeBlockBorder: sgr("2", "22"),
  quote: sgr("3", "23"),
  quoteBorder: sgr("2", "22"),
  hr: sgr("2", "22"),
  listBullet: sgr("36", "39"),
  bold: sgr("1", "22"),
  italic: sgr("3", "23"),
  strikethrough: sgr("9", "29"),
  underline: sgr("4", "24"),
  highlightCode: (code, lang) => highlightCode(code, lang),
  codeBlockIndent: "",
};

/** The part of a streaming markdown text whose rendering is final in shape. */
export function stablePrefix(text: string): string {
  const end = text.lastIndexOf("\n");
  const partial = text.slice(end + 1);
  // The line still arriving shows as it comes, unless its start could change what it (or the
  // line above) is: a fence, a table row, a rule or a heading underline.
  const lines = (/^\s*(\||`|[-*_=+\s]*$)/.test(partial) ? text.slice(0, Math.max(end, 0)) : text).split("\n");
  // A table header (a `|` line) without its separator row yet: wait for the next line.
  let hold = lines.length;
  while (hold > 0 && /^\s*\|/.test(lines[hold - 1]!)) hold--;
  const tail = lines.slice(hold);
  if (tail.length === 1 || (tail.length > 1 && !/^\s*\|?\s*:?-{3,}/.test(tail[1]!))) lines.length = hold;
  return lines.join("\n");
}

/**
 * Where the streamed text can be cut into a finished part and the rest: after a blank line
 * outside a code fence, before a line that starts a new block (not an indented continuation).
 * Rendering only the rest as text arrives keeps each chunk's cost flat however long the answer.
 */
export function lastSafeCut(text: string, from: number): number {
  let cut = -1;
  let inFence = false;
  let lineStart = from;
  let prevBlank = false;
  while (lineStart < text.length) {
    const end = text.indexOf("\n", lineStart);
    if (end < 0) break; // the last line is not complete yet
    const line = text.slice(lineStart, end);
    if (/^\s{0,3}(```|~~~)/.test(line)) inFence = !inFence;
    else if (!inFence && prevBlank && line.trim() && !/^[\s|]/.test(line)) cut = lineStart;
    prevBlank = !inFence && line.trim() === "";
    lineStart = end + 1;
  }
  return cut;
}

/** One answer: markdown in colour, or the plain text (NO_COLOR, or --no-color). */
export class AnswerBlock implements Component {
  private raw = "";
  private streaming = true;
  /** Finished parts of a long answer, rendered once per width. */
  private readonly frozen: Markdown[] = [];
  private frozenUpTo = 0;
  private readonly view: Markdown | Block;
  private shown: string | undefined;

  constructor(private readonly markdown: boolean) {
    this.view = markdown ? new Markdown("", 0, 0, MARKDOWN_THEME) : new Block("");
  }

  get text(): string {
    return this.raw;
  }

  append(delta: string): void {
    this.raw += delta;
  }

  /** The whole text is in: render all of it. */
  finish(text?: string): void {
    if (text !== undefined && text !== this.raw) {
      // A different final text (rare: a provider's cleanup) is rendered whole.
      this.raw = text;
      this.frozen.length = 0;
      this.frozenUpTo = 0;
    }
    this.streaming = false;
  }

  invalidate(): void {
    this.view.invalidate();
    for (const f of this.frozen) f.invalidate();
    this.shown = undefined;
  }

  render(width: number): string[] {
    if (this.markdown && this.streaming) {
      const cut = lastSafeCut(this.raw, this.frozenUpTo);
      if (cut > this.frozenUpTo) {
        this.frozen.push(new Markdown(this.raw.slice(this.frozenUpTo, cut), 0, 0, MARKDOWN_THEME));
        this.frozenUpTo = cut;
      }
    }
    const rest = this.raw.slice(this.frozenUpTo);
    const text = this.streaming && this.markdown ? stablePrefix(rest) : rest;
    const shown = this.markdown ? text : text.trim();
    if (shown !== this.shown) {
      this.view.setText(shown);
      this.shown = shown;
    }
    const lines: string[] = [];
    for (const f of this.frozen) {
      const part = trimEnd(f.render(width));
      if (lines.length && part.length) lines.push("");
      lines.push(...part);
    }
    const tail = shown.trim() ? trimEnd(this.view.render(width)) : [];
    if (lines.length && tail.length) lines.push("");
    lines.push(...tail);
    // Markdown pads its lines to the width: blanks a copy of the screen would carry.
    return lines.map((l) => l.replace(/(?: |\x1b\[[0-9;]*m)+$/, ""));
  }
}

/** Lines without the blank ones at the end. */
function trimEnd(lines: string[]): string[] {
  const out = [...lines];
  while (out.length && out.at(-1)?.trim() === "") out.pop();
  return out;
}
