// run_command: run a shell command in the task's sandbox.
import { errorResult } from "./fs/errors.js";
import {
  EXEC_DEFAULT_TIMEOUT_S,
  EXEC_MAX_TIMEOUT_S,
  runInSandbox,
  timeoutSeconds,
} from "./fs/exec-format.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";

export type RunCommandArgs = {
  command: string;
  timeout?: number;
  keep_background?: boolean;
};

export const runCommandTool: Tool<RunCommandArgs> = {
  name: "run_command",
  description: [
    "Run a shell command (bash) in the workspace root and get its exit code, stdout and stderr.",
    "Use it to build, run tests, run scripts, use git, or inspect the environment — and to verify your changes after editing code.",
    "Depending on the sandbox, `cd`, variables and background processes may or may not carry over to the next call, so do not rely on them: use `cd sub && cmd` in one call. There is no terminal and stdin is closed, so commands must be non-interactive (pass -y / --yes flags, avoid editors and pagers).",
    `Timeout: \`timeout\` seconds (default ${EXEC_DEFAULT_TIMEOUT_S}, max ${EXEC_MAX_TIMEOUT_S}); on timeout the command and everything it started are killed.`,
    "Prefer read_file, list_dir, glob and grep over cat/ls/find/grep for looking at files. Very long output is cut in the middle; redirect to a file and search it when you need everything.",
  ].join(" "),
  parameters: {
    type: "object",
    properties: {
      command: {
        type: "string",
        description: "The shell command line to run, e.g. `npm test -- --grep parser`.",
      },
      timeout: {
        type: "number",
        minimum: 1,
        maximum: EXEC_MAX_TIMEOUT_S,
        description: `Timeout in seconds (default ${EXEC_DEFAULT_TIMEOUT_S}). Raise it for slow builds or installs.`,
      },
      keep_background: {
        type: "boolean",
        description:
          "Keep processes this command leaves running (e.g. a server started with `&`). Otherwise the result lists them and they are killed before the next command. Their later output is not shown anywhere: redirect it to a file.",
      },
    },
    required: ["command"],
    additionalProperties: false,
  },
  readOnly: false,
  async execute(args: RunCommandArgs, ctx: ToolContext): Promise<ToolResult> {
    if (typeof args.command !== "string" || args.command.trim() === "") {
      return errorResult("command must be a non-empty string.");
    }
    const timeoutS = timeoutSeconds(args.timeout);
    const r = await runInSandbox(ctx, args.command, timeoutS, {
      label: "command",
      ...(args.keep_background === true ? { keepBackground: true } : {}),
    });
    return { ...r, data: { command: args.command, ...(r.data ?? {}) } };
  },
};
