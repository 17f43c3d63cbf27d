// Which languages the outline understands, how a file's extension maps to one, and where
// each grammar's .wasm file lives (an npm package, resolved at run time).

export interface LanguageInfo {
  id: string;
  /** npm package that ships the grammar's .wasm. */
  grammarPackage: string;
  /** The .wasm file inside that package. */
  wasmFile: string;
  extensions: string[];
}

export const LANGUAGES: readonly LanguageInfo[] = [
  {
    id: "python",
    grammarPackage: "tree-sitter-python",
    wasmFile: "tree-sitter-python.wasm",
    extensions: [".py", ".pyi", ".pyw"],
  },
  {
    id: "javascript",
    grammarPackage: "tree-sitter-javascript",
    wasmFile: "tree-sitter-javascript.wasm",
    extensions: [".js", ".mjs", ".cjs", ".jsx"],
  },
  {
    id: "typescript",
    grammarPackage: "tree-sitter-typescript",
    wasmFile: "tree-sitter-typescript.wasm",
    extensions: [".ts", ".mts", ".cts"],
  },
  {
    id: "tsx",
    grammarPackage: "tree-sitter-typescript",
    wasmFile: "tree-sitter-tsx.wasm",
    extensions: [".tsx"],
  },
  { id: "go", grammarPackage: "tree-sitter-go", wasmFile: "tree-sitter-go.wasm", extensions: [".go"] },
  { id: "rust", grammarPackage: "tree-sitter-rust", wasmFile: "tree-sitter-rust.wasm", extensions: [".rs"] },
  {
    id: "java",
    grammarPackage: "tree-sitter-java",
    wasmFile: "tree-sitter-java.wasm",
    extensions: [".java"],
  },
  { id: "c", grammarPackage: "tree-sitter-c", wasmFile: "tree-sitter-c.wasm", extensions: [".c", ".h"] },
  {
    id: "cpp",
    grammarPackage: "tree-sitter-cpp",
    wasmFile: "tree-sitter-cpp.wasm",
    extensions: [".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".inl"],
  },
];

const byId = new Map(LANGUAGES.map((l) => [l.id, l]));
const byExtension = new Map(LANGUAGES.flatMap((l) => l.extensions.map((e) => [e, l] as const)));

export const SUPPORTED_LANGUAGES: readonly string[] = LANGUAGES.map((l) => l.id);

export function languageInfo(id: string): LanguageInfo | undefined {
  return byId.get(id);
}

/** The language of a file from its extension (case-insensitive), or undefined. */
export function languageForPath(filePath: string): string | undefined {
  const base = filePath.slice(Math.max(filePath.lastIndexOf("/"), filePath.lastIndexOf("\\")) + 1);
  const dot = base.lastIndexOf(".");
  if (dot <= 0) return undefined;
  return byExtension.get(base.slice(dot).toLowerCase())?.id;
}

/** "python (.py, .pyi, .pyw), javascript (.js, …), …" for error messages. */
export function describeSupportedLanguages(): string {
  return LANGUAGES.map((l) => `${l.id} (${l.extensions.join(", ")})`).join(", ");
}
