import picomatch from "picomatch";
import { closeQuietly, type Opened, openListed, readFd } from "./fs/confined.js";
import {
  errorResult,
  exceptionResult,
  openOrError,
  readableRoots,
  resolveOrError,
  workspaceRoot,
} from "./fs/errors.js";
import { fmtInt, looksBinary } from "./fs/text.js";
import { walkFiles } from "./fs/walk.js";
import { mentionsNodeModules } from "./glob.js";
import { displayPath } from "./paths.js";
import { GREP_MAX_FILE_BYTES, GREP_MAX_MATCHES, grepSpec } from "./specs.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";

export { GREP_MAX_FILE_BYTES, GREP_MAX_MATCHES };

export type GrepArgs = {
  pattern: string;
  path?: string;
  glob?: string;
  ignore_case?: boolean;
};

/** Longest line text shown per match. */
export const GREP_MAX_LINE_CHARS = 300;
/** Matches counted at most (the count beyond the shown ones stops here). */
const GREP_MAX_COUNTED = 100_000;

/** Shows the part of a long line around the match. */
function clipAround(line: string, col: number): string {
  if (line.length <= GREP_MAX_LINE_CHARS) return line;
  const start = Math.max(0, Math.min(col - 80, line.length - GREP_MAX_LINE_CHARS));
  const end = start + GREP_MAX_LINE_CHARS;
  return `${start > 0 ? "…" : ""}${line.slice(start, end)}${end < line.length ? "…" : ""}`;
}

interface LineMatch {
  line: number;
  text: string;
}

/** Every line of `text` with a match (one entry per line), scanning the text once. */
export function matchLines(text: string, re: RegExp, max: number): { matches: LineMatch[]; count: number } {
  const matches: LineMatch[] = [];
  let count = 0;
  let lineNo = 1;
  let lineStart = 0;
  let scan = 0;
  re.lastIndex = 0;
  for (;;) {
    const m = re.exec(text);
    if (!m) break;
    const idx = m.index;
    // The text after a final newline is not a line (grep counts `a\nb\n` as two lines), but
    // `^`/`$` in multiline mode still match there.
    if (idx === text.length && (idx === 0 || text.endsWith("\n"))) break;
    for (;;) {
      const nl = text.indexOf("\n", scan);
      if (nl === -1 || nl >= idx) break;
      lineNo++;
      lineStart = nl + 1;
      scan = nl + 1;
    }
    let lineEnd = text.indexOf("\n", idx);
    if (lineEnd === -1) lineEnd = text.length;
    count++;
    if (matches.length < max) {
      let line = text.slice(lineStart, lineEnd);
      if (line.endsWith("\r")) line = line.slice(0, -1);
      matches.push({ line: lineNo, text: clipAround(line, idx - lineStart) });
    }
    if (lineEnd >= text.length) break;
    re.lastIndex = lineEnd + 1; // one result per line
  }
  return { matches, count };
}

export const grepTool: Tool<GrepArgs> = {
  ...grepSpec,
  async execute(args: GrepArgs, ctx: ToolContext): Promise<ToolResult> {
    if (typeof args.pattern !== "string" || args.pattern === "") {
      return errorResult("pattern must be a non-empty regular expression.");
    }
    let re: RegExp;
    try {
      re = new RegExp(args.pattern, args.ignore_case ? "gmi" : "gm");
    } catch (e) {
      return errorResult(
        `invalid regular expression ${JSON.stringify(args.pattern)}: ${(e as Error).message.replace(/^Invalid regular expression: /, "")}. Escape special characters (\\( \\[ \\. \\*) to search for them literally.`,
      );
    }
    let fileFilter: ((rel: string) => boolean) | undefined;
    if (args.glob !== undefined && args.glob.trim() !== "") {
      const g = args.glob.trim().replace(/^\.\//, "");
      try {
        const m = picomatch(g, { dot: true, basename: !g.includes("/") });
        fileFilter = (rel) => m(rel);
      } catch (e) {
        return errorResult(`invalid glob ${JSON.stringify(args.glob)}: ${(e as Error).message}`);
      }
    }
    const userPath = args.path ?? ".";
    const base = await resolveOrError(ctx, userPath);
    if (typeof base !== "string") return base;
    const first = openOrError(ctx, userPath, base);
    if (first instanceof Promise) return first;
    let firstFd: number | undefined = first.fd; // closed exactly once: descriptor numbers are reused
    const takeFirst = (): Opened => {
      firstFd = undefined;
      return first;
    };
    try {
      const st = first.stats;
      const out: string[] = [];
      let total = 0;
      let filesWithMatches = 0;
      let searched = 0;
      let skippedLarge = 0;
      const roots = readableRoots(ctx);

      /** Searches an opened file (symlinks were followed only to real paths inside the roots). */
      const searchFile = async (abs: string, open: () => Opened) => {
        let opened: Opened;
        try {
          opened = open();
        } catch {
          return; // broken, outside, swapped, or a FIFO / socket / device: never read
        }
        let buf: Buffer;
        try {
          if (!opened.stats.isFile()) return;
          if (opened.stats.size > GREP_MAX_FILE_BYTES) {
            skippedLarge++;
            return;
          }
          buf = await readFd(opened.fd, GREP_MAX_FILE_BYTES, ctx.signal);
        } catch {
          return;
        } finally {
          closeQuietly(opened.fd);
        }
        if (looksBinary(buf)) return;
        searched++;
        const room = Math.max(0, GREP_MAX_MATCHES - out.length);
        const { matches, count } = matchLines(buf.toString("utf8"), re, room);
        if (count === 0) return;
        filesWithMatches++;
        total += count;
        const shown = displayPath(ctx, abs);
        for (const m of matches) out.push(`${shown}:${m.line}:${m.text}`);
      };

      if (st.isFile()) {
        await searchFile(base, takeFirst);
      } else {
        closeQuietly(takeFirst().fd); // the walk opens the folder again, the same safe way
        for await (const f of walkFiles({
          workspace: workspaceRoot(ctx),
          roots,
          base,
          includeNodeModules: args.glob !== undefined && mentionsNodeModules(args.glob),
          signal: ctx.signal,
        })) {
          if (fileFilter && !fileFilter(f.rel)) continue;
          await searchFile(f.abs, () => openListed(roots, f.dirFd, f.name, f.abs));
          if (total >= GREP_MAX_COUNTED) break;
        }
      }
      if (ctx.signal.aborted) return errorResult("grep was aborted.");

      const where = displayPath(ctx, base);
      const data = {
        pattern: args.pattern,
        path: where,
        matches: total,
        files: filesWithMatches,
        searched,
        skippedLarge,
        truncated: total > out.length,
      };
      if (total === 0) {
        let msg = `No matches for /${args.pattern}/${args.ignore_case ? "i" : ""} in ${where === "." ? "the workspace" : where} (${fmtInt(searched)} files searched`;
        if (skippedLarge > 0)
          msg += `, ${skippedLarge} files over ${GREP_MAX_FILE_BYTES / (1024 * 1024)} MB skipped`;
        msg += ").";
        return { output: msg, data };
      }
      if (total > out.length) {
        const counted = total >= GREP_MAX_COUNTED ? `at least ${fmtInt(total)}` : fmtInt(total);
        out.push(
          `… ${fmtInt(total - out.length)}${total >= GREP_MAX_COUNTED ? "+" : ""} more matches not shown (${counted} in ${fmtInt(filesWithMatches)} files); narrow the pattern, path or glob.`,
        );
      }
      if (skippedLarge > 0)
        out.push(`(${skippedLarge} files over ${GREP_MAX_FILE_BYTES / (1024 * 1024)} MB were skipped.)`);
      return { output: out.join("\n"), data };
    } catch (e) {
      return exceptionResult(e, userPath);
    } finally {
      if (firstFd !== undefined) closeQuietly(firstFd);
    }
  },
};
