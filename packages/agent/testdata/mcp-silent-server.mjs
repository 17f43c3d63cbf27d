// An MCP "server" that never answers `initialize` (a hung start-up) and ignores SIGTERM, so
// only a hard kill stops it. It still checks what it receives: the first message must be a
// well-formed JSON-RPC 2.0 `initialize` request, or it fails loudly (exit 99, reason on stderr).
import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";

const loud = (why) => {
  process.stderr.write(`SILENT SERVER: malformed input: ${why}\n`, () => process.exit(99));
};
if (process.env.MCP_SILENT_PIDFILE) writeFileSync(process.env.MCP_SILENT_PIDFILE, String(process.pid));
process.on("SIGTERM", () => process.stderr.write("silent server: ignoring SIGTERM\n"));
process.stderr.write("silent server: loading a very large index...\n");

let first = true;
createInterface({ input: process.stdin }).on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return loud(`not JSON: ${line.slice(0, 80)}`);
  }
  if (msg?.jsonrpc !== "2.0") return loud(`jsonrpc is ${JSON.stringify(msg?.jsonrpc)}`);
  if (first) {
    first = false;
    if (msg.method !== "initialize" || msg.id === undefined)
      return loud(`first message is not an initialize request: ${line}`);
    const p = msg.params ?? {};
    if (
      typeof p.protocolVersion !== "string" ||
      typeof p.capabilities !== "object" ||
      typeof p.clientInfo?.name !== "string"
    )
      return loud(`initialize params incomplete: ${JSON.stringify(p)}`);
    process.stderr.write(`silent server: got initialize from ${p.clientInfo.name}, not answering\n`);
  }
});
// Stays alive even when stdin closes.
setInterval(() => {}, 1 << 30);
