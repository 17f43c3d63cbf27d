// execute_python: run a Python 3 snippet in the task's sandbox (code passed on stdin).
import { errorResult } from "./fs/errors.js";
import { runInSandbox, timeoutSeconds } from "./fs/exec-format.js";
import { executePythonSpec } from "./specs.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";

export type ExecutePythonArgs = {
  code: string;
  timeout?: number;
};

/**
 * The code goes to `python3 -` on stdin: no temp file is needed, so it works the same in
 * every sandbox backend (later ones mount only the workspace).
 */
export const PYTHON_COMMAND = "python3 -";

export const executePythonTool: Tool<ExecutePythonArgs> = {
  ...executePythonSpec,
  async execute(args: ExecutePythonArgs, ctx: ToolContext): Promise<ToolResult> {
    if (typeof args.code !== "string" || args.code.trim() === "") {
      return errorResult("code must be a non-empty string of Python source.");
    }
    const timeoutS = timeoutSeconds(args.timeout);
    const r = await runInSandbox(ctx, PYTHON_COMMAND, timeoutS, { stdin: args.code, label: "Python code" });
    if (r.data?.["exitCode"] === 127) {
      r.output +=
        "\n(python3 was not found in the sandbox; use run_command to check which Python is available.)";
    }
    return { ...r, data: { code: args.code, ...(r.data ?? {}) } };
  },
};
