// Brace expansion as bash does it, lexically: `a{b,c}d` and `{1..3}`.

/** `a{b,c}d` → abd, acd; `{1..3}` → 1 2 3. At most `limit` results (the rest are dropped). */
export function expandBraces(word: string, limit = 64): string[] {
  const open = findBrace(word);
  if (!open) return [word];
  const { start, end, parts } = open;
  const out: string[] = [];
  for (const p of parts) {
    for (const e of expandBraces(word.slice(0, start) + p + word.slice(end + 1), limit)) {
      out.push(e);
      if (out.length >= limit) return out;
    }
  }
  return out;
}

function findBrace(w: string): { start: number; end: number; parts: string[] } | undefined {
  for (let i = 0; i < w.length; i++) {
    if (w[i] !== "{") continue;
    let depth = 0;
    const commas: number[] = [];
    for (let j = i; j < w.length; j++) {
      if (w[j] === "{") depth++;
      else if (w[j] === "}") {
        depth--;
        if (depth === 0) {
          const body = w.slice(i + 1, j);
          if (commas.length > 0) {
            const parts: string[] = [];
            let from = i + 1;
            for (const c of commas) {
              parts.push(w.slice(from, c));
              from = c + 1;
            }
            parts.push(w.slice(from, j));
            return { start: i, end: j, parts };
          }
          const seq = /^(-?\d+|[a-zA-Z])\.\.(-?\d+|[a-zA-Z])$/.exec(body);
          if (seq) return { start: i, end: j, parts: sequence(seq[1]!, seq[2]!) };
          break;
        }
      } else if (w[j] === "," && depth === 1) commas.push(j);
    }
  }
  return undefined;
}

function sequence(a: string, b: string): string[] {
  const num = /^-?\d+$/.test(a);
  const from = num ? Number(a) : a.charCodeAt(0);
  const to = num ? Number(b) : b.charCodeAt(0);
  const out: string[] = [];
  const step = from <= to ? 1 : -1;
  for (let v = from; out.length < 64; v += step) {
    out.push(num ? String(v) : String.fromCharCode(v));
    if (v === to) break;
  }
  return out;
}
