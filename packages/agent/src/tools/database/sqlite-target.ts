// Which file an SQLite query opens: a path inside the workspace, resolved through symlinks by
// the file tools' own confinement (a link that leads out is refused), a regular file (a FIFO
// would hang the open) with the SQLite header. SQLite also opens the file's -wal, -shm and
// -journal companions by name, so a companion that is a symlink (it could point anywhere) is
// refused too.
import { closeSync, lstatSync, openSync, readSync, statSync } from "node:fs";
import { displayPath, resolveInWorkspace } from "../paths.js";
import type { ToolContext } from "../types.js";

const HEADER = "SQLite format 3\0";

export class TargetError extends Error {}

export async function sqliteTarget(ctx: ToolContext, userPath: string): Promise<string> {
  const real = await resolveInWorkspace(ctx, userPath, { forWrite: true });
  const st = statSync(real, { throwIfNoEntry: false });
  if (!st) throw new TargetError(`no such file: ${userPath}`);
  if (!st.isFile()) throw new TargetError(`${displayPath(ctx, real)} is not a regular file`);
  const fd = openSync(real, "r");
  const head = Buffer.alloc(16);
  try {
    readSync(fd, head, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  if (st.size > 0 && head.toString("latin1") !== HEADER)
    throw new TargetError(`${displayPath(ctx, real)} is not an SQLite database (no SQLite header)`);
  for (const suffix of ["-wal", "-shm", "-journal"]) {
    const companion = lstatSync(`${real}${suffix}`, { throwIfNoEntry: false });
    if (companion && !companion.isFile())
      throw new TargetError(
        `${displayPath(ctx, real)}${suffix} is not a regular file (a symlink?); the database is not opened`,
      );
  }
  return real;
}
