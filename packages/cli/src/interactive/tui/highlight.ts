// Syntax highlighting for code fences in the terminal: one pass of a tokenizer per language
// family (comments, strings, numbers, keywords), coloured with plain SGR codes. The text is
// never changed — only wrapped in colours — so a copied block is exactly the code.

type Kind = "comment" | "string" | "number" | "keyword" | "literal" | "plain";

interface Grammar {
  comment: RegExp[];
  string: RegExp[];
  keywords: Set<string>;
  literals: Set<string>;
}

const words = (s: string) => new Set(s.split(/\s+/).filter(Boolean));

const C_LIKE_COMMENTS = [/\/\/[^\n]*/y, /\/\*[\s\S]*?(?:\*\/|$)/y];
const HASH_COMMENT = [/#[^\n]*/y];
const QUOTED = [/"(?:[^"\\\n]|\\.)*"?/y, /'(?:[^'\\\n]|\\.)*'?/y];

const JS: Grammar = {
  comment: C_LIKE_COMMENTS,
  string: [/`(?:[^`\\]|\\[\s\S])*`?/y, ...QUOTED],
  keywords: words(
    "async await break case catch class const continue debugger default delete do else enum export extends finally for from function get if implements import in instanceof interface let new of package private protected public readonly return set static super switch this throw try type typeof var void while with yield as declare namespace keyof satisfies",
  ),
  literals: words("true false null undefined NaN Infinity"),
};

const PYTHON: Grammar = {
  comment: HASH_COMMENT,
  string: [/[rbfu]{0,2}"""[\s\S]*?(?:"""|$)/y, /[rbfu]{0,2}'''[\s\S]*?(?:'''|$)/y, ...QUOTED],
  keywords: words(
    "and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case",
  ),
  literals: words("True False None self"),
};

const SHELL: Grammar = {
  comment: HASH_COMMENT,
  string: QUOTED,
  keywords: words(
    "if then else elif fi for while until do done case esac in function return local export readonly set unset shift exit echo cd source alias",
  ),
  literals: words("true false"),
};

const GO: Grammar = {
  comment: C_LIKE_COMMENTS,
  string: [/`[^`]*`?/y, ...QUOTED],
  keywords: words(
    "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var",
  ),
  literals: words("true false nil iota"),
};

const RUST: Grammar = {
  comment: C_LIKE_COMMENTS,
  string: [/"(?:[^"\\]|\\.)*"?/y],
  keywords: words(
    "as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while",
  ),
  literals: words("true false None Some Ok Err"),
};

const C: Grammar = {
  comment: C_LIKE_COMMENTS,
  string: QUOTED,
  keywords: words(
    "auto break case char class const continue default do double else enum extern float for goto if inline int long namespace new private protected public register return short signed sizeof static struct switch template this throw try typedef union unsigned using virtual void volatile while final abstract extends implements import package boolean byte",
  ),
  literals: words("true false NULL nullptr null"),
};

const JSON_GRAMMAR: Grammar = {
  comment: [],
  string: [/"(?:[^"\\\n]|\\.)*"?/y],
  keywords: new Set(),
  literals: words("true false null"),
};

const GENERIC: Grammar = {
  comment: [...C_LIKE_COMMENTS, ...HASH_COMMENT],
  string: QUOTED,
  keywords: new Set(),
  literals: new Set(),
};

const BY_LANG: Record<string, Grammar> = {
  js: JS,
  javascript: JS,
  jsx: JS,
  mjs: JS,
  cjs: JS,
  ts: JS,
  typescript: JS,
  tsx: JS,
  py: PYTHON,
  python: PYTHON,
  sh: SHELL,
  bash: SHELL,
  shell: SHELL,
  zsh: SHELL,
  console: SHELL,
  go: GO,
  golang: GO,
  rs: RUST,
  rust: RUST,
  c: C,
  h: C,
  cpp: C,
  "c++": C,
  cc: C,
  java: C,
  cs: C,
  csharp: C,
  kotlin: C,
  swift: C,
  json: JSON_GRAMMAR,
  jsonc: JSON_GRAMMAR,
};

/** The grammar for a fence's language, or undefined when it has none we know. */
function grammarFor(lang: string | undefined): Grammar | undefined {
  if (!lang) return undefined;
  return BY_LANG[lang.trim().toLowerCase().split(/[\s{]/)[0] ?? ""] ?? (lang ? GENERIC : undefined);
}

const NUMBER = /(?:0x[\da-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\b/y;
const WORD = /[A-Za-z_$][\w$]*/y;

export interface CodeColors {
  comment(s: string): string;
  string(s: string): string;
  number(s: string): string;
  keyword(s: string): string;
  literal(s: string): string;
}

export const ANSI_CODE_COLORS: CodeColors = {
  comment: (s) => `\x1b[90m${s}\x1b[39m`,
  string: (s) => `\x1b[32m${s}\x1b[39m`,
  number: (s) => `\x1b[33m${s}\x1b[39m`,
  keyword: (s) => `\x1b[35m${s}\x1b[39m`,
  literal: (s) => `\x1b[36m${s}\x1b[39m`,
};

/** Splits code into coloured tokens. */
function tokenize(code: string, g: Grammar): Array<[Kind, string]> {
  const out: Array<[Kind, string]> = [];
  let plain = "";
  const flush = () => {
    if (plain) out.push(["plain", plain]);
    plain = "";
  };
  let i = 0;
  const at = (re: RegExp): string | undefined => {
    re.lastIndex = i;
    const m = re.exec(code);
    return m && m[0].length > 0 ? m[0] : undefined;
  };
  outer: while (i < code.length) {
    for (const [kind, res] of [
      ["comment", g.comment],
      ["string", g.string],
    ] as const) {
      for (const re of res) {
        const m = at(re);
        if (m) {
          flush();
          out.push([kind, m]);
          i += m.length;
          continue outer;
        }
      }
    }
    const prev = code[i - 1] ?? " ";
    if (!/[\w$]/.test(prev)) {
      const n = at(NUMBER);
      if (n) {
        flush();
        out.push(["number", n]);
        i += n.length;
        continue;
      }
      const w = at(WORD);
      if (w) {
        const kind: Kind = g.keywords.has(w) ? "keyword" : g.literals.has(w) ? "literal" : "plain";
        if (kind === "plain") plain += w;
        else {
          flush();
          out.push([kind, w]);
        }
        i += w.length;
        continue;
      }
    }
    plain += code[i];
    i++;
  }
  flush();
  return out;
}

/**
 * The code's lines, coloured by the fence language (each line carries its own colours: the
 * terminal view resets styles at every line end). Unknown or missing language: the lines as they are.
 */
export function highlightCode(
  code: string,
  lang: string | undefined,
  colors: CodeColors = ANSI_CODE_COLORS,
): string[] {
  const g = grammarFor(lang);
  if (!g) return code.split("\n");
  const lines: string[] = [""];
  for (const [kind, text] of tokenize(code, g)) {
    const paint = kind === "plain" ? (s: string) => s : colors[kind];
    const parts = text.split("\n");
    parts.forEach((part, k) => {
      if (k > 0) lines.push("");
      if (part) lines[lines.length - 1] += paint(part);
    });
  }
  return lines;
}
