// The tool contract: every tool returns text for the model and structured data for the UI
// and the trace. Tools never throw for expected failures; they return `isError` results.
import type { JsonSchema } from "@hands/llm";
import type { Sandbox } from "@hands/sandbox";
import type { Diagnostics } from "../diagnostics/service.js";

export interface ToolContext {
  /** Real path (realpath) of the workspace root. */
  workspace: string;
  /** Extra real paths the model may read (e.g. where truncated outputs are saved). */
  readRoots: string[];
  /** The task's sandbox session, created on first use. */
  sandbox: () => Promise<Sandbox>;
  signal: AbortSignal;
  /** Language servers that report the errors an edit introduced (write_file, edit_file); off when unset. */
  diagnostics?: Diagnostics;
  /** Where a command's output goes as it comes (a live view), besides its result. */
  onOutput?: (stream: "stdout" | "stderr", text: string) => void;
}

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
