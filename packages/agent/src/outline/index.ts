// The outline library: the structure of a source file (classes, functions, methods, types…)
// from a real parser (tree-sitter via web-tree-sitter, grammars from npm packages). Used by
// the code_outline tool and by anything that needs a map of source files.
import { extractSymbols, firstErrorNode } from "./extract.js";
import { describeSupportedLanguages, languageInfo } from "./languages.js";
import { getParser } from "./loader.js";
import type { OutlineResult, OutlineSymbol } from "./types.js";

export { countSymbols, type FormatOptions, formatSymbols } from "./format.js";
export {
  describeSupportedLanguages,
  LANGUAGES,
  type LanguageInfo,
  languageForPath,
  SUPPORTED_LANGUAGES,
} from "./languages.js";
export { grammarWasmPath } from "./loader.js";
export type { OutlineResult, OutlineSymbol, SymbolKind } from "./types.js";

/**
 * Parses `source` as `language` (one of SUPPORTED_LANGUAGES) and returns its outline, with
 * whether the parser had to recover from syntax errors. Throws for an unsupported language.
 */
export async function parseOutline(source: string, language: string): Promise<OutlineResult> {
  if (!languageInfo(language)) {
    throw new Error(`unsupported language "${language}"; supported: ${describeSupportedLanguages()}`);
  }
  const parser = await getParser(language);
  const tree = parser.parse(source);
  if (!tree) throw new Error(`tree-sitter could not parse the ${language} source`);
  try {
    const root = tree.rootNode;
    const symbols = extractSymbols(root, source, language);
    const result: OutlineResult = { language, symbols, hasErrors: root.hasError };
    const err = firstErrorNode(root);
    if (err) result.firstErrorLine = err.startPosition.row + 1;
    return result;
  } finally {
    tree.delete();
  }
}

/** The symbols of `source` parsed as `language`: best-effort even when it has syntax errors. */
export async function outlineSource(source: string, language: string): Promise<OutlineSymbol[]> {
  return (await parseOutline(source, language)).symbols;
}
