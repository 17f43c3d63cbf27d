// What a write would change, computed before it runs, for the approval prompt.
import { readFile } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import { unifiedDiff } from "./diff.js";

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
  let before: string | undefined;
  try {
    before = await readFile(abs, "utf8");
  } catch {
    before = undefined;
  }
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
