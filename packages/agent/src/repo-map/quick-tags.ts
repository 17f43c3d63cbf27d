// Definitions found line by line with patterns, no parse: what a first map uses for the files
// tree-sitter has not parsed yet (a big workspace, no saved index), so the first request gets
// a map within its wait instead of none. Rougher than the outline (a line that looks like a
// definition is taken for one); the index parses every such file right after and replaces these.
import type { Definition, FileTags } from "./tags.js";

const MAX_DEFS = 2000;
const MAX_SIGNATURE = 120;

/** A pattern, the kind it finds, and text a line must hold for the pattern to be tried (cheap to check). */
type Rule = [RegExp, string, string?];
const NOT_METHODS = new Set(["if", "for", "while", "switch", "catch", "return", "function", "with", "elif"]);

// Group 1: the indentation; group 2: the name.
const JS_TS: Rule[] = [
  [
    /^(\s*)(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)/,
    "function",
    "function",
  ],
  [
    /^(\s*)(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)/,
    "class",
    "class",
  ],
  [/^(\s*)(?:export\s+)?(?:declare\s+)?interface\s+([A-Za-z_$][\w$]*)/, "interface", "interface"],
  [/^(\s*)(?:export\s+)?(?:declare\s+)?type\s+([A-Za-z_$][\w$]*)\s*(?:<[^=]*>)?\s*=/, "type", "type"],
  [/^(\s*)(?:export\s+)?(?:declare\s+)?(?:const\s+)?enum\s+([A-Za-z_$][\w$]*)/, "enum", "enum"],
  [/^(\s*)(?:export\s+)?(?:declare\s+)?(?:namespace|module)\s+([A-Za-z_$][\w$.]*)\s*\{/, "namespace"],
  [
    /^(\s*)(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>|class\b)/,
    "function",
    "=",
  ],
  [
    /^(\s*)(?:[A-Za-z_$][\w$]*\.)+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>|class\b)/,
    "function",
    "=",
  ],
  [
    /^(\s+)(?:(?:public|private|protected|static|async|readonly|override|get|set)\s+)*\*?\s*([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\([^)]*\)?\s*(?::[^{;]+)?\{\s*$/,
    "method",
    "{",
  ],
];
const PYTHON: Rule[] = [
  [/^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)/, "function", "def"],
  [/^(\s*)class\s+([A-Za-z_]\w*)/, "class", "class"],
];
const GO: Rule[] = [
  [/^()func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)/, "function"],
  [/^()type\s+([A-Za-z_]\w*)/, "type"],
];
const RUST: Rule[] = [
  [
    /^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+([A-Za-z_]\w*)/,
    "function",
  ],
  [/^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|union|type|mod)\s+([A-Za-z_]\w*)/, "type"],
];
const C_FAMILY: Rule[] = [
  [/^()(?:class|struct|enum|union)\s+([A-Za-z_]\w*)\s*[:{]/, "class"],
  [/^()(?:[A-Za-z_][\w:<>,*&\s]*?[\s*&])([A-Za-z_][\w:]*)\s*\([^;]*$/, "function"],
];
const JAVA: Rule[] = [
  [
    /^(\s*)(?:(?:public|private|protected|static|final|abstract|sealed)\s+)*(?:class|interface|enum|record)\s+([A-Za-z_]\w*)/,
    "class",
  ],
  [
    /^(\s+)(?:(?:public|private|protected|static|final|abstract|synchronized)\s+)+[\w<>[\],\s]+\s([A-Za-z_]\w*)\s*\(/,
    "method",
  ],
];

function rulesFor(language: string): Rule[] {
  switch (language) {
    case "python":
      return PYTHON;
    case "go":
      return GO;
    case "rust":
      return RUST;
    case "c":
    case "cpp":
      return C_FAMILY;
    case "java":
      return JAVA;
    default:
      return JS_TS;
  }
}

/** The definitions of `source` from patterns, without a parse. */
export function quickTagsOf(source: string, language: string): FileTags {
  const rules = rulesFor(language);
  const defs: Definition[] = [];
  const lines = source.split("\n");
  // The open class: a function one level inside it is its method (Python's `def` in a class).
  let classIndent = -1;
  let bodyIndent = -1;
  for (let i = 0; i < lines.length && defs.length < MAX_DEFS; i++) {
    const line = lines[i]!;
    if (line.length > 400) continue; // minified: no lines a person reads
    for (const [re, kind, needle] of rules) {
      if (needle !== undefined && !line.includes(needle)) continue;
      const m = re.exec(line);
      if (!m) continue;
      const name = m[2]!.split(".").at(-1)!;
      if (kind === "method" && NOT_METHODS.has(name)) break;
      const indent = m[1]!.length;
      const depth = indent > 0 ? 1 : 0;
      if (indent <= classIndent) classIndent = bodyIndent = -1;
      let asKind = kind;
      if (kind === "function" && classIndent >= 0 && indent > classIndent) {
        if (bodyIndent < 0) bodyIndent = indent;
        if (indent === bodyIndent) asKind = "method";
      }
      if (kind === "class") {
        classIndent = indent;
        bodyIndent = -1;
      }
      const signature = line
        .trim()
        .replace(/\s*\{\s*$/, "")
        .slice(0, MAX_SIGNATURE);
      defs.push({ name, kind: asKind, line: i + 1, signature, depth });
      break;
    }
  }
  // No references: the lexical pass costs twice what these patterns do, and the first map has
  // to be quick; the graph links these files once they are parsed.
  return { defs, refs: {}, quick: true };
}
