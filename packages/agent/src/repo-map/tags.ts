// What one source file defines and which names it uses: the definitions are the outline's
// symbols from one tree-sitter parse (outline/extract.ts), the references the identifiers of
// its code from a lexical pass (lexical.ts), counted, and the words of its comments and strings.
import { extractSymbols } from "../outline/extract.js";
import { getParser } from "../outline/loader.js";
import type { OutlineSymbol } from "../outline/types.js";
import { lexSource } from "./lexical.js";

export interface Definition {
  /** The name other files use it by: the last part (`render` for `View.prototype.render`). */
  name: string;
  kind: string;
  /** 1-based. */
  line: number;
  signature: string;
  /** Nesting depth in the outline (0: top level). */
  depth: number;
}

export interface FileTags {
  defs: Definition[];
  /** Identifier → how often the file uses it (definitions' own names included). */
  refs: Record<string, number>;
  /** Lower-case words of its comments and strings → how often (for matching a task's words). */
  notes?: Record<string, number>;
  /** From the quick pass (quick-tags.ts), not yet parsed: the next refresh parses it. */
  quick?: true;
}

/** At most this many definitions are kept per file. */
const MAX_DEFS_PER_FILE = 2000;

/** `View.prototype.render` → `render`, `"fs-extra"` → `fs-extra`; undefined for a computed name. */
export function lastNamePart(name: string): string | undefined {
  if (name.includes("[")) return undefined;
  const last = name
    .split(/\.|::/)
    .at(-1)
    ?.replace(/^["'`]|["'`]$/g, "");
  return last && last !== "?" ? last : undefined;
}

function flatten(symbols: readonly OutlineSymbol[], depth: number, out: Definition[]): void {
  for (const s of symbols) {
    if (out.length >= MAX_DEFS_PER_FILE) return;
    const name = lastNamePart(s.name);
    if (name) out.push({ name, kind: s.kind, line: s.startLine, signature: s.signature, depth });
    if (s.children) flatten(s.children, depth + 1, out);
  }
}

/** Parses `source` as `language` and returns its definitions and references. */
export async function tagsOf(source: string, language: string): Promise<FileTags> {
  const parser = await getParser(language);
  const tree = parser.parse(source);
  if (!tree) throw new Error(`tree-sitter could not parse the ${language} source`);
  let defs: Definition[];
  try {
    defs = [];
    flatten(extractSymbols(tree.rootNode, source, language), 0, defs);
  } finally {
    tree.delete();
  }
  return { defs, ...lexSource(source, language) };
}
