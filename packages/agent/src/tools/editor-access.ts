// What an editor driving Hands (ACP's client capabilities) can do for the tools: hand over a
// file's text as its buffer holds it (unsaved changes included), write a file through its
// buffer, run a command in its own terminal. Every path it is given has passed the workspace's
// checks first (confinement, symbolic links): the editor is asked only about workspace files.
import type { ExecResult } from "@hands/sandbox";

export interface EditorCommandOptions {
  timeoutMs: number;
  signal: AbortSignal;
  maxOutputBytes: number;
  /** The tool call it runs for (the editor shows the terminal in that call). */
  callId?: string;
  /** The command's background processes are left running (the terminal is kept until the session ends). */
  keepBackground?: boolean;
}

export interface EditorAccess {
  /** The editor's text of `abs` (a real path inside the workspace); rejects when it cannot. */
  readText?(abs: string, signal: AbortSignal): Promise<string>;
  /** Writes `content` to `abs` (a real path inside the workspace) through the editor. */
  writeText?(abs: string, content: string, signal: AbortSignal): Promise<void>;
  /** Runs a shell command in the editor's terminal, in the workspace, instead of the sandbox. */
  exec?(command: string, options: EditorCommandOptions): Promise<ExecResult>;
}

/** The editor's text of a workspace file, or undefined: no editor, not in the workspace, or it failed. */
export async function editorText(
  ctx: { editor?: EditorAccess; signal: AbortSignal },
  abs: string,
  inWorkspace: boolean,
): Promise<string | undefined> {
  if (!inWorkspace || !ctx.editor?.readText) return undefined;
  try {
    return await ctx.editor.readText(abs, ctx.signal);
  } catch {
    // The editor could not (a file it does not know, a refusal): the disk's copy is the answer.
    return undefined;
  }
}
