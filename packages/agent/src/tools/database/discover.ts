// Whether a workspace holds SQLite files, for query_database to be offered and to name them:
// a short, bounded look (two levels, a few thousand entries, no node_modules or .git) at
// names that SQLite files usually have, confirmed by the file's header.
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync } from "node:fs";
import { join, relative } from "node:path";

const EXTENSIONS = /\.(db|sqlite|sqlite3|db3)$/i;
const SKIP = new Set(["node_modules", ".git", ".hands", ".venv", "venv", "dist", "build", "target"]);

function hasSqliteHeader(file: string): boolean {
  let fd: number | undefined;
  try {
    // A FIFO or symlink swapped in after readdir must not hang the look or lead out of it.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    // A hard link could be the name in the workspace of a file outside it (sqlite-target.ts).
    const st = fstatSync(fd);
    if (!st.isFile() || st.nlink !== 1) return false;
    const head = Buffer.alloc(16);
    return readSync(fd, head, 0, 16, 0) === 16 && head.toString("latin1") === "SQLite format 3\0";
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function findSqliteFiles(
  workspace: string,
  opts: { depth?: number; maxEntries?: number; max?: number } = {},
): string[] {
  const found: string[] = [];
  let seen = 0;
  const maxEntries = opts.maxEntries ?? 4000;
  const walk = (dir: string, depth: number) => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (++seen > maxEntries || found.length >= (opts.max ?? 20)) return;
      const full = join(dir, e.name);
      // Only regular files (a symlink or a FIFO is not looked into).
      if (e.isFile() && EXTENSIONS.test(e.name) && hasSqliteHeader(full))
        found.push(relative(workspace, full));
      else if (e.isDirectory() && depth > 1 && !SKIP.has(e.name)) walk(full, depth - 1);
    }
  };
  walk(workspace, opts.depth ?? 2);
  return found;
}
