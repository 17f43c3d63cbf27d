// What one source file defines and which names it uses, from one tree-sitter parse: the
// definitions are the outline's symbols (outline/extract.ts), the references every identifier
// leaf of the tree (the grammar's *identifier node types), counted.
import type { Language, Node } from "web-tree-sitter";
import { extractSymbols } from "../outline/extract.js";
import { getParser } from "../outline/loader.js";
import type { OutlineSymbol } from "../outline/types.js";

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
}

/** Names this short are everywhere (`i`, `x`) and say nothing about where code lives. */
const MIN_NAME_LENGTH = 2;
/** At most this many distinct names are kept per file (generated files can hold far more). */
const MAX_NAMES_PER_FILE = 4000;
/** At most this many definitions are kept per file. */
const MAX_DEFS_PER_FILE = 2000;

/** The identifier node types of a grammar (`identifier`, `property_identifier`, `type_identifier`, …). */
const identifierTypes = new WeakMap<Language, string[]>();
function identifierTypesOf(language: Language): string[] {
  let types = identifierTypes.get(language);
  if (!types) {
    const set = new Set<string>();
    for (let id = 0; id < language.nodeTypeCount; id++) {
      const name = language.nodeTypeForId(id);
      if (name && language.nodeTypeIsNamed(id) && /(^|_)identifier$/.test(name)) set.add(name);
    }
    types = [...set];
    identifierTypes.set(language, types);
  }
  return types;
}

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
  try {
    const root = tree.rootNode;
    const defs: Definition[] = [];
    flatten(extractSymbols(root, source, language), 0, defs);
    const refs: Record<string, number> = Object.create(null);
    let distinct = 0;
    const types = parser.language ? identifierTypesOf(parser.language) : ["identifier"];
    for (const node of root.descendantsOfType(types) as (Node | null)[]) {
      if (!node) continue;
      const text = source.slice(node.startIndex, node.endIndex);
      if (text.length < MIN_NAME_LENGTH || text.length > 80) continue;
      const seen = refs[text];
      if (seen !== undefined) refs[text] = seen + 1;
      else if (distinct < MAX_NAMES_PER_FILE) {
        refs[text] = 1;
        distinct++;
      }
    }
    return { defs, refs };
  } finally {
    tree.delete();
  }
}
