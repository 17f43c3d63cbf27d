// What the session knows about changes to a workspace's files, for the repository index to
// skip its walk (an lstat of every file, ~0.3 s on 5,000 files) when nothing it has not been
// told of can have changed. The file tools report what they wrote (the index re-reads just
// those); any other tool that is not read-only (a command, Python, an MCP tool) may have changed
// anything, and so may a person between tasks: those mark the workspace changed, and the next
// map walks it. No imports: the scheduler and the file tools use it without loading the index.

interface Listener {
  /** Files written by the file tools, workspace-relative with "/" separators. */
  written(rels: readonly string[]): void;
}

const generations = new Map<string, number>();
const listeners = new Map<string, Set<Listener>>();

/** Something may have changed any file of `workspace` (a command ran, a new task began). */
export function markWorkspaceChanged(workspace: string): void {
  generations.set(workspace, (generations.get(workspace) ?? 0) + 1);
}

/** How many times `workspace` was marked changed in this process. */
export function workspaceGeneration(workspace: string): number {
  return generations.get(workspace) ?? 0;
}

/** A file tool wrote `abs` (a real path inside `workspace`, a real path too). */
export function noteFileWritten(workspace: string, abs: string): void {
  if (!abs.startsWith(`${workspace}/`)) return;
  noteFilesWritten(workspace, [
    abs
      .slice(workspace.length + 1)
      .split("\\")
      .join("/"),
  ]);
}

/** The file tools wrote `rels` in `workspace` (and nothing else). */
export function noteFilesWritten(workspace: string, rels: readonly string[]): void {
  for (const l of listeners.get(workspace) ?? []) l.written(rels);
}

/** Calls `listener` for every write reported in `workspace`; returns the unsubscribe. */
export function onFilesWritten(workspace: string, listener: Listener): () => void {
  let set = listeners.get(workspace);
  if (!set) {
    set = new Set();
    listeners.set(workspace, set);
  }
  set.add(listener);
  return () => set.delete(listener);
}
