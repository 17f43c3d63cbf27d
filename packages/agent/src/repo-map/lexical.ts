// A cheap lexical pass over a source file, no parse: the identifiers its code uses, and the
// words of its comments and strings. Code identifiers are what links files in the graph (a name
// in a comment is no use of it); comment and string words only feed the lexical match against
// a task ("the CSRF token is not refreshed" meets the file whose comments say so). Much cheaper
// than walking tree-sitter's nodes from JavaScript (each node crosses the WebAssembly boundary).
import { STOP_WORDS } from "./words.js";

/** Words of prose, split as wordsIn splits names (`parseOutline` → parse, Outline), 3+ letters. */
const NOTE_WORD = /[A-Z]?[a-z]{2,}|[A-Z]{3,}(?![a-z])/g;

/** Names this short are everywhere (`i`, `x`) and say nothing about where code lives. */
const MIN_NAME_LENGTH = 2;
const MAX_NAME_LENGTH = 80;
/** At most this many distinct names / comment words are kept per file (generated files hold far more). */
export const MAX_NAMES_PER_FILE = 4000;
export const MAX_NOTE_WORDS_PER_FILE = 1000;

/** Keywords of the mapped languages: never a use of a name. */
const KEYWORDS = new Set(
  (
    "if else for while do switch case default break continue return function const let var new " +
    "this class extends super import export from as async await yield try catch finally throw " +
    "typeof instanceof in of void delete null undefined true false static get set public private " +
    "protected readonly interface type enum implements namespace declare abstract keyof infer is " +
    "def elif lambda pass None True False and or not with global nonlocal raise except assert del " +
    "func package go defer chan map range struct select fallthrough goto fn mut pub impl trait use " +
    "mod crate self Self match loop where ref move dyn unsafe extern int char long short float " +
    "double unsigned signed sizeof typedef union auto register volatile inline final throws " +
    "synchronized boolean byte"
  ).split(" "),
);

export interface Lexed {
  /** Identifier → how often the file's code uses it. */
  refs: Record<string, number>;
  /** Lower-case word of comments and strings → how often. */
  notes: Record<string, number>;
}

// One alternation per language family; group 1 is an identifier, anything else a comment or string.
const C_LIKE =
  /(\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|"(?:\\[\s\S]|[^"\\\n])*"|'(?:\\[\s\S]|[^'\\\n])*'|`(?:\\[\s\S]|[^`\\])*(?:`|$))|([A-Za-z_$][\w$]*)/g;
const PYTHON =
  /(#[^\n]*|"""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|"(?:\\[\s\S]|[^"\\\n])*"|'(?:\\[\s\S]|[^'\\\n])*')|([A-Za-z_][\w]*)/g;
// Rust: `'a` is a lifetime, not a string; its char literals are short.
const RUST =
  /(\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|"(?:\\[\s\S]|[^"\\])*"|'(?:\\.|[^'\\\n])')|([A-Za-z_][\w]*)/g;

function patternFor(language: string): RegExp {
  if (language === "python") return PYTHON;
  if (language === "rust") return RUST;
  return C_LIKE;
}

/** The identifiers and the comment/string words of `source`. */
export function lexSource(source: string, language: string): Lexed {
  const refs = new Map<string, number>();
  const notes = new Map<string, number>();
  const re = patternFor(language);
  re.lastIndex = 0;
  for (let m = re.exec(source); m !== null; m = re.exec(source)) {
    const id = m[2];
    if (id !== undefined) {
      if (id.length < MIN_NAME_LENGTH || id.length > MAX_NAME_LENGTH || KEYWORDS.has(id)) continue;
      const seen = refs.get(id);
      if (seen !== undefined) refs.set(id, seen + 1);
      else if (refs.size < MAX_NAMES_PER_FILE) refs.set(id, 1);
    } else if (m[1]!.length > 3) {
      const words = m[1]!.match(NOTE_WORD);
      if (!words) continue;
      for (const w of words) {
        const word = w.toLowerCase();
        const seen = notes.get(word);
        if (seen !== undefined) notes.set(word, seen + 1);
        else if (notes.size < MAX_NOTE_WORDS_PER_FILE && !STOP_WORDS.has(word)) notes.set(word, 1);
      }
    }
  }
  for (const w of STOP_WORDS) notes.delete(w);
  return { refs: toRecord(refs), notes: toRecord(notes) };
}

function toRecord(map: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = Object.create(null);
  for (const [k, v] of map) out[k] = v;
  return out;
}
