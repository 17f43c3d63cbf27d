// What a write would change, computed before it runs, for the approval prompt.
import { isAbsolute, relative, resolve } from "node:path";
import { realpathOrSelf } from "@hands/sandbox/base";
import { closeQuietly, openInside, readFd } from "../tools/fs/confined.js";
import { resolveInWorkspace } from "../tools/paths.js";
import { unifiedDiff } from "./diff.js";

/** Files larger than this are not read for the preview (the diff says it is all new). */
export const PREVIEW_MAX_BYTES = 1024 * 1024;

export interface WritePreview {
  path: string;
  /** Absolute path inside the workspace. */
  abs: string;
  created: boolean;
  diff: string;
}

/** The target of a write_file / edit_file call, or undefined for other tools or paths outside. */
export function writeTarget(
  workspace: string,
  name: string,
  args: Record<string, unknown>,
): string | undefined {
  if (name !== "write_file" && name !== "edit_file") return undefined;
  const p = args["path"];
  if (typeof p !== "string" || !p) return undefined;
  const abs = resolve(workspace, p);
  const rel = relative(workspace, abs);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return undefined;
  return abs;
}

export async function previewWrite(
  workspace: string,
  name: string,
  args: Record<string, unknown>,
): Promise<WritePreview | undefined> {
  const abs = writeTarget(workspace, name, args);
  if (!abs) return undefined;
  const before = await currentText(workspace, abs);
  let after: string;
  if (name === "write_file") after = String(args["content"] ?? "");
  else {
    const oldStr = String(args["old_string"] ?? "");
    const newStr = String(args["new_string"] ?? "");
    if (before === undefined || oldStr === "")
      after = before === undefined || before === "" ? newStr : before;
    else
      after = args["replace_all"] ? before.split(oldStr).join(newStr) : before.replace(oldStr, () => newStr);
  }
  const path = relative(workspace, abs);
  return { path, abs, created: before === undefined, diff: unifiedDiff(before ?? "", after, path) };
}

/**
 * The target's text now, read the way the file tools read (confined.ts: no symlink out, no
 * FIFO or device, bounded); undefined when it does not exist or cannot be read that way.
 */
async function currentText(workspace: string, abs: string): Promise<string | undefined> {
  const root = realpathOrSelf(workspace);
  try {
    const real = await resolveInWorkspace({ workspace: root, readRoots: [] }, abs, { forWrite: true });
    const { fd, stats } = openInside([root], real);
    try {
      if (!stats.isFile() || stats.size > PREVIEW_MAX_BYTES) return undefined;
      return (await readFd(fd, PREVIEW_MAX_BYTES)).toString("utf8");
    } finally {
      closeQuietly(fd);
    }
  } catch {
    return undefined;
  }
}
