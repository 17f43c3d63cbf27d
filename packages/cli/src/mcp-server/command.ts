// `hands mcp-server`: Hands as an MCP server, on stdio (the host starts it) or on streamable
// HTTP (--http PORT, on 127.0.0.1; every request needs the bearer token).
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseCliArgs, UsageError } from "../args.js";
import { handsMcpServer } from "./server.js";

export const MCP_SERVER_HELP = `Usage: hands mcp-server [--http PORT [--host ADDR]] [options]

Runs Hands as an MCP server with one tool, run_task: it runs a coding task in a workspace
(the server's folder, --cwd, or a folder inside it) and returns the answer, the files changed
and a session id to continue with. Progress notifications while it runs; a cancelled call
stops the run.

  (default)       serve MCP on stdin/stdout (the MCP host starts the command)
  --http PORT     serve streamable HTTP at http://127.0.0.1:PORT/mcp (0: any free port);
                  each request needs "Authorization: Bearer TOKEN", TOKEN from
                  HANDS_MCP_TOKEN, else a new one printed on stderr
  --host ADDR     listen on ADDR instead of 127.0.0.1

Tasks run unattended: --approval auto (default) lets writes and commands run, the command
policy still refuses what it denies; read-only runs nothing. The caller may narrow this to
read-only per call, and pick an isolating sandbox (bwrap, docker), never local on a server
that isolates. Other options: those of hands --help (--model, --sandbox, --network, …).`;

const MAX_BODY = 4 * 1024 * 1024;

export async function runMcpServerCommand(argv: string[]): Promise<number> {
  const rest: string[] = [];
  let port: number | undefined;
  let host = "127.0.0.1";
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--http" || a === "--host") {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      if (a === "--host") host = v;
      else if (!/^\d+$/.test(v) || Number(v) > 65535)
        throw new UsageError(`--http takes a port number, got ${v}`);
      else port = Number(v);
    } else rest.push(a);
  }
  const flags = parseCliArgs(rest);
  if (flags.task) throw new UsageError(`hands mcp-server takes no task (callers send them): ${flags.task}`);
  const options = {
    flags,
    root: flags.cwd ?? process.cwd(),
    env: process.env,
    log: (text: string) => process.stderr.write(text),
  };
  if (port === undefined) {
    const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
    const server = handsMcpServer(options);
    const closed = new Promise<void>((r) => {
      server.onclose = r;
      process.stdin.once("end", r);
    });
    await server.connect(new StdioServerTransport());
    await closed;
    await server.close().catch(() => {});
    return 0;
  }
  return serveHttp(port, host, options);
}

async function serveHttp(
  port: number,
  host: string,
  options: Parameters<typeof handsMcpServer>[0],
): Promise<number> {
  const { StreamableHTTPServerTransport } = await import(
    "@modelcontextprotocol/sdk/server/streamableHttp.js"
  );
  const { isInitializeRequest } = await import("@modelcontextprotocol/sdk/types.js");
  const token = options.env.HANDS_MCP_TOKEN || randomBytes(24).toString("base64url");
  const transports = new Map<string, InstanceType<typeof StreamableHTTPServerTransport>>();
  const deny = (res: ServerResponse, status: number, message: string) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
  };
  const http = createServer(async (req, res) => {
    try {
      if (new URL(req.url ?? "/", "http://x").pathname !== "/mcp")
        return deny(res, 404, "not found: the endpoint is /mcp");
      if (!authorized(req, token)) return deny(res, 401, "missing or wrong bearer token");
      const sid = req.headers["mcp-session-id"];
      const existing = typeof sid === "string" ? transports.get(sid) : undefined;
      if (existing)
        return await existing.handleRequest(req, res, req.method === "POST" ? await body(req) : undefined);
      if (req.method !== "POST") return deny(res, 400, "no such MCP session");
      const parsed = await body(req);
      if (typeof sid === "string" || !isInitializeRequest(parsed))
        return deny(res, 400, "no such MCP session (start with initialize)");
      const transport: InstanceType<typeof StreamableHTTPServerTransport> = new StreamableHTTPServerTransport(
        {
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, transport);
          },
          enableDnsRebindingProtection: true,
          allowedHosts: [
            `${host}:${(http.address() as AddressInfo).port}`,
            `localhost:${(http.address() as AddressInfo).port}`,
          ],
        },
      );
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
      };
      await handsMcpServer(options).connect(transport);
      await transport.handleRequest(req, res, parsed);
    } catch (e) {
      if (!res.headersSent) deny(res, e instanceof BodyError ? 400 : 500, (e as Error).message);
    }
  });
  await new Promise<void>((ok, fail) => {
    http.once("error", fail);
    http.listen(port, host, ok);
  });
  const url = `http://${host}:${(http.address() as AddressInfo).port}/mcp`;
  process.stderr.write(`hands mcp-server: ${url}\n${options.env.HANDS_MCP_TOKEN ? "" : `token: ${token}\n`}`);
  await new Promise<void>((r) => {
    process.once("SIGINT", r);
    process.once("SIGTERM", r);
  });
  for (const t of transports.values()) await t.close().catch(() => {});
  http.close();
  return 0;
}

function authorized(req: IncomingMessage, token: string): boolean {
  const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

class BodyError extends Error {}

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw new BodyError("request body too large");
    chunks.push(c as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new BodyError("the body is not JSON");
  }
}
