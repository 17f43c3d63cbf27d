// The content words of an ASCII text (what `contentWords` gives), found as spans of the text
// instead of strings: the hashed embedder hashes every word of every stored output, and
// building a lower-cased copy, a match array and a string per word cost more than the hashing.
// For ASCII, lower-casing keeps every position, and the word pattern of `words` reduces to
// [A-Za-z0-9_] runs that may hold . / - inside (not at their ends), or one letter or digit.
import { isStopword, LONGEST_STOPWORD } from "./text.js";

const NON_ASCII = /[^\x00-\x7f]/;

export function isAscii(text: string): boolean {
  return !NON_ASCII.test(text);
}

/** Lower-cases an ASCII character code. */
export function lowerCode(c: number): number {
  return c >= 65 && c <= 90 ? c + 32 : c;
}

function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

/** `.`, `/`, `-`: inside a word only. */
function isJoiner(c: number): boolean {
  return c === 46 || c === 47 || c === 45;
}

/**
 * Spans [start, end) of the content words of an ASCII `text`, in order, as pairs in `out`
 * (reused between calls); returns the number of words.
 */
export function asciiContentWords(text: string, out: { spans: Int32Array }): number {
  let n = 0;
  const len = text.length;
  let i = 0;
  while (i < len) {
    const c = text.charCodeAt(i);
    if (!isWordChar(c)) {
      i++;
      continue;
    }
    let last = i;
    let j = i + 1;
    for (; j < len; j++) {
      const d = text.charCodeAt(j);
      if (isWordChar(d)) last = j;
      else if (!isJoiner(d)) break;
    }
    const end = last + 1;
    // One character is a word of its own unless it is "_", but never a content word.
    if (end - i > 1 && !(end - i <= LONGEST_STOPWORD && isStopword(text.slice(i, end).toLowerCase()))) {
      if (2 * n + 2 > out.spans.length) {
        const grown = new Int32Array(out.spans.length * 2);
        grown.set(out.spans);
        out.spans = grown;
      }
      out.spans[2 * n] = i;
      out.spans[2 * n + 1] = end;
      n++;
    }
    i = end;
  }
  return n;
}
