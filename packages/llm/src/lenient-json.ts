// A forgiving JSON reader for model output: accepts comments, trailing commas, single-quoted
// strings, unquoted keys, Python True/False/None and raw newlines inside strings. Models make
// these slips constantly; rejecting them would waste a turn on a correction.

export class LenientJsonError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at position ${position}`);
    this.name = "LenientJsonError";
  }
}

/** Parses `text` (strict JSON first, then the forgiving reader). Throws LenientJsonError. */
export function parseLenientJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const reader = new Reader(text);
    const value = reader.value();
    reader.skipSpace();
    if (reader.pos < text.length) reader.fail("unexpected text after the JSON value");
    return value;
  }
}

/**
 * Returns the end index (exclusive) of the balanced {...} or [...] starting at `start`, skipping
 * brackets inside strings and comments, or -1 when it never closes.
 */
export function findBalancedEnd(text: string, start: number): number {
  const stack: string[] = [];
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      i = skipString(text, i);
      if (i < 0) return -1;
    } else if (c === "/" && text[i + 1] === "/") {
      const nl = text.indexOf("\n", i);
      if (nl < 0) return -1;
      i = nl;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      if (end < 0) return -1;
      i = end + 1;
    } else if (c === "{" || c === "[") {
      stack.push(c === "{" ? "}" : "]");
    } else if (c === "}" || c === "]") {
      if (stack.pop() !== c) return -1;
      if (stack.length === 0) return i + 1;
    }
  }
  return -1;
}

/** Index of the closing quote of the string opening at `start`, or -1. */
function skipString(text: string, start: number): number {
  const quote = text[start];
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === quote) return i;
  }
  return -1;
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", "/": "/", "0": "\0" };
const WORDS: Record<string, unknown> = {
  true: true,
  false: false,
  null: null,
  True: true,
  False: false,
  None: null,
};

class Reader {
  pos = 0;
  constructor(private readonly text: string) {}

  fail(message: string): never {
    throw new LenientJsonError(message, this.pos);
  }

  skipSpace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t[this.pos]!;
      if (c === " " || c === "\n" || c === "\r" || c === "\t" || c === "\ufeff") this.pos++;
      else if (c === "/" && t[this.pos + 1] === "/") {
        const nl = t.indexOf("\n", this.pos);
        this.pos = nl < 0 ? t.length : nl + 1;
      } else if (c === "/" && t[this.pos + 1] === "*") {
        const end = t.indexOf("*/", this.pos + 2);
        if (end < 0) this.fail("unterminated comment");
        this.pos = end + 2;
      } else if (c === "#" && this.atLineStart()) {
        // Python-style comment lines, only at line start so "#" inside values is safe.
        const nl = t.indexOf("\n", this.pos);
        this.pos = nl < 0 ? t.length : nl + 1;
      } else break;
    }
  }

  private atLineStart(): boolean {
    for (let i = this.pos - 1; i >= 0; i--) {
      const c = this.text[i];
      if (c === "\n") return true;
      if (c !== " " && c !== "\t") return false;
    }
    return true;
  }

  value(): unknown {
    this.skipSpace();
    const c = this.text[this.pos];
    if (c === undefined) this.fail("unexpected end of input");
    if (c === "{") return this.object();
    if (c === "[") return this.array();
    if (c === '"' || c === "'") return this.string();
    if (c === "-" || c === "+" || c === "." || (c >= "0" && c <= "9")) return this.number();
    const word = this.identifier();
    if (word in WORDS) return WORDS[word];
    return this.fail(word ? `unknown word "${word}"` : `unexpected character "${c}"`);
  }

  private identifier(): string {
    const match = /^[A-Za-z_$][\w$-]*/.exec(this.text.slice(this.pos, this.pos + 200));
    if (!match) return "";
    this.pos += match[0].length;
    return match[0];
  }

  private object(): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    this.pos++;
    for (;;) {
      this.skipSpace();
      const c = this.text[this.pos];
      if (c === "}") {
        this.pos++;
        return result;
      }
      if (c === undefined) this.fail("unterminated object");
      let key: string;
      if (c === '"' || c === "'") key = this.string();
      else {
        key = this.identifier();
        if (!key) this.fail("expected a key");
      }
      this.skipSpace();
      if (this.text[this.pos] !== ":") this.fail(`expected ":" after key "${key}"`);
      this.pos++;
      result[key] = this.value();
      this.skipSpace();
      if (this.text[this.pos] === ",") this.pos++;
      else if (this.text[this.pos] !== "}") this.fail('expected "," or "}"');
    }
  }

  private array(): unknown[] {
    const result: unknown[] = [];
    this.pos++;
    for (;;) {
      this.skipSpace();
      const c = this.text[this.pos];
      if (c === "]") {
        this.pos++;
        return result;
      }
      if (c === undefined) this.fail("unterminated array");
      result.push(this.value());
      this.skipSpace();
      if (this.text[this.pos] === ",") this.pos++;
      else if (this.text[this.pos] !== "]") this.fail('expected "," or "]"');
    }
  }

  private string(): string {
    const t = this.text;
    const quote = t[this.pos];
    // Python-style triple quotes hold multi-line file contents verbatim.
    const triple = t.startsWith(quote!.repeat(3), this.pos);
    this.pos += triple ? 3 : 1;
    let out = "";
    while (this.pos < t.length) {
      const c = t[this.pos]!;
      if (triple ? t.startsWith(quote!.repeat(3), this.pos) : c === quote) {
        this.pos += triple ? 3 : 1;
        return out;
      }
      if (c === "\\") {
        const e = t[this.pos + 1];
        if (e === undefined) break;
        if (e === "u") {
          const hex = t.slice(this.pos + 2, this.pos + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("bad \\u escape");
          out += String.fromCharCode(Number.parseInt(hex, 16));
          this.pos += 6;
          continue;
        }
        // Unknown escapes (\' or \$) keep the character, as JavaScript does.
        out += ESCAPES[e] ?? e;
        this.pos += 2;
        continue;
      }
      out += c;
      this.pos++;
    }
    return this.fail("unterminated string");
  }

  private number(): number {
    const match = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(this.text.slice(this.pos, this.pos + 100));
    if (!match) this.fail("bad number");
    this.pos += match[0].length;
    return Number(match[0]);
  }
}
