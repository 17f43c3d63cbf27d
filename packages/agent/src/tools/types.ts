// The tool contract: every tool returns text for the model and structured data for the UI
// and the trace. Tools never throw for expected failures; they return `isError` results.
import type { JsonSchema } from "@hands/llm";
import type { ExecResult, Sandbox } from "@hands/sandbox";

export interface ToolContext {
  /** Real path (realpath) of the workspace root. */
  workspace: string;
  /** Extra real paths the model may read (e.g. where truncated outputs are saved). */
  readRoots: string[];
  /** The task's sandbox session, created on first use. */
  sandbox: () => Promise<Sandbox>;
  signal: AbortSignal;
  /** Where a command's output goes as it comes (a live view), besides its result. */
  onOutput?: (stream: "stdout" | "stderr", text: string) => void;
  /** Why a command failed, from facts of the sandbox (its OOM/PID events, ldd, the package index). */
  diagnose?: DiagnoseCommand;
}

/** One line that says why a failed command failed, or undefined for an ordinary failure. */
export type DiagnoseCommand = (
  sandbox: Sandbox,
  result: ExecResult,
) => Promise<{ cause: string; line: string; facts: Record<string, unknown> } | undefined>;

export interface ToolResult {
  /** What the model sees. Errors start with "ERROR: ". */
  output: string;
  isError?: boolean;
  /** Structured details for the UI and the trace (paths, exit codes, counts…). */
  data?: Record<string, unknown>;
}

export interface Tool<Args = Record<string, unknown>> {
  name: string;
  description: string;
  /** JSON Schema for the arguments; validated before `execute` is called. */
  parameters: JsonSchema;
  /** Read-only tools of one turn may run in parallel; others run in order. */
  readOnly: boolean;
  execute(args: Args, ctx: ToolContext): Promise<ToolResult>;
}
