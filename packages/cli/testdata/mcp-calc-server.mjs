// A tiny MCP server over stdio for the tests: one tool, `add`, that answers "sum=<a+b>".
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "calc", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "add",
      description: "Adds two numbers.",
      inputSchema: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  if (req.params.name !== "add") return { content: [{ type: "text", text: "unknown tool" }], isError: true };
  const { a, b } = req.params.arguments ?? {};
  return { content: [{ type: "text", text: `sum=${Number(a) + Number(b)}` }] };
});
await server.connect(new StdioServerTransport());
