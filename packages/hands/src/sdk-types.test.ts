// The SDK's session options are typed: `tsc -b` compiles this file, and each @ts-expect-error
// below fails the build if the type it marks would be accepted (an untyped Record would). At
// run time the same wrong values are refused by createSession with a SettingsError.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createSession, type SessionOptions, SettingsError } from "./index.js";

const typed: SessionOptions[] = [
  { sandbox: "e2b" },
  { sandbox: "bwrap" },
  {
    mcpServers: {
      files: { command: "npx", args: ["-y", "some-server"], env: { A: "1" }, timeoutMs: 5000 },
      web: { url: "http://127.0.0.1:9000/mcp", headers: { authorization: "Bearer x" } },
    },
  },
  { subagents: { maxConcurrent: 2, tools: "read-only", maxTokens: 1000 } },
];

// @ts-expect-error not a sandbox kind
const badSandbox: SessionOptions = { sandbox: "vm" };
// @ts-expect-error an MCP server is { command, … } or { url, … }
const badServer: SessionOptions = { mcpServers: { x: { args: ["a"] } } };
// @ts-expect-error children's tools are "read-only" or "all"
const badTools: SessionOptions = { subagents: { tools: "write" } };

test("wrong option values the types refuse are refused at run time too", async () => {
  assert.equal(typed.length, 4);
  for (const bad of [badSandbox, badServer, badTools])
    await assert.rejects(
      createSession({ ...bad, env: {}, apiKey: "k", model: "m", baseURL: "http://127.0.0.1:1/v1" }),
      (e: Error) => e instanceof SettingsError,
      JSON.stringify(bad),
    );
});
