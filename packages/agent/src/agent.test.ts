import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { ModelError, type Provider, ScriptedProvider } from "@hands/llm";
import { createSandbox, type Sandbox } from "@hands/sandbox";
import { Agent, type AgentOptions } from "./agent.js";
import type { AgentEvent } from "./events.js";
import { MAX_TOOL_OUTPUT_CHARS } from "./output-cap.js";
import { readFileTool } from "./tools/read-file.js";
import { runCommandTool } from "./tools/run-command.js";
import type { Tool } from "./tools/types.js";
import { TraceWriter } from "./trace.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Test tools: real Tool objects going through the real registry and scheduler. */
function makeTools(log: string[]): Tool[] {
  const echo: Tool = {
    name: "echo",
    description: "Echo text back.",
    parameters: {
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
      additionalProperties: false,
    },
    readOnly: true,
    async execute(args) {
      return { output: String(args.text) };
    },
  };
  const slowRead: Tool = {
    name: "slow_read",
    description: "A read that takes 150 ms.",
    parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    readOnly: true,
    async execute(args) {
      log.push(`start ${args.id}`);
      await sleep(150);
      log.push(`end ${args.id}`);
      return { output: `read ${args.id}` };
    },
  };
  const slowWrite: Tool = {
    name: "slow_write",
    description: "A write that takes 50 ms.",
    parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    readOnly: false,
    async execute(args) {
      log.push(`start ${args.id}`);
      await sleep(50);
      log.push(`end ${args.id}`);
      return { output: `wrote ${args.id}` };
    },
  };
  const boom: Tool = {
    name: "boom",
    description: "Always throws.",
    parameters: { type: "object", properties: {} },
    readOnly: false,
    async execute() {
      throw new Error("disk on fire");
    },
  };
  const huge: Tool = {
    name: "huge",
    description: "Returns 100,000 characters.",
    parameters: { type: "object", properties: {} },
    readOnly: true,
    async execute() {
      return { output: `HEAD${"x".repeat(100_000)}TAIL` };
    },
  };
  return [echo, slowRead, slowWrite, boom, huge];
}

function setup(provider: Provider, extra: Partial<AgentOptions> = {}) {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "hands-agent-")));
  const outputs = realpathSync(mkdtempSync(join(tmpdir(), "hands-agent-outputs-")));
  const log: string[] = [];
  const agent = new Agent({
    provider,
    workspace,
    tools: makeTools(log),
    createSandbox: async () => {
      throw new Error("no sandbox in these tests");
    },
    outputDir: outputs,
    ...extra,
  });
  const events: AgentEvent[] = [];
  return {
    agent,
    log,
    events,
    workspace,
    onEvent: (e: AgentEvent) => events.push(e),
    cleanup: () => {
      rmSync(workspace, { recursive: true, force: true });
      rmSync(outputs, { recursive: true, force: true });
    },
  };
}

function toolMessages(result: { messages: { role: string; content: string }[] }) {
  return result.messages.filter((m) => m.role === "tool").map((m) => m.content);
}

describe("agent loop", () => {
  test("a final answer ends the run with status done", async () => {
    const t = setup(new ScriptedProvider([{ content: "All good: 42" }]));
    const r = await t.agent.run("what is the answer?", { onEvent: t.onEvent });
    assert.equal(r.status, "done");
    assert.equal(r.answer, "All good: 42");
    assert.equal(r.steps, 1);
    assert.deepEqual(
      t.events.map((e) => e.type),
      ["run_start", "model_request", "model_response", "result"],
    );
    t.cleanup();
  });

  test("tool calls become observations tied to their call ids", async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "echo", arguments: { text: "hi there" } }] },
      { content: "done" },
    ]);
    const t = setup(provider);
    const r = await t.agent.run("echo", { onEvent: t.onEvent });
    assert.equal(r.status, "done");
    assert.equal(r.steps, 2);
    const assistant = r.messages.find((m) => m.role === "assistant" && m.toolCalls?.length);
    const tool = r.messages.find((m) => m.role === "tool");
    assert.ok(assistant?.role === "assistant" && tool?.role === "tool");
    assert.equal(tool.toolCallId, assistant.toolCalls![0]!.id);
    assert.equal(tool.content, "hi there");
    // The second model request saw the observation.
    const second = provider.requests[1]!;
    assert.equal(second.messages.at(-1)?.content, "hi there");
    t.cleanup();
  });

  test("unknown tools, malformed JSON and schema violations become ERROR observations", async () => {
    const t = setup(
      new ScriptedProvider([
        { toolCalls: [{ name: "teleport", arguments: {} }] },
        { toolCalls: [{ name: "echo", arguments: '{"text": "unterminated' }] },
        { toolCalls: [{ name: "echo", arguments: { txt: "typo" } }] },
        { toolCalls: [{ name: "echo", arguments: "[1,2]" }] },
        { content: "gave up" },
      ]),
    );
    const r = await t.agent.run("x");
    assert.equal(r.status, "done");
    const [unknown, badJson, badSchema, notObject] = toolMessages(r);
    assert.match(
      unknown!,
      /^ERROR: unknown tool "teleport"\. Valid tools: echo, slow_read, slow_write, boom, huge/,
    );
    assert.match(badJson!, /^ERROR: the arguments for echo are not valid JSON .*"required":\["text"\]/);
    assert.match(badSchema!, /^ERROR: invalid arguments for echo: .*required property 'text'/);
    assert.match(notObject!, /^ERROR: the arguments for echo must be a JSON object/);
    t.cleanup();
  });

  test("a tool that throws becomes an ERROR observation and the loop goes on", async () => {
    const t = setup(
      new ScriptedProvider([{ toolCalls: [{ name: "boom", arguments: {} }] }, { content: "ok" }]),
    );
    const r = await t.agent.run("x", { onEvent: t.onEvent });
    assert.equal(r.status, "done");
    assert.equal(toolMessages(r)[0], "ERROR: boom failed: disk on fire");
    const end = t.events.find((e) => e.type === "tool_end");
    assert.ok(end?.type === "tool_end" && end.isError);
    t.cleanup();
  });

  test("read-only calls of one turn run in parallel; writes run alone and in order", async () => {
    const t = setup(
      new ScriptedProvider([
        {
          toolCalls: [
            { name: "slow_read", arguments: { id: "a" } },
            { name: "slow_read", arguments: { id: "b" } },
            { name: "slow_write", arguments: { id: "w" } },
            { name: "slow_read", arguments: { id: "c" } },
          ],
        },
        { content: "ok" },
      ]),
    );
    const r = await t.agent.run("x");
    assert.equal(r.status, "done");
    // a and b overlap (both started before either ended: the order proves it, whatever the
    // machine's load); w starts after both ended; c starts after w ended.
    assert.deepEqual(t.log.slice(0, 2).sort(), ["start a", "start b"]);
    assert.deepEqual(t.log.slice(4), ["start w", "end w", "start c", "end c"]);
    assert.deepEqual(toolMessages(r), ["read a", "read b", "wrote w", "read c"]);
    t.cleanup();
  });

  test("the step limit stops the run with status max_steps and says why", async () => {
    const t = setup(
      new ScriptedProvider(() => ({ toolCalls: [{ name: "echo", arguments: { text: "again" } }] })),
      {
        maxSteps: 4,
      },
    );
    const r = await t.agent.run("loop forever");
    assert.equal(r.status, "max_steps");
    assert.equal(r.steps, 4);
    assert.match(r.reason!, /step limit of 4/);
    // Identical calls in a row earn a warning from the third on.
    assert.match(toolMessages(r)[2]!, /same call 3 times in a row/);
    assert.doesNotMatch(toolMessages(r)[1]!, /NOTE/);
    t.cleanup();
  });

  test("identical calls in a row earn a note on the third, then each time the count doubles", async () => {
    const t = setup(
      new ScriptedProvider(() => ({ toolCalls: [{ name: "echo", arguments: { text: "again" } }] })),
      { maxSteps: 13 },
    );
    const r = await t.agent.run("loop forever");
    const noted = toolMessages(r).flatMap((m, i) => (/NOTE: the same call/.test(m) ? [i + 1] : []));
    assert.deepEqual(noted, [3, 6, 12]);
    assert.match(toolMessages(r)[11]!, /same call 12 times in a row/);
    t.cleanup();
  });

  test("the orientation goes before the task until a tool has shown the code, and is never stored", async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "echo", arguments: { text: "first" } }] },
      { toolCalls: [{ name: "read_file", arguments: { path: "missing.txt" } }] },
      { toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }] },
      { content: "done" },
    ]);
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), "hands-agent-orient-")));
    writeFileSync(join(workspace, "a.txt"), "alpha\n");
    const agent = new Agent({
      provider,
      workspace,
      tools: [...makeTools([]), readFileTool],
      createSandbox: async () => {
        throw new Error("no sandbox in these tests");
      },
      orientation: "Repository map: a.txt",
    });
    const r = await agent.run("fix a");
    assert.equal(r.status, "done");
    const taskText = (i: number) => provider.requests[i]!.messages.find((m) => m.role === "user")!.content;
    // Before the task, outside the system prompt (the cached prefix stays the same).
    assert.equal(taskText(0), "Repository map: a.txt\n\nfix a");
    assert.doesNotMatch(provider.requests[0]!.messages[0]!.content, /Repository map/);
    // An echo and a failed read showed no code: still there; a read that answered: gone.
    assert.equal(taskText(1), taskText(0));
    assert.equal(taskText(2), taskText(0));
    assert.equal(taskText(3), "fix a");
    // The history (what a session keeps and memory stores) has the task alone.
    assert.equal(r.messages.find((m) => m.role === "user")!.content, "fix a");
    rmSync(workspace, { recursive: true, force: true });
  });

  test("the orientation rides in the first three requests at most when no tool shows the code", async () => {
    const provider = new ScriptedProvider(() => ({
      toolCalls: [{ name: "echo", arguments: { text: "again" } }],
    }));
    const t = setup(provider, { maxSteps: 5, orientation: "Repository map: a.txt" });
    await t.agent.run("loop");
    const oriented = provider.requests.map((q) =>
      /^Repository map/.test(q.messages.find((m) => m.role === "user")!.content),
    );
    assert.deepEqual(oriented, [true, true, true, false, false]);
    t.cleanup();
  });

  test("the token budget stops the run", async () => {
    const t = setup(
      new ScriptedProvider(() => ({
        toolCalls: [{ name: "echo", arguments: { text: "x" } }],
        usage: { inputTokens: 600, outputTokens: 100 },
      })),
      { maxTokens: 2000 },
    );
    const r = await t.agent.run("x");
    assert.equal(r.status, "token_budget");
    assert.equal(r.steps, 3);
    assert.equal(r.usage.inputTokens, 1800);
    t.cleanup();
  });

  test("an abort during the model call ends with status aborted", async () => {
    const slow: Provider = {
      name: "slow",
      model: "slow",
      complete: (req) =>
        new Promise((_, reject) => {
          req.signal?.addEventListener("abort", () => reject(new Error("aborted")));
        }),
    };
    const t = setup(slow);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const r = await t.agent.run("x", { signal: controller.signal });
    assert.equal(r.status, "aborted");
    t.cleanup();
  });

  test("a model failure ends with status error and the provider's message", async () => {
    const failing: Provider = {
      name: "failing",
      model: "m",
      complete: async () => {
        throw new ModelError("HTTP 500 from http://127.0.0.1:1/v1 after 4 attempts", 500);
      },
    };
    const t = setup(failing);
    const r = await t.agent.run("x");
    assert.equal(r.status, "error");
    assert.match(r.reason!, /HTTP 500 .* after 4 attempts/);
    t.cleanup();
  });

  test("empty replies are nudged, then accepted", async () => {
    const provider = new ScriptedProvider([{ content: "" }, { content: "the answer" }]);
    const t = setup(provider);
    const r = await t.agent.run("x");
    assert.equal(r.status, "done");
    assert.equal(r.answer, "the answer");
    assert.match(provider.requests[1]!.messages.at(-1)!.content, /Your reply was empty/);
    t.cleanup();
  });

  test("huge outputs are capped with head and tail, and saved in full where the model can read them", async () => {
    const t = setup(
      new ScriptedProvider([{ toolCalls: [{ name: "huge", arguments: {} }] }, { content: "ok" }]),
    );
    const r = await t.agent.run("x", { onEvent: t.onEvent });
    const out = toolMessages(r)[0]!;
    assert.ok(out.length <= MAX_TOOL_OUTPUT_CHARS, `capped output is ${out.length} chars`);
    assert.ok(out.startsWith("HEAD") && out.endsWith("TAIL"));
    const end = t.events.find((e) => e.type === "tool_end");
    assert.ok(end?.type === "tool_end" && end.truncated && end.fullOutputPath);
    assert.equal(end.resultChars, 100_008);
    assert.ok(out.includes(end.fullOutputPath));
    assert.equal(readFileSync(end.fullOutputPath, "utf8").length, 100_008);
    t.cleanup();
  });

  test("the model can page through a saved full output with read_file, but not other runs' outputs", async () => {
    let savedPath = "";
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "huge", arguments: {} }] },
      (req) => {
        savedPath = /saved at (\S+);/.exec(req.messages.at(-1)!.content)![1]!;
        return { toolCalls: [{ name: "read_file", arguments: { path: savedPath, limit: 1 } }] };
      },
      (req) => {
        const other = join(savedPath, "..", "..", "another-run", "x.txt");
        assert.match(req.messages.at(-1)!.content, /^HEADxxxx/);
        return { toolCalls: [{ name: "read_file", arguments: { path: other } }] };
      },
      { content: "done" },
    ]);
    const t = setup(provider, { tools: [...makeTools([]), readFileTool] });
    const r = await t.agent.run("x");
    assert.equal(r.status, "done");
    assert.match(toolMessages(r)[2]!, /^ERROR: path is outside the workspace/);
    t.cleanup();
  });

  test("the sandbox is created on the first command only, and destroyed when the run ends", async () => {
    const created: Sandbox[] = [];
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), "hands-agent-sbx-")));
    const agent = new Agent({
      provider: new ScriptedProvider([
        { toolCalls: [{ name: "echo", arguments: { text: "no sandbox needed" } }] },
        { toolCalls: [{ name: "run_command", arguments: { command: "echo from-the-sandbox" } }] },
        { toolCalls: [{ name: "run_command", arguments: { command: "echo again" } }] },
        { content: "done" },
      ]),
      workspace,
      tools: [...makeTools([]), runCommandTool],
      createSandbox: async () => {
        const s = await createSandbox({ kind: "local", workspace });
        created.push(s);
        return s;
      },
    });
    const r = await agent.run("x");
    assert.equal(r.status, "done");
    assert.match(toolMessages(r)[1]!, /from-the-sandbox/);
    assert.equal(created.length, 1, "one session for the whole task");
    await assert.rejects(created[0]!.exec("echo after"), /destroyed/);
    rmSync(workspace, { recursive: true, force: true });
  });

  test("a command's output reaches live views as it comes (tool_output before tool_end), not the trace", async () => {
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), "hands-agent-live-")));
    const agent = new Agent({
      provider: new ScriptedProvider([
        {
          toolCalls: [
            { name: "run_command", arguments: { command: "echo early; sleep 0.3; echo late >&2" } },
          ],
        },
        { content: "done" },
      ]),
      workspace,
      tools: [runCommandTool],
      createSandbox: () => createSandbox({ kind: "local", workspace }),
    });
    const seen: { type: string; at: number; text?: string; stream?: string }[] = [];
    const trace = new TraceWriter(join(workspace, "trace.jsonl"));
    await agent.run("x", {
      onEvent: (e) => {
        trace.write(e);
        if (e.type === "tool_output")
          seen.push({ type: e.type, at: performance.now(), text: e.text, stream: e.stream });
        if (e.type === "tool_end") seen.push({ type: e.type, at: performance.now() });
      },
    });
    trace.close();
    const early = seen.find((s) => s.text?.includes("early"));
    const end = seen.find((s) => s.type === "tool_end")!;
    assert.ok(early && early.stream === "stdout", JSON.stringify(seen));
    assert.ok(end.at - early.at >= 200, "the first line came while the command still ran");
    assert.ok(seen.some((s) => s.stream === "stderr" && s.text?.includes("late")));
    assert.doesNotMatch(readFileSync(trace.path, "utf8"), /"tool_output"/);
    rmSync(workspace, { recursive: true, force: true });
  });

  test("the trace records every step as JSONL, ending with the result", async () => {
    const t = setup(
      new ScriptedProvider([{ toolCalls: [{ name: "echo", arguments: { text: "t" } }] }, { content: "fin" }]),
    );
    const trace = new TraceWriter(join(t.workspace, "trace", "run.jsonl"));
    await t.agent.run("x", { onEvent: trace.write });
    trace.close();
    const lines = readFileSync(trace.path, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.type),
      [
        "run_start",
        // Each request's new messages, written once, just before the request that sent them.
        "message",
        "message",
        "model_request",
        "model_response",
        "tool_start",
        "tool_end",
        "message",
        "message",
        "model_request",
        "model_response",
        "result",
      ],
    );
    assert.deepEqual(lines[3].sent, [[1, 2]]);
    assert.deepEqual(lines[9].sent, [[1, 4]]);
    const toolEnd = lines[6];
    assert.equal(toolEnd.name, "echo");
    assert.equal(typeof toolEnd.durationMs, "number");
    assert.equal(lines.at(-1).status, "done");
    t.cleanup();
  });
});
