// A small line-based unified diff (LCS over the changed middle), for approval previews and /diff.

export function unifiedDiff(before: string, after: string, path: string, context = 3): string {
  if (before === after) return "";
  const a = splitLines(before);
  const b = splitLines(after);
  // Common prefix and suffix are context, not part of the (quadratic) comparison.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const ops: { op: " " | "-" | "+"; line: string }[] = [];
  for (let i = 0; i < start; i++) ops.push({ op: " ", line: a[i]! });
  ops.push(...middle(a.slice(start, endA), b.slice(start, endB)));
  for (let i = endA; i < a.length; i++) ops.push({ op: " ", line: a[i]! });

  const out = [`--- a/${path}`, `+++ b/${path}`];
  // Group changes into hunks with `context` lines around them.
  let i = 0;
  while (i < ops.length) {
    while (i < ops.length && ops[i]!.op === " ") i++;
    if (i >= ops.length) break;
    let hunkStart = Math.max(0, i - context);
    let j = i;
    let lastChange = i;
    while (j < ops.length) {
      if (ops[j]!.op !== " ") lastChange = j;
      else if (j - lastChange > context * 2) break;
      j++;
    }
    const hunkEnd = Math.min(ops.length, lastChange + context + 1);
    let oldLine = 1;
    let newLine = 1;
    for (let k = 0; k < hunkStart; k++) {
      if (ops[k]!.op !== "+") oldLine++;
      if (ops[k]!.op !== "-") newLine++;
    }
    const body = ops.slice(hunkStart, hunkEnd);
    const oldCount = body.filter((o) => o.op !== "+").length;
    const newCount = body.filter((o) => o.op !== "-").length;
    out.push(
      `@@ -${oldCount ? oldLine : oldLine - 1},${oldCount} +${newCount ? newLine : newLine - 1},${newCount} @@`,
    );
    for (const o of body) out.push(`${o.op}${o.line}`);
    i = hunkEnd;
    hunkStart = i;
  }
  return out.join("\n");
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

const MAX_CELLS = 4_000_000;

function middle(a: string[], b: string[]): { op: " " | "-" | "+"; line: string }[] {
  if (a.length * b.length > MAX_CELLS) {
    // Too large to compare line by line: show it as replaced.
    return [
      ...a.map((line) => ({ op: "-" as const, line })),
      ...b.map((line) => ({ op: "+" as const, line })),
    ];
  }
  const n = a.length;
  const m = b.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const ops: { op: " " | "-" | "+"; line: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ op: " ", line: a[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) ops.push({ op: "-", line: a[i++]! });
    else ops.push({ op: "+", line: b[j++]! });
  }
  while (i < n) ops.push({ op: "-", line: a[i++]! });
  while (j < m) ops.push({ op: "+", line: b[j++]! });
  return ops;
}
