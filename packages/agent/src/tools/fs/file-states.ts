// What the workspace holds, cheaply: each file's size and modification time (no content read),
// as git would list it (.gitignore respected, never .git or node_modules), capped. Two of these
// taken around a run say what it created, changed and deleted, shell commands included. Git
// itself is not run: a workspace's own .git/config (which a sandboxed command can write) may
// name programs git runs on the host (core.fsmonitor, filter drivers).
import { lstatSync } from "node:fs";
import { isAbsolute, relative, sep } from "node:path";
import { viaFd } from "./confined.js";
import { walkFiles } from "./walk.js";

/** Files looked at, at most (a larger tree is reported as capped: its changes may be incomplete). */
export const FILE_STATES_MAX = 50_000;

export interface FileStates {
  /** Workspace-relative path ("/"-separated) → size and mtime (ns). */
  files: Map<string, string>;
  /** True when the walk stopped at the cap. */
  capped: boolean;
}

export type FileChange = "created" | "modified" | "deleted";

/** The workspace's files now (`workspace`: its real path). */
export async function fileStates(
  workspace: string,
  o: { max?: number; signal?: AbortSignal; skip?: readonly string[] } = {},
): Promise<FileStates> {
  const max = o.max ?? FILE_STATES_MAX;
  const files = new Map<string, string>();
  // Folders not compared (Hands' own data folder when it lies inside the workspace).
  const skip = new Set(
    (o.skip ?? [])
      .map((d) => relative(workspace, d))
      .filter((r) => r && !r.startsWith("..") && !isAbsolute(r)),
  );
  const walk = walkFiles({
    workspace,
    base: workspace,
    ...(o.signal ? { signal: o.signal } : {}),
    ...(skip.size ? { enterDir: (rel: string) => !skip.has(rel.split("/").join(sep)) } : {}),
  });
  for await (const e of walk) {
    if (files.size >= max) return { files, capped: true };
    try {
      const st = lstatSync(viaFd(e.dirFd, e.name), { bigint: true });
      files.set(e.wsRel, `${st.size}:${st.mtimeNs}:${st.ino}`);
    } catch {
      // Gone since it was listed: not there.
    }
  }
  return { files, capped: false };
}

/** What changed from `before` to `after`, sorted by path. */
export function changedFiles(before: FileStates, after: FileStates): [string, FileChange][] {
  const out: [string, FileChange][] = [];
  for (const [path, sig] of after.files) {
    const was = before.files.get(path);
    // A path past the cap before is not known to be new (it may be an old file the walk missed).
    if (was === undefined) {
      if (!before.capped) out.push([path, "created"]);
    } else if (was !== sig) out.push([path, "modified"]);
  }
  // A path the capped walk did not reach is not known to be gone.
  if (!after.capped)
    for (const path of before.files.keys()) if (!after.files.has(path)) out.push([path, "deleted"]);
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}
