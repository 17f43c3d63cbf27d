// Which diagnostics an edit introduced: those after it that match none before it. A diagnostic
// is matched by its message (and code) at its place, where places outside the changed lines are
// shifted by the lines the edit added or removed, and places inside the changed lines match
// any place inside them (an error the edit moved within the lines it rewrote is not new).
import type { Diag } from "./lsp-client.js";

/** The changed line span: lines [from, beforeEnd) of the old text became [from, afterEnd) of the new. */
export interface ChangedLines {
  from: number;
  beforeEnd: number;
  afterEnd: number;
}

/** The smallest span of whole lines (0-based) that differs between two texts. */
export function changedLines(before: string, after: string): ChangedLines {
  const a = before.split("\n");
  const b = after.split("\n");
  let from = 0;
  while (from < a.length && from < b.length && a[from] === b[from]) from++;
  let tail = 0;
  while (
    tail < a.length - from &&
    tail < b.length - from &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  return { from, beforeEnd: a.length - tail, afterEnd: b.length - tail };
}

function key(d: Diag, place: string): string {
  return `${place}\u0000${d.code ?? ""}\u0000${d.message}`;
}

/** Errors (severity 1) of `after` that were not there `before`, in line order. */
export function newErrors(before: Diag[], after: Diag[], span: ChangedLines): Diag[] {
  const shift = span.afterEnd - span.beforeEnd;
  const counts = new Map<string, number>();
  for (const d of before) {
    if (d.severity !== 1) continue;
    const place =
      d.line < span.from
        ? `${d.line}:${d.character}`
        : d.line >= span.beforeEnd
          ? `${d.line + shift}:${d.character}`
          : "changed";
    const k = key(d, place);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const out: Diag[] = [];
  for (const d of after) {
    if (d.severity !== 1) continue;
    const place = d.line >= span.from && d.line < span.afterEnd ? "changed" : `${d.line}:${d.character}`;
    const k = key(d, place);
    const n = counts.get(k) ?? 0;
    if (n > 0) counts.set(k, n - 1);
    else out.push(d);
  }
  return out.sort((x, y) => x.line - y.line || x.character - y.character);
}

/**
 * The errors an edit introduced, for the model: new against the text just before the edit and
 * also against the file as the session first saw it (`first`), so that an error the file had
 * all along is not blamed on the edit that uncovered it (a revert of a bug that had hidden it:
 * pyright, seeing the call fixed, types what follows again; seen on scipy's radau.py).
 */
export function introducedErrors(
  before: { text: string; diags: Diag[] },
  after: { text: string; diags: Diag[] },
  first?: { text: string; diags: Diag[] },
): Diag[] {
  const fresh = newErrors(before.diags, after.diags, changedLines(before.text, after.text));
  if (!first || first.text === before.text) return fresh;
  const sinceFirst = newErrors(first.diags, fresh, changedLines(first.text, after.text));
  return sinceFirst;
}
