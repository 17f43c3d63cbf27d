// Tools from MCP servers (stdio or streamable HTTP), through the official SDK. Each server's
// tools are namespaced `mcp__<server>__<tool>` and are not read-only, so approvals and the
// audit log cover them like any write. The SDK is imported only when a server is configured.
import type { Tool, ToolResult } from "../tools/types.js";

export interface McpServerConfig {
  /** stdio: the program to start, with its arguments. */
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Streamable HTTP: the endpoint URL. */
  url?: string;
  headers?: Record<string, string>;
  /** Leave this server out. */
  disabled?: boolean;
}

export interface McpConnection {
  tools: Tool[];
  /** One line per server that could not be used (the others still work). */
  errors: string[];
  /** Servers that connected, with their tool counts. */
  servers: { name: string; tools: number }[];
  close(): Promise<void>;
}

const MAX_NAME = 64;

export function mcpToolName(server: string, tool: string): string {
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, "_");
  return `mcp__${clean(server)}__${clean(tool)}`.slice(0, MAX_NAME);
}

export function parseMcpServers(value: unknown): Record<string, McpServerConfig> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new Error('"mcpServers" must be an object: {"name": {"command": …} | {"url": …}}');
  const out: Record<string, McpServerConfig> = {};
  for (const [name, cfg] of Object.entries(value as Record<string, unknown>)) {
    const c = cfg as McpServerConfig;
    if (typeof c !== "object" || c === null || (!c.command && !c.url) || (c.command && c.url))
      throw new Error(`mcpServers.${name}: give either "command" (stdio) or "url" (streamable HTTP)`);
    if (!c.disabled) out[name] = c;
  }
  return out;
}

export async function connectMcpServers(
  servers: Record<string, McpServerConfig>,
  opts: { timeoutMs?: number; clientName?: string } = {},
): Promise<McpConnection> {
  const names = Object.keys(servers);
  const conn: McpConnection = { tools: [], errors: [], servers: [], close: async () => {} };
  if (names.length === 0) return conn;
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const clients: InstanceType<typeof Client>[] = [];
  const timeout = opts.timeoutMs ?? 15_000;

  await Promise.all(
    names.map(async (name) => {
      const cfg = servers[name]!;
      const client = new Client({ name: opts.clientName ?? "hands", version: "0.1.0" });
      try {
        let transport: import("@modelcontextprotocol/sdk/shared/transport.js").Transport;
        if (cfg.command) {
          const { StdioClientTransport, getDefaultEnvironment } = await import(
            "@modelcontextprotocol/sdk/client/stdio.js"
          );
          transport = new StdioClientTransport({
            command: cfg.command,
            args: cfg.args ?? [],
            env: { ...getDefaultEnvironment(), ...(cfg.env ?? {}) },
            ...(cfg.cwd ? { cwd: cfg.cwd } : {}),
            stderr: "ignore",
          });
        } else {
          const { StreamableHTTPClientTransport } = await import(
            "@modelcontextprotocol/sdk/client/streamableHttp.js"
          );
          transport = new StreamableHTTPClientTransport(new URL(cfg.url!), {
            requestInit: { headers: cfg.headers ?? {} },
          });
        }
        await client.connect(transport, { timeout });
        clients.push(client);
        const listed = await client.listTools(undefined, { timeout });
        for (const t of listed.tools) conn.tools.push(wrapTool(client, name, t));
        conn.servers.push({ name, tools: listed.tools.length });
      } catch (err) {
        conn.errors.push(`MCP server ${name}: ${(err as Error)?.message ?? String(err)}`);
        await client.close().catch(() => {});
      }
    }),
  );
  conn.close = async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
  };
  return conn;
}

type ListedTool = { name: string; description?: string; inputSchema: Record<string, unknown> };

function wrapTool(client: { callTool: (...a: any[]) => Promise<any> }, server: string, t: ListedTool): Tool {
  return {
    name: mcpToolName(server, t.name),
    description: `[MCP server ${server}] ${t.description ?? t.name}`,
    parameters: { type: "object", ...t.inputSchema },
    readOnly: false,
    async execute(args, ctx): Promise<ToolResult> {
      try {
        const r = await client.callTool({ name: t.name, arguments: args }, undefined, { signal: ctx.signal });
        const parts: string[] = [];
        for (const c of (r.content ?? []) as { type: string; text?: string }[]) {
          if (c.type === "text" && typeof c.text === "string") parts.push(c.text);
          else parts.push(`[${c.type} content]`);
        }
        if (parts.length === 0 && r.structuredContent) parts.push(JSON.stringify(r.structuredContent));
        const text = parts.join("\n");
        if (r.isError)
          return { output: `ERROR: ${text || "the MCP tool failed"}`, isError: true, data: { server } };
        return { output: text || "(no output)", data: { server, tool: t.name } };
      } catch (err) {
        return {
          output: `ERROR: MCP tool ${t.name} on ${server} failed: ${(err as Error)?.message ?? String(err)}`,
          isError: true,
        };
      }
    },
  };
}
