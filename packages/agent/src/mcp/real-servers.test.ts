// Hands against the reference MCP servers as published on npm (@modelcontextprotocol/
// server-everything and server-filesystem, pinned devDependencies), started the way a user's
// config starts them (node + the package's bin), with no network at test time.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createProvider, startScriptedServer } from "@hands/llm";
import { createSandbox } from "@hands/sandbox";
import { Agent } from "../agent.js";
import { makeTestContext } from "../tools/test-context.js";
import type { Tool } from "../tools/types.js";
import { connectMcpServers, type McpConnection } from "./client.js";

/** The bin of an installed server package (node_modules of this workspace or the repo root). */
function serverBin(pkg: string): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const bin = join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js");
    if (existsSync(bin)) return bin;
  }
  throw new Error(`@modelcontextprotocol/${pkg} is not installed (npm ci)`);
}

const toolOf = (conn: McpConnection, name: string): Tool => {
  const t = conn.tools.find((x) => x.name === name);
  assert.ok(t, `no tool ${name} in ${conn.tools.map((x) => x.name).join(", ")}`);
  return t;
};

describe("@modelcontextprotocol/server-everything", () => {
  let conn: McpConnection;
  const { ctx } = makeTestContext({ workspace: tmpdir() });
  before(async () => {
    conn = await connectMcpServers({
      everything: {
        command: process.execPath,
        args: [serverBin("server-everything"), "stdio"],
        timeoutMs: 1_000,
      },
    });
    assert.deepEqual(conn.errors, []);
  });
  after(() => conn.close());

  test("its tools are listed and answer", async () => {
    const names = conn.tools.map((t) => t.name);
    for (const n of ["echo", "get-sum", "get-resource-links", "get-resource-reference", "get-tiny-image"])
      assert.ok(names.includes(`mcp__everything__${n}`), `${n} in ${names.join(", ")}`);
    assert.equal(
      (await toolOf(conn, "mcp__everything__echo").execute({ message: "hi" }, ctx)).output,
      "Echo: hi",
    );
    assert.equal(
      (await toolOf(conn, "mcp__everything__get-sum").execute({ a: 2, b: 40 }, ctx)).output,
      "The sum of 2 and 40 is 42.",
    );
    // Its own argument checking comes back as an error the model can read.
    const bad = await toolOf(conn, "mcp__everything__get-sum").execute({ a: "two", b: 1 }, ctx);
    assert.equal(bad.isError, true);
    assert.match(bad.output, /^ERROR: /);
  });

  test("resource_link and embedded resource results keep their URIs", async () => {
    // (The server labels its odd links "Blob" but gives them a text/plain type: its data, as sent.)
    const links = await toolOf(conn, "mcp__everything__get-resource-links").execute({ count: 2 }, ctx);
    assert.equal(
      links.output,
      [
        "Here are 2 resource links to resources available in this server:",
        '[resource link "Blob Resource 1": demo://resource/dynamic/blob/1 (text/plain, Resource 1: plaintext resource)]',
        '[resource link "Text Resource 2": demo://resource/dynamic/text/2 (text/plain, Resource 2: plaintext resource)]',
      ].join("\n"),
    );
    const ref = await toolOf(conn, "mcp__everything__get-resource-reference").execute(
      { resourceType: "Text", resourceId: 3 },
      ctx,
    );
    assert.match(
      ref.output,
      /^Returning resource reference for Resource 3:\n\[resource demo:\/\/resource\/dynamic\/text\/3 \(text\/plain\)\]\n\S/,
    );
    assert.match(
      ref.output,
      /You can access this resource using the URI: demo:\/\/resource\/dynamic\/text\/3$/,
    );
    const image = await toolOf(conn, "mcp__everything__get-tiny-image").execute({}, ctx);
    assert.match(image.output, /\[image image\/png, \d+ bytes\]/);
    assert.doesNotMatch(image.output, /[A-Za-z0-9+/]{200}/, "no base64 in what the model reads");
  });

  test("a long operation over timeoutMs is cancelled and the server keeps answering", async () => {
    const started = Date.now();
    const r = await toolOf(conn, "mcp__everything__trigger-long-running-operation").execute(
      { duration: 30, steps: 3 },
      ctx,
    );
    assert.ok(Date.now() - started < 4_000);
    assert.match(
      r.output,
      /^ERROR: trigger-long-running-operation on MCP server everything did not finish within 1 s/,
    );
    assert.doesNotMatch(r.output, /stopped/);
    assert.equal(
      (await toolOf(conn, "mcp__everything__echo").execute({ message: "again" }, ctx)).output,
      "Echo: again",
    );
  });

  test("more than 10 calls in one request, through the agent loop, emit no MaxListenersExceededWarning", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    const calls = Array.from({ length: 15 }, (_, i) => ({
      name: "mcp__everything__echo",
      arguments: { message: `m${i}` },
    }));
    const server = await startScriptedServer([{ toolCalls: calls }, { content: "all echoed" }]);
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), "hands-mcp-agent-")));
    try {
      const agent = new Agent({
        provider: createProvider({
          provider: "openai",
          model: "scripted-model",
          baseURL: server.url,
          apiKey: "k",
        }),
        workspace,
        tools: conn.tools,
        createSandbox: () => createSandbox({ kind: "local", workspace }),
      });
      const results: string[] = [];
      const r = await agent.run("echo fifteen times", {
        onEvent: (e) => {
          if (e.type === "tool_end") results.push((e as { output?: string }).output ?? "");
        },
      });
      assert.equal(r.status, "done");
      assert.equal(r.answer, "all echoed");
      // The model's second request carries all 15 observations, in order.
      const toolMessages = server.requests[1]!.body.messages.filter(
        (m: { role: string }) => m.role === "tool",
      );
      assert.deepEqual(
        toolMessages.map((m: { content: string }) => m.content),
        calls.map((_, i) => `Echo: m${i}`),
      );
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message),
        [],
      );
    } finally {
      process.off("warning", onWarning);
      await server.close();
      rmSync(workspace, { recursive: true, force: true });
    }
  });
});

describe("@modelcontextprotocol/server-filesystem", () => {
  let conn: McpConnection;
  let root: string;
  let outside: string;
  const { ctx } = makeTestContext({ workspace: tmpdir() });
  before(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "hands-mcp-fs-")));
    outside = realpathSync(mkdtempSync(join(tmpdir(), "hands-mcp-outside-")));
    writeFileSync(join(root, "notes.txt"), "first line\nsecond line\n");
    writeFileSync(join(outside, "secret.txt"), "do not read");
    conn = await connectMcpServers({
      fs: { command: process.execPath, args: [serverBin("server-filesystem"), root] },
    });
    assert.deepEqual(conn.errors, []);
  });
  after(async () => {
    await conn.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  test("reads, lists and writes inside its allowed folder", async () => {
    const read = await toolOf(conn, "mcp__fs__read_text_file").execute(
      { path: join(root, "notes.txt") },
      ctx,
    );
    assert.equal(read.output, "first line\nsecond line\n");
    const write = await toolOf(conn, "mcp__fs__write_file").execute(
      { path: join(root, "new.txt"), content: "written through MCP" },
      ctx,
    );
    assert.equal(write.isError, undefined, write.output);
    assert.equal(readFileSync(join(root, "new.txt"), "utf8"), "written through MCP");
    const list = await toolOf(conn, "mcp__fs__list_directory").execute({ path: root }, ctx);
    assert.match(list.output, /\[FILE\] new\.txt/);
    assert.match(list.output, /\[FILE\] notes\.txt/);
  });

  test("a path outside its allowed folder is an error result, not an exception", async () => {
    const r = await toolOf(conn, "mcp__fs__read_text_file").execute(
      { path: join(outside, "secret.txt") },
      ctx,
    );
    assert.equal(r.isError, true);
    assert.match(r.output, /^ERROR: .*(outside allowed|Access denied)/i);
    assert.doesNotMatch(r.output, /do not read/);
  });
});
