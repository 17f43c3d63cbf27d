// `hands mcp-server` through the official MCP client, over stdio and streamable HTTP, against
// the scripted model server: run_task's answer, files changed (by the file tools and by shell
// commands: created, modified, deleted; ignored files not, a hostile .git/config never run),
// progress, continuing a session
// by its id, cancelling a call mid-run, and refusals (a workspace outside the server's folder,
// unknown arguments, a missing or wrong bearer token).
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { startScriptedServer } from "@hands/llm";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { BIN, cleanEnv, scriptedModelFlags as modelFlags } from "../testing/cli-process.js";
import { scratchFolder, spawnBin } from "../testing/front-ends.js";
import { sandboxFor, TaskInputError } from "./run-task.js";

const scratch = scratchFolder("hands-mcp-server-");

interface TaskResult {
  status: string;
  answer: string;
  sessionId: string;
  filesChanged: { path: string; change: string }[];
  steps: number;
}

test("hands mcp-server (stdio): run_task edits, reports progress and changes, continues a session, cancels", async () => {
  const root = mkdtempSync(join(scratch, "root-"));
  mkdirSync(join(root, "app"));
  const app = join(root, "app");
  writeFileSync(join(app, "gone.txt"), "to be deleted\n");
  writeFileSync(join(app, "keep.txt"), "unchanged\n");
  writeFileSync(join(app, ".gitignore"), "*.log\n");
  // A hostile repository's config: git would run this on the host (git status reads it).
  const marker = join(scratch, "fsmonitor-ran");
  mkdirSync(join(app, ".git"));
  writeFileSync(join(app, ".git", "config"), `[core]\n\tfsmonitor = "touch ${marker}"\n`);
  const env = cleanEnv(join(scratch, "env-stdio"));
  const model = await startScriptedServer([
    { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "hello.txt", content: "hi\n" } }] },
    { content: "Created hello.txt." },
    { content: "You asked me to create hello.txt." },
    {
      toolCalls: [
        {
          id: "sh1",
          name: "run_command",
          arguments: {
            command:
              "echo made-by-shell > shell.txt && mkdir -p deep/er && echo x > deep/er/n.txt && rm gone.txt && echo more >> hello.txt && echo noise > build.log",
          },
        },
      ],
    },
    { content: "Shell work done." },
    { toolCalls: [{ id: "w2", name: "write_file", arguments: { path: "nope.txt", content: "x" } }] },
    { content: "I could not write it." },
    { content: "Thinking about it for a long time…", chunkSize: 4, stallAfterEvents: 1 },
  ]);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp-server", "--cwd", root, ...modelFlags(model)],
    env: env as Record<string, string>,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => {
    stderr += d;
  });
  const mcp = new Client({ name: "test-host", version: "1.0.0" });
  await mcp.connect(transport);
  try {
    const { tools } = await mcp.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ["run_task"],
    );
    assert.deepEqual(tools[0]!.inputSchema.required, ["task"]);

    const progress: string[] = [];
    const r = await mcp.callTool(
      { name: "run_task", arguments: { task: "create hello.txt", workspace: "app" } },
      undefined,
      {
        onprogress: (p) => progress.push(p.message ?? ""),
      },
    );
    assert.equal(r.isError, false, JSON.stringify(r));
    const out = r.structuredContent as unknown as TaskResult;
    assert.equal(out.status, "done");
    assert.equal(out.answer, "Created hello.txt.");
    assert.deepEqual(out.filesChanged, [{ path: "hello.txt", change: "created" }]);
    assert.equal(readFileSync(join(root, "app", "hello.txt"), "utf8"), "hi\n");
    assert.ok(
      progress.some((m) => /^write_file hello\.txt/.test(m)),
      progress.join(" | "),
    );
    assert.ok(progress.some((m) => /step 1/.test(m)));
    const text = (r.content as { type: string; text: string }[])[0]!.text;
    assert.match(text, /Files changed:\n- hello\.txt \(created\)/);
    assert.match(text, new RegExp(`Session: ${out.sessionId}`));

    // The session id continues the conversation: the model gets the earlier turns.
    const r2 = await mcp.callTool({
      name: "run_task",
      arguments: { task: "what did I ask?", workspace: "app", sessionId: out.sessionId },
    });
    const out2 = r2.structuredContent as unknown as TaskResult;
    assert.equal(out2.sessionId, out.sessionId);
    assert.deepEqual(out2.filesChanged, []);
    assert.match(JSON.stringify(model.requests.at(-1)!.body), /create hello\.txt/);

    // Files a shell command changed are reported too (created, modified, deleted); an ignored
    // one (build.log) is not, nor an untouched one.
    const sh = await mcp.callTool({
      name: "run_task",
      arguments: { task: "do shell work", workspace: "app" },
    });
    const shOut = sh.structuredContent as unknown as TaskResult;
    assert.equal(shOut.status, "done", JSON.stringify(sh));
    assert.equal(readFileSync(join(app, "shell.txt"), "utf8"), "made-by-shell\n");
    assert.deepEqual(shOut.filesChanged, [
      { path: "deep/er/n.txt", change: "created" },
      { path: "gone.txt", change: "deleted" },
      { path: "hello.txt", change: "modified" },
      { path: "shell.txt", change: "created" },
    ]);
    assert.match(
      (sh.content as { text: string }[])[0]!.text,
      /Files changed:\n- deep\/er\/n\.txt \(created\)\n- gone\.txt \(deleted\)/,
    );
    assert.ok(!existsSync(marker), "the workspace's .git/config ran a program on the host");

    // A caller may narrow the approval mode to read-only: the write is refused, nothing changes.
    const ro = await mcp.callTool({
      name: "run_task",
      arguments: { task: "write nope.txt", workspace: "app", approval: "read-only" },
    });
    const roOut = ro.structuredContent as unknown as TaskResult;
    assert.equal(roOut.status, "done");
    assert.deepEqual(roOut.filesChanged, []);
    assert.ok(!existsSync(join(root, "app", "nope.txt")));
    assert.match(JSON.stringify(model.requests.at(-1)!.body), /read-only/);
    const badMode = await mcp.callTool({ name: "run_task", arguments: { task: "x", approval: "yolo" } });
    assert.equal(badMode.isError, true);

    // A call cancelled mid-run (the model's reply stalls) stops the run; the server goes on.
    const controller = new AbortController();
    const started = mcp.callTool(
      { name: "run_task", arguments: { task: "think hard", workspace: "app" } },
      undefined,
      {
        signal: controller.signal,
        onprogress: () => controller.abort(),
      },
    );
    await assert.rejects(started, /abort/i);
    // Refusals are tool errors the caller reads, and the server still answers after the cancel.
    const outside = await mcp.callTool({ name: "run_task", arguments: { task: "x", workspace: scratch } });
    assert.equal(outside.isError, true);
    assert.match(JSON.stringify(outside.content), /outside the folder this server works in/);
    const unknown = await mcp.callTool({ name: "run_task", arguments: { task: "x", yolo: true } });
    assert.equal(unknown.isError, true);
    assert.match(JSON.stringify(unknown.content), /unknown argument yolo/);
    // The cancelled run ended as aborted (its trace says so), not left waiting on the model.
    const traces = join(env.HANDS_DATA_DIR!, "traces");
    const abortedRun = () =>
      readdirSync(traces).some((f) => {
        const t = readFileSync(join(traces, f), "utf8");
        return t.includes('"task":"think hard"') && /"type":"result","status":"aborted"/.test(t);
      });
    const end = Date.now() + 10_000;
    while (!abortedRun()) {
      assert.ok(Date.now() < end, "the cancelled run did not end as aborted");
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await mcp.close();
  }
  assert.doesNotMatch(stderr, /hands mcp-server: .*Error/, stderr);
  await model.close();
});

test("hands mcp-server --http: streamable HTTP behind a bearer token", async () => {
  const root = mkdtempSync(join(scratch, "root-http-"));
  const env = cleanEnv(join(scratch, "env-http"), { HANDS_MCP_TOKEN: "secret-token-for-tests" });
  const model = await startScriptedServer([
    { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "out.md", content: "# out\n" } }] },
    { content: "Wrote out.md." },
  ]);
  const {
    child,
    stderr: errText,
    exited,
  } = spawnBin(["mcp-server", "--http", "0", "--cwd", root, ...modelFlags(model)], env, "ignore");
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on("data", () => {
      const m = /hands mcp-server: (http:\/\/\S+)/.exec(errText());
      if (m) resolve(m[1]!);
    });
    child.on("close", () => reject(new Error(`exited: ${errText()}`)));
  });
  const stderr = errText();
  try {
    assert.doesNotMatch(stderr, /secret-token-for-tests/, "a token from the environment is not printed");
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    for (const auth of [undefined, "Bearer wrong-token-of-same-len", "Basic c2VjcmV0"]) {
      const res = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(auth ? { authorization: auth } : {}),
        },
        body: JSON.stringify(init),
      });
      assert.equal(res.status, 401, `auth ${auth}`);
    }
    const mcp = new Client({ name: "http-host", version: "1.0.0" });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: "Bearer secret-token-for-tests" } },
      }),
    );
    const progress: number[] = [];
    const r = await mcp.callTool({ name: "run_task", arguments: { task: "write out.md" } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    const out = r.structuredContent as unknown as TaskResult;
    assert.equal(out.status, "done", JSON.stringify(r));
    assert.deepEqual(out.filesChanged, [{ path: "out.md", change: "created" }]);
    assert.ok(existsSync(join(root, "out.md")));
    assert.ok(
      progress.length >= 3 && progress.every((p, i) => i === 0 || p > progress[i - 1]!),
      `progress ${progress}`,
    );
    await mcp.close();
  } finally {
    child.kill("SIGTERM");
  }
  assert.equal(await exited, 0, errText());
  await model.close();
});

test("run_task's sandbox: a caller may ask for an isolating one, never for local on an isolating server", () => {
  assert.equal(sandboxFor("bwrap", undefined), undefined);
  assert.equal(sandboxFor("bwrap", "docker"), "docker");
  assert.equal(sandboxFor("local", "bwrap"), "bwrap");
  assert.equal(sandboxFor("local", "local"), undefined);
  assert.throws(() => sandboxFor("bwrap", "local"), TaskInputError);
  assert.throws(() => sandboxFor(undefined, "local"), /unisolated/);
});
