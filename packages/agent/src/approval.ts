// The approval hook: asked before every call that writes or runs something, so a person (or a
// policy) can refuse it. A refusal is an observation the model reads, never an exception.
import { join, relative, resolve } from "node:path";
import type { ToolCall } from "@hands/llm";
import { isInside, realPathOf, realpathOrSelf } from "@hands/sandbox/base";
import type { ApprovalSource } from "./events.js";

export interface ApprovalRequest {
  call: ToolCall;
  name: string;
  /** The validated arguments. */
  args: Record<string, unknown>;
  step: number;
  signal: AbortSignal;
}

export interface ApprovalDecision {
  allow: boolean;
  source: ApprovalSource;
  /** The policy rule that decided, when one did. */
  rule?: string;
  /** Why (shown to the model on a refusal). */
  reason?: string;
}

export type ApproveHook = (request: ApprovalRequest) => Promise<ApprovalDecision>;

/** The workspace folder holding Hands' own settings for the project (config, policy). */
export const SETTINGS_FOLDER = ".hands";

// The built-in tools' path arguments (the rest is content or code: the sandbox keeps .hands/
// read-only for commands). Any other tool (MCP) may take a path under any name: all its
// string arguments count.
const PATH_ARGS: Record<string, string[]> = {
  write_file: ["path"],
  edit_file: ["path"],
  run_command: [],
  execute_python: [],
};

/**
 * Where a call would write into the workspace's .hands/ (relative to the workspace), or
 * undefined. Any tool's string arguments count, each resolved through symlinks (a link to
 * .hands/config.json is .hands/config.json), and so does the folder .hands points to if it
 * is a symlink. Such writes would plant settings for the next run, so the approval gate never
 * lets them through without a person's explicit yes.
 */
export async function settingsWriteTarget(
  workspace: string,
  name: string,
  args: Record<string, unknown>,
): Promise<string | undefined> {
  const ws = realpathOrSelf(workspace);
  const folder = join(ws, SETTINGS_FOLDER);
  const roots = [folder, realpathOrSelf(folder)];
  const fold = process.platform === "darwin" || process.platform === "win32";
  const norm = (p: string) => (fold ? p.toLowerCase() : p);
  for (const value of pathLikeArgs(name, args)) {
    const lexical = resolve(ws, value);
    let real: string;
    try {
      real = await realPathOf(lexical);
    } catch {
      real = lexical;
    }
    for (const candidate of [lexical, real])
      if (roots.some((r) => isInside(norm(r), norm(candidate)))) return relative(ws, lexical) || value;
  }
  return undefined;
}

function pathLikeArgs(name: string, args: Record<string, unknown>): string[] {
  const out: string[] = [];
  const known = PATH_ARGS[name];
  for (const [key, value] of Object.entries(args)) {
    if (known && !known.includes(key)) continue;
    for (const v of Array.isArray(value) ? value : [value])
      if (typeof v === "string" && v && v.length <= 4096 && !v.includes("\0") && !v.includes("\n"))
        out.push(v);
  }
  return out;
}
