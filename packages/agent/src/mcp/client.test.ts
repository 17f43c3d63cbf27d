// MCP tools over streamable HTTP: a real MCP server (the SDK's) on a local port.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { connectMcpServers, mcpToolName, parseMcpServers } from "./client.js";

/** What the server was asked to call, as its own (schema-checked) handler saw it. */
const received: Array<{ name: string; arguments: unknown }> = [];

function echoServer(): Server {
  const s = new Server({ name: "echo", version: "1.0.0" }, { capabilities: { tools: {} } });
  s.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: "shout",
        description: "Upper-cases text.",
        inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      },
    ],
  }));
  s.setRequestHandler(CallToolRequestSchema, async (req) => {
    received.push({ name: req.params.name, arguments: req.params.arguments });
    if (req.params.name !== "shout") throw new Error(`unknown tool ${req.params.name}`);
    const text = String(req.params.arguments?.["text"] ?? "");
    if (!text) return { content: [{ type: "text", text: "text is empty" }], isError: true };
    return { content: [{ type: "text", text: text.toUpperCase() }] };
  });
  return s;
}

test("tools of a streamable HTTP server are namespaced, callable, and errors are results", async () => {
  const http = createServer(async (req, res) => {
    // Stateless: a fresh server and transport per request.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await echoServer().connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  const conn = await connectMcpServers({
    ...parseMcpServers({ web: { url } }),
    broken: { command: "/nonexistent/mcp-server" },
  });
  try {
    assert.deepEqual(conn.servers, [{ name: "web", tools: 1 }]);
    assert.equal(conn.errors.length, 1);
    assert.match(conn.errors[0]!, /MCP server broken/);
    const tool = conn.tools[0]!;
    assert.equal(tool.name, "mcp__web__shout");
    assert.equal(tool.readOnly, false);
    const ctx = {
      workspace: "/",
      readRoots: [],
      sandbox: async () => ({}) as never,
      signal: new AbortController().signal,
    };
    assert.deepEqual(await tool.execute({ text: "hi" }, ctx), {
      output: "HI",
      data: { server: "web", tool: "shout" },
    });
    const bad = await tool.execute({ text: "" }, ctx);
    assert.equal(bad.isError, true);
    assert.match(bad.output, /^ERROR: text is empty/);
    // The server got the tool's own name (not the namespaced one) and the arguments as sent.
    assert.deepEqual(received, [
      { name: "shout", arguments: { text: "hi" } },
      { name: "shout", arguments: { text: "" } },
    ]);
  } finally {
    await conn.close();
    http.close();
  }
});

test("config is checked and names are safe for every provider", () => {
  assert.equal(mcpToolName("my server", "do.it"), "mcp__my_server__do_it");
  assert.throws(() => parseMcpServers({ x: {} }), /either "command"/);
  assert.throws(() => parseMcpServers([]), /must be an object/);
  assert.deepEqual(parseMcpServers({ off: { command: "x", disabled: true } }), {});
});
