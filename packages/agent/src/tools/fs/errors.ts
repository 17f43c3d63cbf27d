// Shared error results for the file tools.
import { readdirSync } from "node:fs";
import { basename, dirname } from "node:path";
import { realpathOrSelf } from "@hands/sandbox/base";
import { displayPath, isInGitInternals, PathError, resolveInWorkspace } from "../paths.js";
import type { ToolContext, ToolResult } from "../types.js";
import { closeQuietly, type Opened, openInside, SpecialFileError, viaFd } from "./confined.js";
import { editDistance } from "./text.js";

/** The workspace's real path (a library caller may hand in a path through a symlink). */
export function workspaceRoot(ctx: Pick<ToolContext, "workspace">): string {
  return realpathOrSelf(ctx.workspace);
}

/** The real folders a tool may read below: the workspace, then ctx.readRoots (made on demand). */
export function readableRoots(ctx: Pick<ToolContext, "workspace" | "readRoots">): string[] {
  return [workspaceRoot(ctx), ...ctx.readRoots.map(realpathOrSelf)];
}

export function errorResult(message: string, data?: Record<string, unknown>): ToolResult {
  return { output: `ERROR: ${message}`, isError: true, ...(data ? { data } : {}) };
}

/** Turns an exception into a model-readable error result. */
export function exceptionResult(e: unknown, what: string): ToolResult {
  if (e instanceof SpecialFileError)
    return errorResult(`${what} is ${e.kind}, not a regular file or folder; it cannot be used.`);
  if (e instanceof PathError) return errorResult(e.message);
  const err = e as NodeJS.ErrnoException;
  if (err?.code === "EACCES" || err?.code === "EPERM") return errorResult(`permission denied: ${what}`);
  if (err?.code === "ENOENT") return errorResult(`file not found: ${what}`);
  if (err?.code === "ENOTDIR") return errorResult(`a parent of ${what} is a file, not a folder`);
  if (err?.code === "EISDIR") return errorResult(`${what} is a directory`);
  return errorResult(`${what}: ${err?.message ?? String(e)}`);
}

/** Up to `max` names in the folder of `abs` (inside one of `roots`) that look like its name. */
export function similarNames(roots: readonly string[], abs: string, max = 3): string[] {
  const want = basename(abs).toLowerCase();
  let names: string[];
  try {
    const dir = openInside(roots, dirname(abs));
    try {
      names = dir.stats.isDirectory() ? readdirSync(viaFd(dir.fd)) : [];
    } finally {
      closeQuietly(dir.fd);
    }
  } catch {
    return [];
  }
  const scored = names
    .map((n) => {
      const lower = n.toLowerCase();
      let score = editDistance(lower, want);
      const stemA = lower.replace(/\.[^.]*$/, "");
      const stemB = want.replace(/\.[^.]*$/, "");
      if (stemA === stemB) score = Math.min(score, 1);
      else if (stemA.length >= 3 && stemB.length >= 3 && (stemA.includes(stemB) || stemB.includes(stemA)))
        score = Math.min(score, 2);
      return { n, score };
    })
    .filter((s) => s.score <= Math.max(2, Math.floor(want.length / 3)))
    .sort((a, b) => a.score - b.score || (a.n < b.n ? -1 : 1));
  return scored.slice(0, max).map((s) => s.n);
}

/** "ERROR: file not found: <path>" plus similar names in that folder, if any. */
export async function notFoundResult(ctx: ToolContext, userPath: string, abs: string): Promise<ToolResult> {
  const similar = similarNames(readableRoots(ctx), abs);
  let msg = `file not found: ${userPath}`;
  if (similar.length > 0) {
    const dir = displayPath(ctx, dirname(abs));
    const shown = similar.map((n) => (dir === "." ? n : `${dir}/${n}`));
    msg += `\nSimilar names in that folder: ${shown.join(", ")}`;
  } else {
    msg += "\nUse list_dir or glob to find the right path.";
  }
  return errorResult(msg, { path: displayPath(ctx, abs), similar });
}

/** The real path for the model's `userPath`, or the error result to return when it is refused. */
export async function resolveOrError(
  ctx: ToolContext,
  userPath: string,
  options: { forWrite?: boolean } = {},
): Promise<string | ToolResult> {
  try {
    return await resolveInWorkspace(ctx, userPath, options);
  } catch (e) {
    return exceptionResult(e, userPath);
  }
}

/** Like resolveOrError, for tools that change files: also refuses git's internals. */
export async function writeTargetOrError(
  ctx: ToolContext,
  userPath: string,
  verb: "write" | "edit",
): Promise<string | ToolResult> {
  const abs = await resolveOrError(ctx, userPath, { forWrite: true });
  if (typeof abs === "string" && isInGitInternals(ctx, abs)) {
    return errorResult(
      `refusing to ${verb} inside .git/ (${displayPath(ctx, abs)}); use git commands through run_command instead.`,
    );
  }
  return abs;
}

/**
 * The real path `abs` opened without trusting its name again (see confined.ts; the caller
 * closes `fd`), or the error result: not found (with similar names), a FIFO, socket or
 * device, a symlink swapped in, or the cause.
 */
export function openOrError(ctx: ToolContext, userPath: string, abs: string): Opened | Promise<ToolResult> {
  try {
    return openInside(readableRoots(ctx), abs); // a few synchronous syscalls, no thread-pool round trip
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return notFoundResult(ctx, userPath, abs);
    return Promise.resolve(exceptionResult(e, userPath));
  }
}
