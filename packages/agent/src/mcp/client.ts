// Tools from MCP servers (stdio or streamable HTTP), through the official SDK. Each server's
// tools are namespaced `mcp__<server>__<tool>` and are not read-only, so approvals and the
// audit log cover them like any write. The SDK is imported only when a server is configured.
import type { Tool } from "../tools/types.js";
import type { McpServerConfig } from "./config.js";
import { type ListedTool, McpServerSupervisor } from "./server.js";

export { MCP_DEFAULTS, type McpServerConfig, parseMcpServers } from "./config.js";

export interface McpConnection {
  tools: Tool[];
  /** One report per server that could not be used (the others still work). */
  errors: string[];
  /** Servers that connected, with their tool counts. */
  servers: { name: string; tools: number }[];
  close(): Promise<void>;
}

export interface ConnectMcpOptions {
  clientName?: string;
  /** Told, one message at a time, when a server stops, is restarted or is given up on. */
  onNotice?: (message: string) => void;
  /** The first restart of a stopped server waits this long, each further one twice as long. */
  restartDelayMs?: number;
}

const MAX_NAME = 64;

export function mcpToolName(server: string, tool: string): string {
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, "_");
  return `mcp__${clean(server)}__${clean(tool)}`.slice(0, MAX_NAME);
}

export async function connectMcpServers(
  servers: Record<string, McpServerConfig>,
  opts: ConnectMcpOptions = {},
): Promise<McpConnection> {
  const supervisors: McpServerSupervisor[] = [];
  const conn: McpConnection = {
    tools: [],
    errors: [],
    servers: [],
    close: async () => {
      await Promise.all(supervisors.map((s) => s.close()));
    },
  };
  const started = await Promise.all(
    Object.entries(servers).map(async ([name, cfg]) => {
      const supervisor = new McpServerSupervisor(name, cfg, {
        clientName: opts.clientName ?? "hands",
        clientVersion: "0.1.0",
        ...(opts.onNotice ? { onNotice: opts.onNotice } : {}),
        ...(opts.restartDelayMs !== undefined ? { restartDelayMs: opts.restartDelayMs } : {}),
      });
      try {
        await supervisor.start();
        return supervisor;
      } catch (err) {
        conn.errors.push(`MCP server ${name}: ${(err as Error).message}`);
        return undefined;
      }
    }),
  );
  // In the configured order, whichever server answered first.
  for (const s of started) {
    if (!s) continue;
    supervisors.push(s);
    for (const t of s.tools) conn.tools.push(wrapTool(s, t));
    conn.servers.push({ name: s.name, tools: s.tools.length });
  }
  return conn;
}

function wrapTool(server: McpServerSupervisor, t: ListedTool): Tool {
  return {
    name: mcpToolName(server.name, t.name),
    description: `[MCP server ${server.name}] ${t.description ?? t.name}`,
    parameters: { type: "object", ...t.inputSchema },
    readOnly: false,
    execute: (args, ctx) => server.call(t.name, args, ctx.signal),
  };
}
