// execute_python: run a Python 3 snippet in the task's sandbox (code passed on stdin).
import { errorResult } from "./fs/errors.js";
import {
  EXEC_DEFAULT_TIMEOUT_S,
  EXEC_MAX_TIMEOUT_S,
  runInSandbox,
  timeoutSeconds,
} from "./fs/exec-format.js";
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
  name: "execute_python",
  description: [
    "Run a Python 3 program and get its exit code, stdout and stderr (tracebacks included).",
    "The code runs as a fresh script with the workspace root as the current directory, so it can read and write project files; nothing persists between calls — print() whatever you need to see.",
    "Good for quick calculations, data inspection, and checking that code you wrote actually works (import it and call it).",
    `Timeout: \`timeout\` seconds (default ${EXEC_DEFAULT_TIMEOUT_S}, max ${EXEC_MAX_TIMEOUT_S}). stdin is not available to the program (input() fails).`,
  ].join(" "),
  parameters: {
    type: "object",
    properties: {
      code: { type: "string", description: "Complete Python 3 source code to run." },
      timeout: {
        type: "number",
        minimum: 1,
        maximum: EXEC_MAX_TIMEOUT_S,
        description: `Timeout in seconds (default ${EXEC_DEFAULT_TIMEOUT_S}).`,
      },
    },
    required: ["code"],
    additionalProperties: false,
  },
  readOnly: false,
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
