import { readSync } from "node:fs";
import { relative, sep } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { editorText } from "./editor-access.js";
import { chunksOf, closeQuietly } from "./fs/confined.js";
import { errorResult, exceptionResult, openOrError, resolveOrError, workspaceRoot } from "./fs/errors.js";
import { BINARY_SNIFF_BYTES, clipLine, fmtInt, humanSize, looksBinary, numbered } from "./fs/text.js";
import { displayPath, isInsideRoot } from "./paths.js";
import { READ_DEFAULT_LIMIT, READ_MAX_LIMIT, READ_MAX_LINE_CHARS, readFileSpec } from "./specs.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";

export { READ_DEFAULT_LIMIT, READ_MAX_LIMIT, READ_MAX_LINE_CHARS };

/** Files up to this size are read in one call; larger ones are streamed. */
const WHOLE_READ_BYTES = 1024 * 1024;
/**
 * A streamed file is scanned (to count its lines) this far at most once the requested lines
 * are read, so a huge file (or one that keeps growing) costs a bounded read.
 */
export const READ_COUNT_MAX_BYTES = 64 * 1024 * 1024;

export type ReadFileArgs = {
  path: string;
  offset?: number;
  line_numbers?: boolean;
  limit?: number;
};

interface Slice {
  lines: string[];
  /** Full length (chars, approximate for very long lines) of each kept line. */
  lengths: number[];
  totalLines: number;
  /** True when counting stopped at READ_COUNT_MAX_BYTES: totalLines is a lower bound. */
  countStopped?: boolean;
}

/** The same slice as readLineSlice, from text already in memory (the common, small-file case). */
function sliceText(text: string, offset: number, limit: number): Slice {
  const lines: string[] = [];
  const lengths: number[] = [];
  const last = offset + limit - 1;
  let lineNo = 0;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    lineNo++;
    if (lineNo >= offset && lineNo <= last) {
      let line = text.slice(start, end);
      if (line.endsWith("\r")) line = line.slice(0, -1);
      lines.push(line);
      lengths.push(line.length);
    }
    start = end + 1;
  }
  return { lines, lengths, totalLines: lineNo };
}

/**
 * Streams the open file once: keeps lines [offset, offset + limit) (each capped so one giant
 * line cannot blow memory) and counts the lines (up to READ_COUNT_MAX_BYTES past the slice).
 */
async function readLineSlice(
  fd: number,
  offset: number,
  limit: number,
  signal?: AbortSignal,
): Promise<Slice> {
  const first = offset; // 1-based
  const last = offset + limit - 1;
  const keepBytes = READ_MAX_LINE_CHARS * 4 + 8; // enough bytes for READ_MAX_LINE_CHARS chars
  const lines: string[] = [];
  const lengths: number[] = [];
  let lineNo = 1;
  let cur: Buffer[] = [];
  let curBytes = 0;
  let curTotal = 0;
  let pending = false; // bytes seen since the last newline

  const keep = (chunk: Buffer) => {
    curTotal += chunk.length;
    if (curBytes < keepBytes) {
      const piece = chunk.subarray(0, keepBytes - curBytes);
      cur.push(piece);
      curBytes += piece.length;
    }
  };
  const endLine = () => {
    if (lineNo >= first && lineNo <= last) {
      let text = new StringDecoder("utf8").write(Buffer.concat(cur));
      if (curTotal === curBytes && text.endsWith("\r")) text = text.slice(0, -1);
      lines.push(text);
      lengths.push(curTotal === curBytes ? text.length : Math.max(text.length, curTotal));
    }
    lineNo++;
    cur = [];
    curBytes = 0;
    curTotal = 0;
  };

  let scanned = 0;
  let countStopped = false;
  for await (const chunk of chunksOf(fd, { signal })) {
    if (lineNo > last && scanned >= READ_COUNT_MAX_BYTES) {
      countStopped = true;
      break;
    }
    scanned += chunk.length;
    let pos = 0;
    for (;;) {
      const nl = chunk.indexOf(10, pos);
      if (nl === -1) {
        const rest = chunk.subarray(pos);
        if (rest.length > 0) {
          if (lineNo >= first && lineNo <= last) keep(rest);
          pending = true;
        }
        break;
      }
      if (lineNo >= first && lineNo <= last) keep(chunk.subarray(pos, nl));
      endLine();
      pending = false;
      pos = nl + 1;
      if (pos === chunk.length) break;
    }
  }
  if (pending && !countStopped) endLine();
  return { lines, lengths, totalLines: lineNo - 1, ...(countStopped ? { countStopped } : {}) };
}

/** Up to `max` bytes from the start of the open file, in one synchronous read. */
function readStart(fd: number, max: number): Buffer {
  const buf = Buffer.allocUnsafe(max);
  let n = 0;
  while (n < max) {
    const got = readSync(fd, buf, n, max - n, n);
    if (got === 0) break;
    n += got;
  }
  return buf.subarray(0, n);
}

/** The slice as read_file's result: its lines (numbered when asked), long ones clipped, where to go on. */
function formatSlice(
  shown: string,
  slice: Slice,
  offset: number,
  size: number,
  lineNumbers: boolean,
  extra?: Record<string, unknown>,
): ToolResult {
  if (slice.lines.length === 0) {
    return errorResult(
      `offset ${offset} is past the end of ${shown}, which has ${fmtInt(slice.totalLines)} lines.`,
      { path: shown, totalLines: slice.totalLines },
    );
  }
  const width = String(offset + slice.lines.length - 1).length;
  const out = slice.lines.map((line, i) => {
    const full = slice.lengths[i] ?? line.length;
    const text =
      full > line.length || line.length > READ_MAX_LINE_CHARS
        ? `${line.slice(0, READ_MAX_LINE_CHARS)} … [line clipped: ${fmtInt(full)} chars]`
        : clipLine(line, READ_MAX_LINE_CHARS);
    // Unnumbered unless asked: every later request repeats this result, and the numbers were
    // 8 % of a small file's bytes (edit_file matches text; offset says where a read starts).
    return lineNumbers ? numbered(offset + i, text, width) : text;
  });
  const endLine = offset + slice.lines.length - 1;
  // A read from further on says where it starts (the numbers no longer do).
  if (offset > 1 && !lineNumbers) out.unshift(`(lines ${fmtInt(offset)}–${fmtInt(endLine)} of ${shown})`);
  const remaining = slice.totalLines - endLine;
  if (slice.countStopped) {
    out.push(
      `… more lines follow (the file is ${humanSize(size)}; lines were counted only up to line ${fmtInt(slice.totalLines)}); call read_file with offset=${endLine + 1} to continue.`,
    );
  } else if (remaining > 0) {
    out.push(
      `… ${fmtInt(remaining)} more line${remaining === 1 ? "" : "s"} (file has ${fmtInt(slice.totalLines)}); call read_file with offset=${endLine + 1} to continue.`,
    );
  }
  return {
    output: out.join("\n"),
    data: {
      path: shown,
      ...extra,
      startLine: offset,
      endLine,
      linesShown: slice.lines.length,
      ...(slice.countStopped ? { totalLinesAtLeast: slice.totalLines } : { totalLines: slice.totalLines }),
    },
  };
}

export const readFileTool: Tool<ReadFileArgs> = {
  ...readFileSpec,
  async execute(args: ReadFileArgs, ctx: ToolContext): Promise<ToolResult> {
    const abs = await resolveOrError(ctx, args.path);
    if (typeof abs !== "string") return abs;
    const shown = displayPath(ctx, abs);
    // A language server gets the file now, so an edit of it does not wait for its first check.
    ctx.diagnostics?.prime(relative(ctx.workspace, abs).split(sep).join("/"));
    // Opened without following a symlink or blocking; everything below reads the descriptor.
    const opened = openOrError(ctx, args.path, abs);
    if (opened instanceof Promise) return opened;
    const { fd, stats: st } = opened;
    try {
      if (st.isDirectory()) {
        return errorResult(`${shown} is a directory, not a file. Use list_dir to see what it contains.`, {
          path: shown,
        });
      }
      const offset = Math.max(1, Math.floor(args.offset ?? 1));
      const limit = Math.min(READ_MAX_LIMIT, Math.max(1, Math.floor(args.limit ?? READ_DEFAULT_LIMIT)));
      const empty = { output: "(empty file)", data: { path: shown, linesShown: 0, totalLines: 0 } };
      // Small files: one synchronous read (cheaper than a thread-pool round trip for a local
      // file this size) serves both the binary check and the slice; never more than fstat said.
      const whole = st.size <= WHOLE_READ_BYTES ? readStart(fd, st.size) : undefined;
      // An editor's buffer of a workspace file (unsaved changes included) is the file's text;
      // the path and the file on disk have passed every check above before the editor is asked.
      const edited =
        whole && !looksBinary(whole)
          ? await editorText(ctx, abs, isInsideRoot(workspaceRoot(ctx), abs))
          : undefined;
      if (edited !== undefined && !edited.includes("\0")) {
        if (edited === "") return { ...empty, data: { ...empty.data, editor: true } };
        return formatSlice(
          shown,
          sliceText(edited, offset, limit),
          offset,
          edited.length,
          args.line_numbers === true,
          {
            editor: true,
          },
        );
      }
      if (st.size === 0) return empty;
      if (looksBinary(whole ?? readStart(fd, BINARY_SNIFF_BYTES))) {
        return errorResult(
          `${shown} is a binary file (${humanSize(st.size)}, ${fmtInt(st.size)} bytes); read_file shows text files only.`,
          { path: shown, binary: true, size: st.size },
        );
      }
      const slice = whole
        ? sliceText(whole.toString("utf8"), offset, limit)
        : await readLineSlice(fd, offset, limit, ctx.signal);
      return formatSlice(shown, slice, offset, st.size, args.line_numbers === true);
    } catch (e) {
      return exceptionResult(e, args.path);
    } finally {
      closeQuietly(fd);
    }
  },
};
