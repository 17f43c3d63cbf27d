// Tools a session cannot use are not sent: each rule seen in the first request a real session
// sends to the scripted model server over HTTP, and the rules themselves on their own.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { builtinTools, type Tool } from "@hands/agent";
import { type ScriptedServer, type ServerTurn, startScriptedServer } from "@hands/llm";
import { createSession, type SessionOptions } from "./index.js";
import { sandboxHasPython, usableTools } from "./session-tools.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-session-tools-")));
const servers: ScriptedServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
  rmSync(scratch, { recursive: true, force: true });
});

const ALL = builtinTools().map((t) => t.name);
const WRITES = ["write_file", "edit_file", "run_command", "execute_python"];

/** One request of a real session; what the model was offered: tool names and system prompt. */
async function firstRequest(extra: Partial<SessionOptions>, script: ServerTurn[] = [{ content: "done" }]) {
  const server = await startScriptedServer(script);
  servers.push(server);
  const home = mkdtempSync(join(scratch, "case-"));
  const workspace = join(home, "ws");
  mkdirSync(workspace);
  const session = await createSession({
    workspace,
    baseURL: server.url,
    apiKey: "sk-test",
    model: "scripted-model",
    dataDir: join(home, "data"),
    env: {},
    sandbox: "local",
    memory: false,
    ...extra,
  });
  try {
    const result = await session.run("say done");
    assert.equal(result.status, "done");
  } finally {
    await session.close();
  }
  const chat = server.requests.filter((r) => r.path.endsWith("/chat/completions"));
  assert.equal(chat.length, script.length);
  const body = chat[0]!.body;
  const tool = chat.at(-1)!.body.messages.find((m: { role: string }) => m.role === "tool");
  return {
    tools: (body.tools as { function: { name: string } }[]).map((t) => t.function.name),
    system: body.messages[0].content as string,
    /** What the model was told of its first tool call, if it made one. */
    result: tool?.content as string | undefined,
    workspace,
  };
}

/** `dir` holding a file `name` with these permission bits. */
function binDir(name: string, mode: number): string {
  const dir = mkdtempSync(join(scratch, "bin-"));
  writeFileSync(join(dir, name), "#!/bin/sh\n");
  chmodSync(join(dir, name), mode);
  return dir;
}

/** Runs `fn` with process.env.PATH set to `path` (the local backend's commands use it). */
async function withPath<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const saved = process.env.PATH;
  process.env.PATH = path;
  try {
    return await fn();
  } finally {
    process.env.PATH = saved;
  }
}

test("approval auto offers every built-in tool, and the prompt names the ones that write and run", async () => {
  const { tools, system } = await withPath(binDir("python3", 0o755), () =>
    firstRequest({ approval: "auto" }),
  );
  assert.deepEqual(tools, ALL);
  assert.match(system, /run_command/);
  assert.match(system, /edit_file/);
});

test("approval read-only: tools that would be refused (writes, commands) are not sent, nor named in the prompt", async () => {
  const { tools, system } = await firstRequest({ approval: "read-only" });
  assert.deepEqual(
    tools,
    ALL.filter((n) => !WRITES.includes(n)),
  );
  for (const name of WRITES) assert.ok(!system.includes(name), `the prompt names ${name}:\n${system}`);
});

test("approval read-only: a model calling write_file anyway is told why it is not there; nothing is written", async () => {
  const { result, workspace } = await firstRequest({ approval: "read-only" }, [
    { toolCalls: [{ name: "write_file", arguments: { path: "x.txt", content: "x" } }] },
    { content: "done" },
  ]);
  assert.match(result!, /^ERROR: write_file is not available in this session: the session is read-only/);
  assert.match(result!, /Valid tools: read_file, list_dir/);
  assert.ok(!existsSync(join(workspace, "x.txt")));
});

test("no python3 where the local sandbox runs commands: execute_python is not sent; run_command still is", async () => {
  // python3 present but not executable does not count.
  const { tools } = await withPath(binDir("python3", 0o644), () => firstRequest({}));
  assert.ok(!tools.includes("execute_python"), tools.join(", "));
  assert.ok(tools.includes("run_command"));
  const withPython = await withPath(binDir("python3", 0o755), () => firstRequest({}));
  assert.ok(withPython.tools.includes("execute_python"));
  const called = await withPath(binDir("python3", 0o644), () =>
    firstRequest({}, [
      { toolCalls: [{ name: "execute_python", arguments: { code: "print(1)" } }] },
      { content: "done" },
    ]),
  );
  assert.match(
    called.result!,
    /^ERROR: execute_python is not available in this session: python3 was not found/,
  );
});

test("memory off: no recall tool; memory on: recall is offered", async () => {
  assert.ok(!(await firstRequest({ memory: false })).tools.includes("recall"));
  assert.ok((await firstRequest({ memory: true })).tools.includes("recall"));
});

test("usableTools: read-only keeps only read-only tools (any source, e.g. MCP), in order", () => {
  const mcp = { name: "mcp__db__query", description: "", parameters: {}, readOnly: false } as unknown as Tool;
  const mcpRead = { ...mcp, name: "mcp__db__schema", readOnly: true } as Tool;
  const all = [...builtinTools(), mcp, mcpRead];
  assert.deepEqual(
    usableTools(all, { approval: "read-only", python: true }).map((t) => t.name),
    [...ALL.filter((n) => !WRITES.includes(n)), "mcp__db__schema"],
  );
  assert.deepEqual(
    usableTools(all, { approval: "ask", python: true }).map((t) => t.name),
    all.map((t) => t.name),
  );
  assert.deepEqual(
    usableTools(all, { approval: "auto", python: false }).map((t) => t.name),
    all.map((t) => t.name).filter((n) => n !== "execute_python"),
  );
});

test("sandboxHasPython: local reads PATH (an executable file only), bwrap the system folders, docker and e2b count as yes", () => {
  const yes = binDir("python3", 0o755);
  const notExecutable = binDir("python3", 0o644);
  const folder = mkdtempSync(join(scratch, "bin-"));
  mkdirSync(join(folder, "python3"));
  assert.equal(sandboxHasPython("local", { PATH: yes }), true);
  assert.equal(sandboxHasPython("local", { PATH: `${notExecutable}:${folder}` }), false);
  assert.equal(sandboxHasPython("local", {}), false);
  assert.equal(sandboxHasPython("local", { PATH: `/nonexistent:${yes}` }), true);
  assert.equal(sandboxHasPython("docker", {}), true);
  assert.equal(sandboxHasPython("e2b", {}), true);
  // This machine's bubblewrap sandbox mounts /usr/bin, where python3 is installed.
  assert.equal(sandboxHasPython("bwrap", {}), true);
  assert.equal(sandboxHasPython("auto", { PATH: yes }), true);
});
