// list_dir: a folder's contents as a small tree (folders first, sizes, symlink targets).
import type { Dirent } from "node:fs";
import { lstat, readdir, readlink, stat } from "node:fs/promises";
import { closeQuietly, type Opened, openAt, viaFd } from "./fs/confined.js";
import { errorResult, exceptionResult, openOrError, resolveOrError } from "./fs/errors.js";
import { fmtInt, humanSize } from "./fs/text.js";
import { displayPath } from "./paths.js";
import { LIST_MAX_DEPTH, LIST_MAX_ENTRIES, listDirSpec } from "./specs.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";

export { LIST_MAX_DEPTH, LIST_MAX_ENTRIES };

export type ListDirArgs = {
  path?: string;
};

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

async function safeReaddir(dirFd: number): Promise<Dirent[] | undefined> {
  try {
    return sortEntries(await readdir(viaFd(dirFd), { withFileTypes: true }));
  } catch {
    return undefined;
  }
}

/** Opens the sub-folder `name` of the open folder (never through a symlink), or undefined. */
function openSubdir(dirFd: number, name: string): Opened | undefined {
  try {
    const sub = openAt(dirFd, name, name);
    if (sub.stats.isDirectory()) return sub;
    closeQuietly(sub.fd);
  } catch {
    // swapped for a symlink or removed since it was listed
  }
  return undefined;
}

/**
 * Builds the rows for a tree of at most `maxDepth` levels below the open folder `rootFd`,
 * stopping once `budget` rows exist (`complete` is then false, so the caller can retry
 * shallower). Every folder is opened relative to its parent's descriptor (fs/confined.ts).
 */
async function buildTree(
  rootFd: number,
  maxDepth: number,
  budget: number,
): Promise<{ rows: Row[]; complete: boolean }> {
  const rows: Row[] = [];
  const visit = async (dirFd: number, depth: number): Promise<boolean> => {
    const entries = await safeReaddir(dirFd);
    if (!entries) {
      rows.push({ depth, text: "(cannot read this folder)" });
      return true;
    }
    for (const e of entries) {
      if (rows.length >= budget) return false;
      const at = viaFd(dirFd, e.name);
      if (e.isDirectory()) {
        if (NOISE_DIRS.has(e.name)) {
          rows.push({ depth, text: `${e.name}/ (contents not listed)` });
          continue;
        }
        const sub = openSubdir(dirFd, e.name);
        if (!sub) {
          rows.push({ depth, text: `${e.name}/ (changed while listing; not listed)` });
          continue;
        }
        try {
          if (depth + 1 >= maxDepth) {
            const inner = await safeReaddir(sub.fd);
            const n = inner ? inner.length : 0;
            rows.push({ depth, text: `${e.name}/ (${fmtInt(n)} ${n === 1 ? "entry" : "entries"})` });
          } else {
            rows.push({ depth, text: `${e.name}/` });
            if (!(await visit(sub.fd, depth + 1))) return false;
          }
        } finally {
          closeQuietly(sub.fd);
        }
      } else if (e.isSymbolicLink()) {
        let target = "?";
        try {
          target = await readlink(at);
        } catch {
          // leave "?"
        }
        let suffix = "";
        try {
          if ((await stat(at)).isDirectory()) suffix = "/";
        } catch {
          suffix = " (broken link)";
        }
        rows.push({ depth, text: `${e.name} -> ${target}${suffix}` });
      } else if (e.isFile()) {
        let size = "";
        try {
          size = ` (${humanSize((await lstat(at)).size)})`;
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
  const complete = await visit(rootFd, 0);
  return { rows, complete };
}

export const listDirTool: Tool<ListDirArgs> = {
  ...listDirSpec,
  async execute(args: ListDirArgs, ctx: ToolContext): Promise<ToolResult> {
    const userPath = args.path ?? ".";
    const abs = await resolveOrError(ctx, userPath);
    if (typeof abs !== "string") return abs;
    const shown = displayPath(ctx, abs);
    const opened = openOrError(ctx, userPath, abs);
    if (opened instanceof Promise) return opened;
    try {
      if (!opened.stats.isDirectory())
        return errorResult(`${shown} is a file, not a folder. Use read_file to read it.`);

      let tree: { rows: Row[]; complete: boolean } = { rows: [], complete: false };
      let depth = LIST_MAX_DEPTH;
      for (; depth >= 1; depth--) {
        tree = await buildTree(opened.fd, depth, LIST_MAX_ENTRIES);
        if (tree.complete) break;
      }
      depth = Math.max(depth, 1);
      const rows = tree.rows;
      let more = 0;
      if (!tree.complete) {
        // Even the folder's own entries are too many: the first ones are shown.
        const total = (await readdir(viaFd(opened.fd))).length;
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
    } finally {
      closeQuietly(opened.fd);
    }
  },
};
