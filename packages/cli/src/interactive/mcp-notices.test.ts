// A session whose MCP server crashes mid-request: the user is told (the exit, its stderr, the
// restart), the model reads a clear ERROR instead of "Not connected", and the next call
// reaches the restarted server. The real bin in a pipe (`-i`), the model scripted over HTTP.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { startScriptedServer } from "@hands/llm";
import { BIN, cleanEnv } from "../testing/cli-process.js";

// The agent package's misbehaving MCP server (it checks what it receives; see its header).
const UNRULY = fileURLToPath(new URL("../../../agent/testdata/mcp-unruly-server.mjs", import.meta.url));

test("an MCP server that crashes mid-session is reported, restarted, and its tools work again", async () => {
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-mcp-notice-")));
  const server = await startScriptedServer([
    { toolCalls: [{ name: "mcp__unruly__crash", arguments: { code: 3 } }] },
    { toolCalls: [{ name: "mcp__unruly__echo", arguments: { text: "back again" } }] },
    { content: "the server came back" },
  ]);
  try {
    // The user's config (always trusted), not the project's.
    mkdirSync(join(scratch, "config", "hands"), { recursive: true });
    writeFileSync(
      join(scratch, "config", "hands", "config.json"),
      JSON.stringify({ mcpServers: { unruly: { command: process.execPath, args: [UNRULY] } } }),
    );
    const ws = mkdtempSync(join(scratch, "ws-"));
    const env = cleanEnv(scratch, { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test", HOME: scratch });
    const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, "-i", "--model", "scripted-model", "--approval", "auto"], {
        cwd: ws,
        env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      let text = "";
      child.stdout.on("data", (d) => (text += d));
      child.stderr.on("data", (d) => (text += d));
      child.on("close", (code) => resolve({ code, text }));
      child.stdin.end("crash it, then echo\n");
    });
    assert.equal(out.code, 0, out.text);
    assert.match(out.text, /MCP server unruly: 7 tools/);
    assert.match(
      out.text,
      /MCP server unruly exited with code 3\n {2}its last stderr lines:\n {2}\| about to crash with code 3/,
    );
    assert.match(out.text, /restarting it in 500 ms \(restart 1 of 3\)/);
    assert.match(out.text, /MCP server unruly is running again/);
    assert.match(out.text, /the server came back/);
    const toolMessages = (i: number) =>
      (
        server.requests.filter((r) => r.method === "POST")[i]!.body.messages as {
          role: string;
          content: string;
        }[]
      )
        .filter((m) => m.role === "tool")
        .map((m) => m.content);
    assert.match(
      toolMessages(1).at(-1)!,
      /^ERROR: MCP server unruly stopped while running crash: exited with code 3/,
    );
    assert.equal(toolMessages(2).at(-1), "back again");
    assert.doesNotMatch(out.text, /Not connected/);
  } finally {
    await server.close();
    rmSync(scratch, { recursive: true, force: true });
  }
});
