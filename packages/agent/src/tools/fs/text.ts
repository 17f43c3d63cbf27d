// Small text helpers shared by the file tools.

/** Bytes inspected for binary detection. */
export const BINARY_SNIFF_BYTES = 8192;

/** True when the buffer (the start of a file) contains a NUL byte. */
export function looksBinary(buf: Uint8Array): boolean {
  const n = Math.min(buf.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < n; i++) if (buf[i] === 0) return true;
  return false;
}

/** 1536 → "1.5 KB". */
export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 100 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

/** 3412 → "3,412". */
export function fmtInt(n: number): string {
  // Not toLocaleString: its first call loads ICU data, ~10 ms on a CLI's hot path.
  const sign = n < 0 ? "-" : "";
  return sign + String(Math.abs(Math.trunc(n))).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Splits text into lines (a final newline does not start an extra line). Strips \r of CRLF. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
}

/** Number of lines as splitLines counts them. */
export function countLines(text: string): number {
  if (text === "") return 0;
  let n = 0;
  let i = -1;
  for (;;) {
    i = text.indexOf("\n", i + 1);
    if (i === -1) break;
    n++;
  }
  return text.endsWith("\n") ? n : n + 1;
}

/**
 * A line with its number, `cat -n` style but padded only to `width` digits (that of the last
 * number shown): every read result repeats the prefix on each line, on every later request.
 */
export function numbered(lineNo: number, text: string, width = 1): string {
  return `${String(lineNo).padStart(width)}\t${text}`;
}

/** Clips a line to `max` characters with a marker saying how long it was. */
export function clipLine(line: string, max: number): string {
  if (line.length <= max) return line;
  return `${line.slice(0, max)} … [line clipped: ${fmtInt(line.length)} chars]`;
}

/** Levenshtein distance (small strings only: file names). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** Whitespace-insensitive form of a line: trimmed, inner runs collapsed. */
export function normalizeWs(line: string): string {
  return line.trim().replace(/\s+/g, " ");
}

/** Character-bigram multiset of a string (for Dice similarity). */
export function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) {
    const g = s.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/** Dice coefficient of two bigram multisets, 0..1 (1 = same). */
export function dice(a: Map<string, number>, b: Map<string, number>, aStr: string, bStr: string): number {
  if (aStr === bStr) return 1;
  if (aStr.length < 2 || bStr.length < 2) return 0;
  let inter = 0;
  let aSize = 0;
  let bSize = 0;
  for (const v of a.values()) aSize += v;
  for (const v of b.values()) bSize += v;
  const [small, big] = a.size <= b.size ? [a, b] : [b, a];
  for (const [g, n] of small) {
    const m = big.get(g);
    if (m) inter += Math.min(n, m);
  }
  return (2 * inter) / (aSize + bSize);
}
