// Lazy loading of web-tree-sitter and of the grammars: nothing is loaded when this module is
// imported; the runtime is initialised on first use and one parser per language is cached.
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import type { Parser } from "web-tree-sitter";
import { languageInfo } from "./languages.js";

type TreeSitterModule = typeof import("web-tree-sitter");

// Made on first use: in the bundled bin, a module-level createRequire resolves this package's
// location at import, ~2 ms of every start-up (the policy's shell parser imports this module).
let localRequire: NodeJS.Require | undefined;
function resolveHere(id: string): string {
  localRequire ??= createRequire(import.meta.url);
  return localRequire.resolve(id);
}

let runtime: Promise<TreeSitterModule> | undefined;
/** One parser per grammar .wasm path. */
const parsers = new Map<string, Promise<Parser>>();

/**
 * Tree-sitter's grammars are WebAssembly with huge generated lexer functions. Once one runs
 * hot, V8 recompiles it with its optimizing tier (TurboFan), and for the first 60-line Python
 * outline that took ~100 ms of CPU and 10–20 MB of memory the allocator then keeps (a Hands
 * run's peak RSS went from ~82 to ~102 MB at its first code stand-in). A module compiled while
 * V8's --liftoff-only is set stays on the baseline compiler for good, so the flag is set only
 * while tree-sitter's own modules compile and cleared right after (WebAssembly compiled at
 * other times keeps its optimizing tier). Outlines of small files cost the same; a 9,000-line
 * file parses ~25% slower. Left alone when node was started with a liftoff flag of its own.
 */
const userSetsLiftoff = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((a) =>
  a.includes("liftoff"),
);
let baselineCompiles = 0;

/**
 * The `hands` bin's save of the code V8 compiled so far (packages/cli/bin/hands.js): code saved
 * under other flags is refused at the next start, so what exists is saved before they change.
 */
const SAVE_CODE_CACHE = Symbol.for("hands.saveCodeCache");

async function compiledOnBaseline<T>(compile: () => Promise<T>): Promise<T> {
  if (userSetsLiftoff) return compile();
  if (baselineCompiles === 0) (globalThis as { [SAVE_CODE_CACHE]?: () => void })[SAVE_CODE_CACHE]?.();
  if (baselineCompiles++ === 0) setFlagsFromString("--liftoff-only");
  try {
    return await compile();
  } finally {
    if (--baselineCompiles === 0) setFlagsFromString("--no-liftoff-only");
  }
}

function loadRuntime(): Promise<TreeSitterModule> {
  runtime ??= (async () => {
    const mod = await import("web-tree-sitter");
    const wasmPath = resolveHere("web-tree-sitter/tree-sitter.wasm");
    await compiledOnBaseline(() => mod.Parser.init({ locateFile: () => wasmPath }));
    return mod;
  })().catch((err: unknown) => {
    runtime = undefined;
    throw err;
  });
  return runtime;
}

/** Absolute path of a language's grammar .wasm inside its installed npm package. */
export function grammarWasmPath(language: string): string {
  const info = languageInfo(language);
  if (!info) throw new Error(`unsupported language: ${language}`);
  return resolveHere(`${info.grammarPackage}/${info.wasmFile}`);
}

/** The cached parser of a language, loading the runtime and grammar on first use. */
export function getParser(language: string): Promise<Parser> {
  return parserForWasm(grammarWasmPath(language));
}

/**
 * The cached parser for a grammar .wasm (an absolute path, e.g. resolved inside a grammar's npm
 * package), loading the runtime and the grammar on first use. The command policy's shell
 * parser (tree-sitter-bash) comes from here too.
 */
export function parserForWasm(wasm: string): Promise<Parser> {
  let parser = parsers.get(wasm);
  if (!parser) {
    parser = (async () => {
      const mod = await loadRuntime();
      const lang = await compiledOnBaseline(() => mod.Language.load(wasm));
      const p = new mod.Parser();
      p.setLanguage(lang);
      return p;
    })();
    parsers.set(wasm, parser);
    parser.catch(() => parsers.delete(wasm));
  }
  return parser;
}
