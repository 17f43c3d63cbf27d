// An MCP server (the SDK's, over stdio) that misbehaves on request, for the supervisor tests.
// It checks what it receives the way a strict server would and fails loudly (exit 99, the
// reason on stderr) on anything malformed: a line that is not JSON-RPC, a call before the
// client said `notifications/initialized`, a tool or argument it does not know.
//
// MCP_UNRULY_START: "ok" (default) | "crash" (30 lines on stderr, then exit 1 before answering)
import { appendFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const loud = (why) => {
  process.stderr.write(`UNRULY SERVER: malformed input: ${why}\n`, () => process.exit(99));
  throw new Error(`malformed input: ${why}`);
};

// Each start is recorded, so tests can tell a restarted server from the first one.
if (process.env.MCP_UNRULY_LOG) appendFileSync(process.env.MCP_UNRULY_LOG, `start ${process.pid}\n`);

if (process.env.MCP_UNRULY_START === "crash") {
  for (let i = 1; i <= 30; i++) process.stderr.write(`boot line ${i}\n`);
  // Exit once stderr is flushed (writes to a pipe are asynchronous).
  process.stderr.write("Error: cannot open the database: permission denied\n", () => process.exit(1));
  await new Promise(() => {});
}

const schema = (properties, required = Object.keys(properties)) => ({
  type: "object",
  properties,
  required,
  additionalProperties: false,
});
const TOOLS = {
  echo: schema({ text: { type: "string" } }),
  pid: schema({}),
  sleep: schema({ ms: { type: "number" } }),
  spin: schema({ ms: { type: "number" } }),
  crash: schema({ code: { type: "number" } }),
  spam: schema({
    stderrBytes: { type: "number" },
    notifications: { type: "number" },
    junkLines: { type: "number" },
  }),
  resources: schema({}),
};

let initialized = false;
const server = new Server({ name: "unruly", version: "1.0.0" }, { capabilities: { tools: {}, logging: {} } });
server.oninitialized = () => {
  initialized = true;
};
server.onerror = (err) => loud(err?.message ?? String(err));

server.setRequestHandler(ListToolsRequestSchema, async () => {
  if (!initialized) loud("tools/list before notifications/initialized");
  return {
    tools: Object.entries(TOOLS).map(([name, inputSchema]) => ({
      name,
      description: `test tool ${name}`,
      inputSchema,
    })),
  };
});

server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  if (!initialized) loud("tools/call before notifications/initialized");
  const { name, arguments: args = {} } = req.params;
  const shape = TOOLS[name];
  if (!shape) loud(`unknown tool ${JSON.stringify(name)}`);
  for (const key of Object.keys(args))
    if (!(key in shape.properties)) loud(`${name}: unknown argument ${key}`);
  for (const key of shape.required) {
    const want = shape.properties[key].type;
    if (typeof args[key] !== want)
      loud(`${name}: ${key} should be a ${want}, got ${JSON.stringify(args[key])}`);
  }
  const text = (t) => ({ content: [{ type: "text", text: t }] });
  switch (name) {
    case "echo":
      return text(args.text);
    case "pid":
      return text(String(process.pid));
    case "sleep":
      // Cancellable, as a well-behaved server's slow tool is: the server stays responsive.
      await new Promise((resolve) => {
        const t = setTimeout(resolve, args.ms);
        extra.signal.addEventListener("abort", () => {
          clearTimeout(t);
          resolve();
        });
      });
      return text(`slept ${args.ms}`);
    case "spin": {
      // Blocks its own event loop: it answers nothing, not even a ping.
      const end = Date.now() + args.ms;
      while (Date.now() < end);
      return text("spun");
    }
    case "crash":
      process.stderr.write(`about to crash with code ${args.code}\n`, () => process.exit(args.code));
      return new Promise(() => {});
    case "spam": {
      const line = `${"x".repeat(1023)}\n`;
      for (let sent = 0; sent < args.stderrBytes; sent += 1024) process.stderr.write(line);
      // Answers only once its stderr has been read: a client that does not drain it waits forever.
      await new Promise((resolve) => process.stderr.write("spam: stderr done\n", resolve));
      for (let i = 0; i < args.notifications; i++)
        await server.notification({
          method: "notifications/message",
          params: { level: "info", data: `log ${i}` },
        });
      // Lines on stdout that are not JSON-RPC (a stray console.log), between real messages.
      for (let i = 0; i < args.junkLines; i++) process.stdout.write(`console.log noise ${i}\n`);
      return text(
        `spammed ${args.stderrBytes} bytes, ${args.notifications} notifications, ${args.junkLines} junk lines`,
      );
    }
    case "resources":
      return {
        content: [
          { type: "text", text: "two resources:" },
          {
            type: "resource_link",
            uri: "file:///data/report.csv",
            name: "report.csv",
            mimeType: "text/csv",
            description: "the monthly report",
          },
          {
            type: "resource",
            resource: { uri: "memo://notes/1", mimeType: "text/plain", text: "first note" },
          },
          {
            type: "resource",
            resource: {
              uri: "memo://blobs/2",
              mimeType: "application/octet-stream",
              blob: Buffer.from("binary!").toString("base64"),
            },
          },
          { type: "image", data: Buffer.from("png-bytes").toString("base64"), mimeType: "image/png" },
        ],
      };
  }
});

await server.connect(new StdioServerTransport());
