// run_command: run a shell command in the task's sandbox.
import { errorResult } from "./fs/errors.js";
import { runInSandbox, timeoutSeconds } from "./fs/exec-format.js";
import { runCommandSpec } from "./specs.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";

export type RunCommandArgs = {
  command: string;
  timeout?: number;
  keep_background?: boolean;
};

export const runCommandTool: Tool<RunCommandArgs> = {
  ...runCommandSpec,
  async execute(args: RunCommandArgs, ctx: ToolContext): Promise<ToolResult> {
    if (typeof args.command !== "string" || args.command.trim() === "") {
      return errorResult("command must be a non-empty string.");
    }
    const timeoutS = timeoutSeconds(args.timeout);
    const r = await runInSandbox(ctx, args.command, timeoutS, {
      label: "command",
      editorTerminal: true,
      ...(args.keep_background === true ? { keepBackground: true } : {}),
    });
    return { ...r, data: { command: args.command, ...(r.data ?? {}) } };
  },
};
