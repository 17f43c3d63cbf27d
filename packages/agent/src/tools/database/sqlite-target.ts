// Which file an SQLite query opens: a path inside the workspace, resolved through symlinks by
// the file tools' own confinement (a link that leads out is refused), a regular file (a FIFO
// would hang the open) with the SQLite header, and only one name: a hard link in the
// workspace may be another name of a file outside it (a database elsewhere on the machine),
// so a file with more than one link is refused. The file is opened with O_NOFOLLOW and
// checked with fstat (what is checked is what was opened); sqlite-run.ts checks again that
// the file SQLite itself opened is this one. SQLite also opens the -wal, -shm and -journal
// companions by name, so a companion that is a symlink or a hard link is refused too.
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from "node:fs";
import { displayPath, resolveInWorkspace } from "../paths.js";
import type { ToolContext } from "../types.js";

const HEADER = "SQLite format 3\0";
export const COMPANIONS = ["-wal", "-shm", "-journal"] as const;

export class TargetError extends Error {}

/** The file, as opened: its real path and identity (device and inode). */
export interface SqliteFile {
  path: string;
  dev: number;
  ino: number;
}

export async function sqliteTarget(ctx: ToolContext, userPath: string): Promise<SqliteFile> {
  const real = await resolveInWorkspace(ctx, userPath, { forWrite: true });
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new TargetError(`no such file: ${userPath}`);
    if (code === "ELOOP")
      throw new TargetError(`${displayPath(ctx, real)} is a symlink; the database is not opened`);
    throw new TargetError(`cannot open ${displayPath(ctx, real)}: ${(e as Error).message}`);
  }
  const head = Buffer.alloc(16);
  let st: import("node:fs").Stats;
  try {
    st = fstatSync(fd);
    if (!st.isFile()) throw new TargetError(`${displayPath(ctx, real)} is not a regular file`);
    if (st.nlink !== 1) throw new TargetError(hardLinked(displayPath(ctx, real), st.nlink));
    readSync(fd, head, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  if (st.size > 0 && head.toString("latin1") !== HEADER)
    throw new TargetError(`${displayPath(ctx, real)} is not an SQLite database (no SQLite header)`);
  for (const suffix of COMPANIONS) {
    const companion = lstatSync(`${real}${suffix}`, { throwIfNoEntry: false });
    if (companion && !companion.isFile())
      throw new TargetError(
        `${displayPath(ctx, real)}${suffix} is not a regular file (a symlink?); the database is not opened`,
      );
    if (companion && companion.nlink !== 1)
      throw new TargetError(hardLinked(`${displayPath(ctx, real)}${suffix}`, companion.nlink));
  }
  return { path: real, dev: st.dev, ino: st.ino };
}

export function hardLinked(name: string, links: number): string {
  return `${name} has ${links} hard links (another name of it may be outside the workspace); the database is not opened`;
}
