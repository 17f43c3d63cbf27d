// edit_file: exact string replacement in a file, with helpful errors when the match fails.
import { withDiagnostics } from "../diagnostics/attach.js";
import { noteFileWritten } from "../repo-map/freshness.js";
import { editorText } from "./editor-access.js";
import { writeFileAtomicAt } from "./fs/atomic.js";
import { closeQuietly, type Opened, openAt, openParentInside, readFd } from "./fs/confined.js";
import {
  errorResult,
  exceptionResult,
  notFoundResult,
  workspaceRoot,
  writeTargetOrError,
} from "./fs/errors.js";
import { capForData } from "./fs/snapshot.js";
import {
  bigrams,
  clipLine,
  countLines,
  dice,
  fmtInt,
  looksBinary,
  normalizeWs,
  numbered,
  splitLines,
} from "./fs/text.js";
import { displayPath } from "./paths.js";
import { editFileSpec } from "./specs.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";

export type EditFileArgs = {
  path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
};

/** Files larger than this are not edited (use a command instead). */
export const EDIT_MAX_BYTES = 20 * 1024 * 1024;
const CONTEXT_LINES = 3;
const MAX_SNIPPET_LINES = 30;
const MAX_SNIPPETS = 3;

/** Start indexes of the non-overlapping occurrences of `needle`. */
export function findAll(haystack: string, needle: string): number[] {
  const out: number[] = [];
  if (needle === "") return out;
  let i = haystack.indexOf(needle);
  while (i !== -1) {
    out.push(i);
    i = haystack.indexOf(needle, i + needle.length);
  }
  return out;
}

/** 1-based line numbers of sorted character indexes, in one pass. */
function lineNumbersOf(text: string, indexes: number[]): number[] {
  const out: number[] = [];
  let line = 1;
  let pos = 0;
  for (const idx of indexes) {
    for (;;) {
      const nl = text.indexOf("\n", pos);
      if (nl === -1 || nl >= idx) break;
      line++;
      pos = nl + 1;
    }
    out.push(line);
  }
  return out;
}

function snippet(lines: string[], from: number, to: number): string[] {
  // from/to: 1-based inclusive range of interest; adds context, caps the length.
  const start = Math.max(1, from - CONTEXT_LINES);
  const end = Math.min(lines.length, to + CONTEXT_LINES);
  const out: string[] = [];
  for (let n = start; n <= end; n++) {
    if (out.length >= MAX_SNIPPET_LINES) {
      out.push(`   … (${fmtInt(end - n + 1)} more lines)`);
      break;
    }
    out.push(numbered(n, clipLine(lines[n - 1] ?? "", 300), String(end).length));
  }
  return out;
}

interface Candidate {
  line: number; // 1-based start line in the file
  score: number; // 0..1
  span: number; // lines in the window
  exactIgnoringWs: boolean;
}

/** The regions of `content` most similar to `old` (line-wise, whitespace-insensitive). */
export function nearestCandidates(content: string, old: string, max = 2): Candidate[] {
  const fileLines = splitLines(content).map(normalizeWs);
  const rawOld = splitLines(old).map(normalizeWs);
  // Ignore blank lines at either end of old_string.
  let a = 0;
  let b = rawOld.length;
  while (a < b && rawOld[a] === "") a++;
  while (b > a && rawOld[b - 1] === "") b--;
  const oldLines = rawOld.slice(a, b);
  if (oldLines.length === 0 || fileLines.length === 0) return [];
  const k = Math.min(oldLines.length, 8);
  const oldGrams = oldLines.slice(0, k).map(bigrams);
  const fileGrams = new Map<number, Map<string, number>>();
  const gramsAt = (i: number) => {
    let g = fileGrams.get(i);
    if (!g) {
      g = bigrams(fileLines[i] ?? "");
      fileGrams.set(i, g);
    }
    return g;
  };
  const scored: Candidate[] = [];
  for (let i = 0; i < fileLines.length; i++) {
    let sum = 0;
    for (let j = 0; j < k; j++) {
      const fl = fileLines[i + j];
      if (fl === undefined) break;
      sum += dice(oldGrams[j]!, gramsAt(i + j), oldLines[j]!, fl);
    }
    const score = sum / k;
    if (score <= 0) continue;
    const span = Math.min(oldLines.length, fileLines.length - i);
    const exactIgnoringWs = span === oldLines.length && oldLines.every((l, j) => l === fileLines[i + j]);
    scored.push({ line: i + 1, score: exactIgnoringWs ? 1 : score, span, exactIgnoringWs });
  }
  scored.sort((x, y) => y.score - x.score || x.line - y.line);
  const picked: Candidate[] = [];
  for (const c of scored) {
    if (picked.length >= max) break;
    if (c.score < 0.3) break;
    if (picked.some((p) => Math.abs(p.line - c.line) < Math.max(p.span, 3))) continue;
    picked.push(c);
  }
  return picked;
}

function noMatchMessage(shown: string, content: string, old: string): string {
  const lines = splitLines(content);
  const parts = [
    `old_string was not found in ${shown}. It must match the file exactly, including whitespace, indentation and line breaks.`,
  ];
  if (/^\s*\d+\t/m.test(old)) {
    parts.push(
      "Your old_string seems to contain line-number prefixes from read_file output; copy only the text after the tab.",
    );
  }
  const cands = nearestCandidates(content, old);
  if (cands.length === 0) {
    parts.push(
      "No similar text was found. Read the file with read_file and copy old_string exactly from it.",
    );
    return parts.join("\n");
  }
  for (const c of cands) {
    const end = c.line + c.span - 1;
    const label = c.exactIgnoringWs
      ? `Lines ${c.line}-${end} match if whitespace is ignored (check indentation, tabs vs spaces, trailing spaces):`
      : `Most similar text, lines ${c.line}-${end} (${Math.round(c.score * 100)}% similar):`;
    parts.push(label);
    const shownLines: string[] = [];
    for (let n = c.line; n <= Math.min(end, c.line + 14); n++)
      shownLines.push(numbered(n, clipLine(lines[n - 1] ?? "", 300), String(end).length));
    if (end > c.line + 14) shownLines.push(`   … (${end - c.line - 14} more lines)`);
    parts.push(shownLines.join("\n"));
  }
  const first = cands[0]!;
  parts.push(
    `Fix old_string to match the file exactly (read_file with offset=${Math.max(1, first.line - 5)} shows the current text), then retry.`,
  );
  return parts.join("\n");
}

/** Writes the edited file: through the editor when it writes files (the path passed the checks), else atomically on disk; the repo map learns of it. */
async function save(
  ctx: ToolContext,
  at: { dirFd: number; name: string },
  abs: string,
  content: string,
): Promise<void> {
  if (ctx.editor?.writeText) await ctx.editor.writeText(abs, content, ctx.signal);
  else await writeFileAtomicAt(at.dirFd, at.name, content);
  noteFileWritten(workspaceRoot(ctx), abs);
}

async function writeNew(
  ctx: ToolContext,
  at: { dirFd: number; name: string },
  abs: string,
  shown: string,
  content: string,
): Promise<ToolResult> {
  await save(ctx, at, abs, content);
  const lines = splitLines(content);
  const after = capForData(content);
  const result = {
    output: [
      `Created ${shown} (${fmtInt(lines.length)} lines).`,
      ...snippet(lines, 1, Math.min(lines.length, MAX_SNIPPET_LINES)),
    ].join("\n"),
    data: {
      path: displayPath(ctx, abs),
      created: true,
      replacements: 0,
      ...(after !== undefined ? { after } : {}),
    },
  };
  return withDiagnostics(ctx, abs, shown, undefined, content, result);
}

export const editFileTool: Tool<EditFileArgs> = {
  ...editFileSpec,
  async execute(args: EditFileArgs, ctx: ToolContext): Promise<ToolResult> {
    const { old_string: oldStr, new_string: newStr } = args;
    if (typeof oldStr !== "string" || typeof newStr !== "string") {
      return errorResult("old_string and new_string must be strings.");
    }
    if (oldStr === newStr) {
      return errorResult("old_string and new_string are identical; nothing would change.");
    }
    const abs = await writeTargetOrError(ctx, args.path, "edit");
    if (typeof abs !== "string") return abs;
    const shown = displayPath(ctx, abs);
    let dirFd: number | undefined;
    try {
      // Everything below goes through the folder's descriptor (fs/confined.ts), never the name.
      let at: { dirFd: number; name: string };
      try {
        at = openParentInside(workspaceRoot(ctx), abs, oldStr === "");
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return await notFoundResult(ctx, args.path, abs);
        throw e;
      }
      dirFd = at.dirFd;
      let file: Opened | undefined;
      try {
        file = openAt(at.dirFd, at.name, shown);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
      }
      if (!file) {
        if (oldStr === "") return await writeNew(ctx, at, abs, shown, newStr);
        return await notFoundResult(ctx, args.path, abs);
      }
      const st = file.stats;
      let buf: Buffer;
      try {
        if (!st.isFile()) return errorResult(`${shown} is not a regular file (it is probably a folder).`);
        if (st.size > EDIT_MAX_BYTES) {
          return errorResult(`${shown} is too large to edit with edit_file (${fmtInt(st.size)} bytes).`);
        }
        buf = await readFd(file.fd, EDIT_MAX_BYTES, ctx.signal);
      } finally {
        closeQuietly(file.fd);
      }
      if (looksBinary(buf)) return errorResult(`${shown} is a binary file; edit_file edits text files only.`);
      // The editor's buffer (unsaved changes included) is what is edited, when it gives it.
      const content = (await editorText(ctx, abs, true)) ?? buf.toString("utf8");
      if (oldStr === "") {
        if (content === "") return await writeNew(ctx, at, abs, shown, newStr);
        return errorResult(
          `old_string is empty but ${shown} already exists and is not empty. Give the exact text to replace, or use write_file to replace the whole file.`,
        );
      }

      let find = oldStr;
      let repl = newStr;
      let idx = findAll(content, find);
      if (idx.length === 0 && content.includes("\r\n") && oldStr.includes("\n")) {
        // The file uses CRLF line endings; the model usually sends LF.
        const crlf = (s: string) => s.replace(/\r?\n/g, "\r\n");
        const alt = findAll(content, crlf(oldStr));
        if (alt.length > 0) {
          find = crlf(oldStr);
          repl = crlf(newStr);
          idx = alt;
        }
      }
      if (idx.length === 0) {
        return errorResult(noMatchMessage(shown, content, oldStr), { path: shown, matches: 0 });
      }
      const oldLineNos = lineNumbersOf(content, idx);
      if (idx.length > 1 && !args.replace_all) {
        const list = oldLineNos.slice(0, 20).join(", ") + (oldLineNos.length > 20 ? ", …" : "");
        return errorResult(
          `old_string occurs ${idx.length} times in ${shown} (at lines ${list}). Include more surrounding lines in old_string to make it unique, or set replace_all=true to replace every occurrence.`,
          { path: shown, matches: idx.length, lines: oldLineNos },
        );
      }

      // Build the new content and remember where each replacement landed.
      const parts: string[] = [];
      const newIdx: number[] = [];
      let last = 0;
      let shift = 0;
      for (const i of idx) {
        parts.push(content.slice(last, i), repl);
        newIdx.push(i + shift);
        shift += repl.length - find.length;
        last = i + find.length;
      }
      parts.push(content.slice(last));
      const updated = parts.join("");
      await save(ctx, at, abs, updated);

      const newLines = splitLines(updated);
      const newLineNos = lineNumbersOf(updated, newIdx);
      const replLineCount = Math.max(1, countLines(repl.replace(/\r?\n$/, "")) || 1);
      const findLineCount = Math.max(1, countLines(find.replace(/\r?\n$/, "")) || 1);
      const out: string[] = [];
      const first = oldLineNos[0]!;
      const firstNew = newLineNos[0]!;
      out.push(
        idx.length === 1
          ? `Edited ${shown}: replaced lines ${first}-${first + findLineCount - 1} with lines ${firstNew}-${firstNew + replLineCount - 1}.`
          : `Edited ${shown}: replaced ${idx.length} occurrences.`,
      );
      for (let s = 0; s < Math.min(MAX_SNIPPETS, newLineNos.length); s++) {
        const from = newLineNos[s]!;
        if (s > 0) out.push("   ⋮");
        out.push(...snippet(newLines, from, from + replLineCount - 1));
      }
      if (newLineNos.length > MAX_SNIPPETS)
        out.push(`   (… ${newLineNos.length - MAX_SNIPPETS} more replacements not shown)`);

      const data: Record<string, unknown> = {
        path: shown,
        created: false,
        replacements: idx.length,
        lines: newLineNos,
      };
      const before = capForData(content);
      const after = capForData(updated);
      if (before !== undefined) data["before"] = before;
      if (after !== undefined) data["after"] = after;
      return await withDiagnostics(ctx, abs, shown, content, updated, { output: out.join("\n"), data });
    } catch (e) {
      return exceptionResult(e, args.path);
    } finally {
      if (dirFd !== undefined) closeQuietly(dirFd);
    }
  },
};
