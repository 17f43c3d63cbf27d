// The tool contract: every tool returns text for the model and structured data for the UI
// and the trace. Tools never throw for expected failures; they return `isError` results.
import type { JsonSchema, Usage } from "@hands/llm";
import type { ExecResult, Sandbox } from "@hands/sandbox";
import type { TokenBudget } from "../budget.js";
import type { Diagnostics } from "../diagnostics/service.js";
import type { AgentEventInput } from "../events.js";
import type { EditorAccess } from "./editor-access.js";

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
  /** Why a command failed, from facts of the sandbox (its OOM/PID events, ldd, the package index). */
  diagnose?: DiagnoseCommand;
  /** The call being run (its id and the step), for tools that report events of their own. */
  callId?: string;
  step?: number;
  /** The run's token budget (a sub-agent's budget is a child of it). */
  budget?: TokenBudget;
  /** Adds an event to the run's stream (e.g. a sub-agent's start, with the path of its trace). */
  emit?: (event: AgentEventInput) => void;
  /** The editor driving the run (ACP): its buffers for the file tools, its terminal for commands. */
  editor?: EditorAccess;
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
  /** Model tokens the tool spent (a sub-agent): added to the run's usage. */
  usage?: Usage;
}

export interface Tool<Args = Record<string, unknown>> {
  name: string;
  description: string;
  /** JSON Schema for the arguments; validated before `execute` is called. */
  parameters: JsonSchema;
  /** Read-only tools of one turn may run in parallel; others run in order. */
  readOnly: boolean;
  /**
   * May run alongside the turn's other parallel calls although it is not read-only by itself
   * (a sub-agent: each of its own calls is approved and ordered inside it).
   */
  concurrent?: boolean;
  /**
   * Writes only files it reports itself (repo-map/freshness.ts: the file tools). Any other tool
   * that is not read-only may have changed any file: the repository map walks the workspace again.
   */
  reportsWrites?: boolean;
  execute(args: Args, ctx: ToolContext): Promise<ToolResult>;
}
