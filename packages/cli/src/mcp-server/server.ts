// The MCP server of `hands mcp-server` (the official SDK's low-level Server, so the tool's JSON
// Schema is the one listed): run_task, with progress notifications while it runs and the
// client's notifications/cancelled aborting it.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CliArgs } from "../args.js";
import { cliVersion } from "../cli-version.js";
import { checkInput, RUN_TASK_TOOL, resultText, runTask, TaskInputError } from "./run-task.js";

export interface HandsMcpOptions {
  flags: CliArgs;
  root: string;
  env: NodeJS.ProcessEnv;
  log: (text: string) => void;
}

export function handsMcpServer(o: HandsMcpOptions): Server {
  const server = new Server({ name: "hands", version: cliVersion() }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [RUN_TASK_TOOL] }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    if (req.params.name !== RUN_TASK_TOOL.name)
      return {
        isError: true,
        content: [{ type: "text", text: `ERROR: no tool ${req.params.name} (run_task is the one)` }],
      };
    const token = req.params._meta?.progressToken;
    let done = 0;
    const progress =
      token === undefined
        ? undefined
        : (message: string) => {
            done++;
            extra
              .sendNotification({
                method: "notifications/progress",
                params: { progressToken: token, progress: done, message },
              })
              .catch(() => {});
          };
    try {
      const input = checkInput(req.params.arguments ?? {});
      const out = await runTask(input, {
        flags: o.flags,
        root: o.root,
        env: o.env,
        signal: extra.signal,
        log: o.log,
        ...(progress ? { progress } : {}),
      });
      return {
        content: [{ type: "text", text: resultText(out) }],
        structuredContent: out,
        isError: out.status !== "done",
      };
    } catch (e) {
      if (!(e instanceof TaskInputError)) o.log(`hands mcp-server: ${(e as Error).stack ?? e}\n`);
      return { isError: true, content: [{ type: "text", text: `ERROR: ${(e as Error).message}` }] };
    }
  });
  return server;
}
