// Rendering an outline as text for the model: one line per symbol, nested symbols indented.
import type { OutlineSymbol } from "./types.js";

export interface FormatOptions {
  /** Stop after this many symbol lines (the rest is counted in a closing note). */
  maxLines?: number;
}

/** Counts symbols including nested ones. */
export function countSymbols(symbols: readonly OutlineSymbol[]): number {
  let n = 0;
  for (const s of symbols) n += 1 + (s.children ? countSymbols(s.children) : 0);
  return n;
}

/** One line per symbol: `  def area(self) -> float  [8-10]`, decorators in front. */
export function formatSymbols(symbols: readonly OutlineSymbol[], options: FormatOptions = {}): string[] {
  const max = options.maxLines ?? Number.POSITIVE_INFINITY;
  const lines: string[] = [];
  let omitted = 0;
  const visit = (list: readonly OutlineSymbol[], depth: number): void => {
    for (const s of list) {
      if (lines.length >= max) {
        omitted++;
      } else {
        const decorators = s.decorators && s.decorators.length > 0 ? `${s.decorators.join(" ")} ` : "";
        lines.push(`${"  ".repeat(depth)}${decorators}${s.signature}  [${s.startLine}-${s.endLine}]`);
      }
      if (s.children) visit(s.children, depth + 1);
    }
  };
  visit(symbols, 0);
  if (omitted > 0) lines.push(`… ${omitted} more symbols not shown`);
  return lines;
}
