// The text a model is given for a set of remembered items: in the order they happened, under
// a header each time the date changes (a conversation's session date, when known), stand-ins
// marked with the id that `recall` expands. The same rendering serves memory's own context
// and the baselines it is measured against, so they are compared on what a model would read.
import { estimateTokens } from "./text.js";

export interface RenderItem {
  id: string;
  text: string;
  form: "full" | "compressed";
  step?: number;
  /** When it happened, as the source gave it (e.g. "1:56 pm on 8 May, 2023"). */
  date?: string;
}

export function renderItems(items: readonly RenderItem[]): string {
  const sorted = [...items].sort((a, b) => (a.step ?? Infinity) - (b.step ?? Infinity));
  const lines: string[] = [];
  let date: string | undefined;
  for (const it of sorted) {
    if (it.date && it.date !== date) {
      lines.push(`[${it.date}]`);
      date = it.date;
    }
    lines.push(it.form === "full" ? it.text : `${it.text} (recall ${it.id})`);
  }
  return lines.join("\n");
}

/** Tokens of the rendered items (what the budget counts). */
export function renderedTokens(items: readonly RenderItem[]): number {
  return estimateTokens(renderItems(items));
}
