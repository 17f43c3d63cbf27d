// list_dir: a folder's contents as a small tree (folders first, sizes, symlink targets).
import type { Dirent } from "node:fs";
import { lstat, readdir, readlink, stat } from "node:fs/promises";
import { join } from "node:path";
import { errorResult, exceptionResult, resolveOrError, statOrError } from "./fs/errors.js";
import { fmtInt, humanSize } from "./fs/text.js";
import { displayPath } from "./paths.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";

export type ListDirArgs = {
  path?: string;
};

export const LIST_MAX_ENTRIES = 500;
/** Deepest level shown (1 = only the folder's own entries); reduced when the tree is too big. */
export const LIST_MAX_DEPTH = 3;
/** Folders that are shown but never expanded. */
export const NOISE_DIRS = new Set([
  "node_modules",
  ".git",
  "__pycache__",
  ".venv",
  "venv",
  ".mypy_cache",
  ".pytest_cache",
  ".tox",
  ".cache",
  ".next",
  ".turbo",
  "target",
  ".gradle",
  ".idea",
]);

interface Row {
  depth: number;
  text: string;
}

function sortEntries(entries: Dirent[]): Dirent[] {
  const isDir = (e: Dirent) => e.isDirectory();
  return entries.sort((a, b) => {
    const da = isDir(a) ? 0 : 1;
    const db = isDir(b) ? 0 : 1;
    if (da !== db) return da - db;
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
}

async function safeReaddir(dir: string): Promise<Dirent[] | undefined> {
  try {
    return sortEntries(await readdir(dir, { withFileTypes: true }));
  } catch {
    return undefined;
  }
}

/**
 * Builds the rows for a tree of at most `maxDepth` levels, stopping once `budget` rows exist
 * (`complete` is then false, so the caller can retry shallower).
 */
async function buildTree(
  root: string,
  maxDepth: number,
  budget: number,
): Promise<{ rows: Row[]; complete: boolean }> {
  const rows: Row[] = [];
  const visit = async (dir: string, depth: number): Promise<boolean> => {
    const entries = await safeReaddir(dir);
    if (!entries) {
      rows.push({ depth, text: "(cannot read this folder)" });
      return true;
    }
    for (const e of entries) {
      if (rows.length >= budget) return false;
      const abs = join(dir, e.name);
      if (e.isDirectory()) {
        if (NOISE_DIRS.has(e.name)) {
          rows.push({ depth, text: `${e.name}/ (contents not listed)` });
        } else if (depth + 1 >= maxDepth) {
          const inner = await safeReaddir(abs);
          const n = inner ? inner.length : 0;
          rows.push({ depth, text: `${e.name}/ (${fmtInt(n)} ${n === 1 ? "entry" : "entries"})` });
        } else {
          rows.push({ depth, text: `${e.name}/` });
          if (!(await visit(abs, depth + 1))) return false;
        }
      } else if (e.isSymbolicLink()) {
        let target = "?";
        try {
          target = await readlink(abs);
        } catch {
          // leave "?"
        }
        let suffix = "";
        try {
          if ((await stat(abs)).isDirectory()) suffix = "/";
        } catch {
          suffix = " (broken link)";
        }
        rows.push({ depth, text: `${e.name} -> ${target}${suffix}` });
      } else if (e.isFile()) {
        let size = "";
        try {
          size = ` (${humanSize((await lstat(abs)).size)})`;
        } catch {
          size = "";
        }
        rows.push({ depth, text: `${e.name}${size}` });
      } else {
        rows.push({ depth, text: `${e.name} (special file)` });
      }
    }
    return true;
  };
  const complete = await visit(root, 0);
  return { rows, complete };
}

export const listDirTool: Tool<ListDirArgs> = {
  name: "list_dir",
  description: [
    "List a folder of the workspace as a tree: folders first (marked with a trailing /), then files with their sizes; symbolic links are shown as `name -> target`.",
    `Shows up to ${LIST_MAX_DEPTH} levels when the tree is small, fewer when it is large (folders not expanded show their entry count), at most ${LIST_MAX_ENTRIES} entries.`,
    "Heavy folders such as node_modules and .git are shown but not expanded.",
    "Use it to get oriented in a project; use glob to find files by name pattern and grep to search their contents.",
  ].join(" "),
  parameters: {
    type: "object",
    properties: {
      path: {
        type: "string",
        description: "Folder to list, relative to the workspace root (default: the workspace root).",
      },
    },
    additionalProperties: false,
  },
  readOnly: true,
  async execute(args: ListDirArgs, ctx: ToolContext): Promise<ToolResult> {
    const userPath = args.path ?? ".";
    const abs = await resolveOrError(ctx, userPath);
    if (typeof abs !== "string") return abs;
    const shown = displayPath(ctx, abs);
    try {
      const st = statOrError(ctx, userPath, abs);
      if (st instanceof Promise) return st;
      if (!st.isDirectory())
        return errorResult(`${shown} is a file, not a folder. Use read_file to read it.`);

      let tree: { rows: Row[]; complete: boolean } = { rows: [], complete: false };
      let depth = LIST_MAX_DEPTH;
      for (; depth >= 1; depth--) {
        tree = await buildTree(abs, depth, LIST_MAX_ENTRIES);
        if (tree.complete) break;
      }
      depth = Math.max(depth, 1);
      const rows = tree.rows;
      let more = 0;
      if (!tree.complete) {
        // Even the folder's own entries are too many: the first ones are shown.
        const total = (await readdir(abs)).length;
        more = total - rows.length;
      }
      const header = `${shown === "." ? "./ (workspace root)" : `${shown}/`}`;
      const lines = [header, ...rows.map((r) => `${"  ".repeat(r.depth + 1)}${r.text}`)];
      if (rows.length === 0) lines.push("  (empty folder)");
      if (more > 0)
        lines.push(`  … ${fmtInt(more)} more entries not shown; use glob to find specific files.`);
      return {
        output: lines.join("\n"),
        data: { path: shown, entries: rows.length, more, depth },
      };
    } catch (e) {
      return exceptionResult(e, userPath);
    }
  },
};
