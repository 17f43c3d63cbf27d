// Workspace confinement for the file tools: every path the model gives is resolved to a real
// absolute path inside the workspace (or, for reads, inside one of ctx.readRoots), with
// symlinks resolved so that none of them can lead outside.
import { realpathSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { isInside, realPathOf } from "@hands/sandbox/base";
import type { ToolContext } from "./types.js";

/** The `path` parameter of the tools that take one file. */
export const FILE_PATH_PARAM = { type: "string" };

/** A path the model may not use; the message is written for the model. */
export class PathError extends Error {
  override name = "PathError";
}

export type PathContext = Pick<ToolContext, "workspace" | "readRoots">;

/** True when `p` is `root` or lies below it (root + separator: /ws_evil is not in /ws). */
export const isInsideRoot = isInside;

/** Real paths of the roots resolved so far (few: the workspace, the run's output folder). */
const realRoots = new Map<string, string>();
const MAX_REAL_ROOTS = 64;

/**
 * The real path of a root folder Hands chose (the workspace, a read root), or the path itself
 * while it does not exist yet (an output folder made on demand). Resolved once per process:
 * every file tool call asks for its roots several times, and a fresh realpath of each cost
 * more syscalls than the tool's own work. A root that changes afterwards cannot widen access:
 * the path a model gives is still resolved fresh and must lie inside the cached real root, and
 * opening a root checks that it is still that real folder (confined.ts, openRoot).
 */
export function realRoot(p: string): string {
  const known = realRoots.get(p);
  if (known !== undefined) return known;
  let real: string | undefined;
  try {
    // A missing folder is found out without a thrown error (which costs more than the syscall).
    real = statSync(p, { throwIfNoEntry: false }) ? realpathSync.native(p) : undefined;
  } catch {
    real = undefined;
  }
  if (real === undefined) return resolve(p); // not there yet: asked again next time
  if (realRoots.size >= MAX_REAL_ROOTS) realRoots.clear();
  realRoots.set(p, real);
  return real;
}

/**
 * Resolves a path given by the model to a real absolute path.
 *
 * - Relative paths are relative to the workspace root; absolute paths must lie inside the
 *   workspace (or, unless `forWrite`, inside one of `ctx.readRoots`).
 * - The longest existing prefix is realpath'd, so symlinks (the file itself or any parent
 *   folder) that lead outside are refused; a path that does not exist yet is checked through
 *   its nearest existing parent.
 * - NUL bytes, `..` escapes and broken symlinks are refused.
 *
 * Throws PathError with a message the model can act on.
 */
export async function resolveInWorkspace(
  ctx: PathContext,
  userPath: string,
  options: { forWrite?: boolean } = {},
): Promise<string> {
  if (typeof userPath !== "string") throw new PathError("path must be a string");
  if (userPath.includes("\0")) throw new PathError(`path contains a NUL byte: ${JSON.stringify(userPath)}`);
  const workspace = realRoot(ctx.workspace);
  const roots = options.forWrite ? [workspace] : [workspace, ...ctx.readRoots.map(realRoot)];
  const trimmed = userPath.trim() === "" ? "." : userPath;
  const candidate = isAbsolute(trimmed) ? resolve(trimmed) : resolve(workspace, trimmed);

  const outside = () =>
    new PathError(
      `path is outside the workspace: ${userPath}. ${
        options.forWrite
          ? "Only files inside the workspace can be written"
          : "Only files inside the workspace can be read"
      } (workspace root: ${workspace}); use a path relative to the workspace root.`,
    );
  // Lexical check first (catches `..` escapes and absolute paths elsewhere).
  if (!roots.some((r) => isInsideRoot(r, candidate))) throw outside();

  let full: string;
  try {
    full = await realPathOf(candidate);
  } catch {
    throw new PathError(`path goes through a broken symbolic link: ${userPath}`);
  }
  if (!roots.some((r) => isInsideRoot(r, full))) {
    throw new PathError(
      `path resolves (through a symbolic link) to ${full}, which is outside the workspace: ${userPath}.`,
    );
  }
  return full;
}

/** A path for messages: relative to the workspace when inside it ("." for the root), else absolute. */
export function displayPath(ctx: Pick<ToolContext, "workspace">, abs: string): string {
  const workspace = realRoot(ctx.workspace);
  if (isInsideRoot(workspace, abs)) return relative(workspace, abs).split(sep).join("/") || ".";
  return abs;
}

/** True when the path (absolute, inside the workspace) is inside a `.git` folder or is one. */
export function isInGitInternals(ctx: Pick<ToolContext, "workspace">, abs: string): boolean {
  const rel = relative(realRoot(ctx.workspace), abs);
  return rel.split(sep).includes(".git");
}
