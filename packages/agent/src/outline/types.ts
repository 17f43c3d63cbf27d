// Shared types of the outline library: what a symbol of a source file looks like.

export type SymbolKind =
  | "class"
  | "interface"
  | "struct"
  | "enum"
  | "trait"
  | "impl"
  | "type"
  | "function"
  | "method"
  | "const"
  | "namespace"
  | "module"
  | "macro";

export interface OutlineSymbol {
  kind: SymbolKind;
  name: string;
  /** 1-based, inclusive; includes decorators/annotations attached to the symbol. */
  startLine: number;
  /** 1-based, inclusive. */
  endLine: number;
  /** The declaration's head, whitespace collapsed, clipped to about 120 characters. */
  signature: string;
  /** Decorators (Python) as written, e.g. "@property". */
  decorators?: string[];
  /** Nested symbols: methods of a class, functions inside a function, items of a module. */
  children?: OutlineSymbol[];
}

export interface OutlineResult {
  language: string;
  symbols: OutlineSymbol[];
  /** The parser had to recover from syntax errors; the outline is best-effort. */
  hasErrors: boolean;
  /** 1-based line of the first syntax error, when there is one. */
  firstErrorLine?: number;
}
