// code_outline: the structure of a source file (classes, functions, methods, types…) with line
// ranges and signatures, from a real parser (tree-sitter). Lets the model see a file's shape
// before reading it, then read only the lines it needs.
import path from "node:path";
import {
  countSymbols,
  describeSupportedLanguages,
  formatSymbols,
  languageForPath,
  parseOutline,
} from "../outline/index.js";
import { closeQuietly, openInside, readFd, SpecialFileError } from "./fs/confined.js";
import { readableRoots } from "./fs/errors.js";
import { resolveInWorkspace } from "./paths.js";
import { codeOutlineSpec } from "./specs.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";

/** Files larger than this are refused (2 MB). */
export const OUTLINE_MAX_BYTES = 2 * 1024 * 1024;
/** At most this many symbol lines are shown to the model; `data` has them all. */
export const OUTLINE_MAX_LINES = 2000;

function fail(message: string, data?: Record<string, unknown>): ToolResult {
  return { output: `ERROR: ${message}`, isError: true, ...(data ? { data } : {}) };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function countLines(text: string): number {
  if (text.length === 0) return 0;
  const n = text.split("\n").length;
  return text.endsWith("\n") ? n - 1 : n;
}

/** The path as the model should see it: relative to the workspace when inside it. */
function displayPath(workspace: string, abs: string): string {
  const rel = path.relative(workspace, abs);
  if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return abs;
  return rel.split(path.sep).join("/");
}

function unsupported(userPath: string): ToolResult {
  return fail(
    `code_outline does not support the file type of ${userPath}. Supported languages (by extension): ` +
      `${describeSupportedLanguages()}. Use read_file or grep for other files.`,
  );
}

/**
 * The file's bytes, opened without following a symlink or blocking and read through the
 * descriptor only; or the error (a folder, a FIFO or device, too big, unsupported).
 */
async function readSource(
  ctx: ToolContext,
  abs: string,
  userPath: string,
  supported: boolean,
): Promise<Buffer | ToolResult> {
  let opened: ReturnType<typeof openInside>;
  try {
    opened = openInside(readableRoots(ctx), abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return fail(`file not found: ${userPath}`);
    if (err instanceof SpecialFileError) return fail(`${userPath} is ${err.kind}, not a regular file.`);
    return fail(`cannot read ${userPath}: ${errorMessage(err)}`);
  }
  try {
    const st = opened.stats;
    if (st.isDirectory()) {
      return fail(`${userPath} is a directory, not a file; use list_dir to see what it contains.`);
    }
    if (!supported) return unsupported(userPath);
    if (st.size > OUTLINE_MAX_BYTES) {
      return fail(
        `${userPath} is too big to outline (${st.size} bytes > 2 MB); use grep to find definitions in it.`,
      );
    }
    return await readFd(opened.fd, OUTLINE_MAX_BYTES, ctx.signal);
  } catch (err) {
    return fail(`cannot read ${userPath}: ${errorMessage(err)}`);
  } finally {
    closeQuietly(opened.fd);
  }
}

export const codeOutlineTool: Tool<{ path: string }> = {
  ...codeOutlineSpec,

  async execute(args, ctx) {
    const userPath = args.path;
    let abs: string;
    try {
      abs = await resolveInWorkspace(ctx, userPath);
    } catch (err) {
      return fail(errorMessage(err));
    }

    const language = languageForPath(userPath) ?? languageForPath(abs);
    const buffer = await readSource(ctx, abs, userPath, language !== undefined);
    if (!Buffer.isBuffer(buffer)) return buffer;
    if (!language) return unsupported(userPath);
    if (buffer.subarray(0, 8192).includes(0)) {
      return fail(`${userPath} looks like a binary file (it contains NUL bytes); cannot outline it.`);
    }
    if (ctx.signal.aborted) return fail("aborted");

    const source = buffer.toString("utf8");
    let result: Awaited<ReturnType<typeof parseOutline>>;
    try {
      result = await parseOutline(source, language);
    } catch (err) {
      return fail(`could not parse ${userPath} as ${language}: ${errorMessage(err)}`);
    }

    const shown = displayPath(ctx.workspace, abs);
    const lineCount = countLines(source);
    const lines = [`${shown} (${language}, ${lineCount} lines)`];
    if (result.hasErrors) {
      const where = result.firstErrorLine ? ` (first near line ${result.firstErrorLine})` : "";
      lines.push(`note: the file has syntax errors${where}; this outline is best-effort.`);
    }
    if (result.symbols.length === 0) {
      lines.push("(no classes, functions or other symbols found)");
    } else {
      lines.push(...formatSymbols(result.symbols, { maxLines: OUTLINE_MAX_LINES }));
    }

    return {
      output: lines.join("\n"),
      data: {
        path: shown,
        language,
        lineCount,
        hasErrors: result.hasErrors,
        ...(result.firstErrorLine ? { firstErrorLine: result.firstErrorLine } : {}),
        symbolCount: countSymbols(result.symbols),
        symbols: result.symbols,
      },
    };
  },
};
