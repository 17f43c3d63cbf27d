// Model routing against the scripted model server: each role's requests go out under its model
// name — chat for a plain-chat first step, the executor for code work, the strong model after
// repeated failures (and back once a call succeeds), the subagent model for the task tool's
// children, the planner for a planning request — and every choice is in the trace.
import assert from "node:assert/strict";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import {
  type RecordedHttpRequest,
  type ScriptedServer,
  type ServerTurn,
  startScriptedServer,
} from "@hands/llm";
import { createSession, type SessionOptions } from "./index.js";
import { openSession } from "./session.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-route-")));
after(() => rmSync(scratch, { recursive: true, force: true }));
const servers: ScriptedServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

async function setup(script: (req: RecordedHttpRequest, index: number) => ServerTurn) {
  const server = await startScriptedServer(script);
  servers.push(server);
  const home = mkdtempSync(join(scratch, "case-"));
  const workspace = join(home, "ws");
  mkdirSync(workspace);
  writeFileSync(join(workspace, "a.txt"), "AAA\n");
  const options: SessionOptions = {
    workspace,
    baseURL: server.url,
    apiKey: "sk-test",
    model: "base-model",
    dataDir: join(home, "data"),
    env: {},
    memory: false,
    save: false,
  };
  return { server, home, workspace, options };
}
const models = (s: ScriptedServer) =>
  s.requests.filter((r) => r.path.endsWith("/chat/completions")).map((r) => r.body.model as string);

test("chat, executor, escalation to the strong model and back; each choice in the trace", async () => {
  const turns: ServerTurn[] = [
    { content: "Hello! I am fine." },
    // "fix the bug in a.txt": two failing reads, then the strong model reads the right file.
    { toolCalls: [{ name: "read_file", arguments: { path: "missing-1.txt" } }] },
    { toolCalls: [{ name: "read_file", arguments: { path: "missing-2.txt" } }] },
    { toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }] },
    { content: "fixed" },
  ];
  const { server, options } = await setup((_r, i) => turns[i] ?? { content: "?" });
  const session = await createSession({
    ...options,
    models: { chat: "chat-model", executor: "code-model", strong: "strong-model", escalateAfter: 2 },
  });
  const choices: { model: string; role: string; reason: string }[] = [];
  try {
    await session.run("hello, how are you today?", {
      onEvent: (e) => e.type === "model_choice" && choices.push(e),
    });
    await session.run("fix the bug in a.txt", {
      onEvent: (e) => e.type === "model_choice" && choices.push(e),
    });
  } finally {
    await session.close();
  }
  assert.deepEqual(models(server), ["chat-model", "code-model", "code-model", "strong-model", "code-model"]);
  assert.deepEqual(
    choices.map((c) => c.role),
    ["chat", "executor", "executor", "strong", "executor"],
  );
  assert.equal(choices[3]!.reason, "2 failed tool calls in a row");
});

test("the trace records every model choice", async () => {
  const { server, options, home } = await setup(() => ({ content: "hi" }));
  const session = await createSession({ ...options, models: { chat: "chat-model", executor: "code-model" } });
  try {
    await session.run("hi there");
  } finally {
    await session.close();
  }
  assert.deepEqual(models(server), ["chat-model"]);
  const dir = join(home, "data", "traces");
  const trace = readdirSync(dir).find((f) => f.endsWith(".jsonl"))!;
  const lines = readFileSync(join(dir, trace), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const choice = lines.find((l) => l.type === "model_choice");
  assert.equal(choice.model, "chat-model");
  assert.equal(choice.role, "chat");
});

test("the subagent role: the task tool's children ask under the subagent model", async () => {
  const { server, options } = await setup((req) => {
    const child = /You are a sub-agent/.test(req.body.messages[0].content);
    if (child) return { content: "child report" };
    const toolMsgs = req.body.messages.filter((m: { role: string }) => m.role === "tool");
    return toolMsgs.length
      ? { content: "done" }
      : { toolCalls: [{ name: "task", arguments: { prompt: "look" } }] };
  });
  const session = await createSession({ ...options, subagents: true, models: { subagent: "sub-model" } });
  try {
    assert.equal((await session.run("survey the code")).answer, "done");
  } finally {
    await session.close();
  }
  assert.deepEqual(models(server), ["base-model", "sub-model", "base-model"]);
});

test("the planner role: a planning request asks under the planner model; bad roles are errors", async () => {
  const { server, options, workspace, home } = await setup(() => ({ content: "- [ ] step" }));
  const session = await openSession({
    workspace,
    flags: {
      baseUrl: server.url,
      apiKey: "k",
      model: "base-model",
      models: { planner: "plan-model" },
      sandbox: "bwrap",
    },
    env: {},
    configFiles: false,
    approvalDefault: "auto",
    save: false,
    dataDir: join(home, "data"),
  });
  try {
    await session.run("make a plan", { readOnly: true, role: "planner" });
    await session.run("now do it");
  } finally {
    await session.close();
  }
  assert.deepEqual(models(server), ["plan-model", "base-model"]);
  await assert.rejects(
    createSession({ ...options, models: { strnog: "x" } as never }),
    /unknown role "strnog" \(did you mean "strong"\?\)/,
  );
  await assert.rejects(
    createSession({ ...options, models: { chat: "" } }),
    /models\.chat must be a model name|chat must be a model name/,
  );
});

test("the summarizer role: memory's model summaries (here a /compact) ask under the summarizer model", async () => {
  const SUMMARY = "SUMMARY-4b1d: the user asked for a.txt, it holds AAA";
  const { server, workspace, home } = await setup((req) => {
    const system = String(req.body.messages[0]?.content ?? "");
    if (/^Summarize the notes for an agent's memory/.test(system)) {
      // A summary request carries the conversation's notes, not tools.
      const notes = String(req.body.messages[1]?.content ?? "");
      if (!/read a\.txt/.test(notes)) return { status: 400, errorMessage: `no notes to summarize: ${notes}` };
      return { content: SUMMARY };
    }
    return { content: "a.txt holds AAA" };
  });
  const session = await openSession({
    workspace,
    flags: {
      baseUrl: server.url,
      apiKey: "k",
      model: "base-model",
      models: { summarizer: "sum-model" },
      memory: true,
      sandbox: "local",
    },
    env: {},
    configFiles: false,
    approvalDefault: "auto",
    save: false,
    dataDir: join(home, "data"),
    report: () => {},
  });
  let compacted: string | undefined;
  try {
    assert.equal((await session.run("read a.txt")).status, "done");
    compacted = await session.memory?.compact();
  } finally {
    await session.close();
  }
  const calls = server.requests
    .filter((r) => r.path.endsWith("/chat/completions"))
    .map((r) => ({ model: r.body.model as string, summary: /^Summarize/.test(r.body.messages[0].content) }));
  assert.deepEqual(calls, [
    { model: "base-model", summary: false },
    { model: "sum-model", summary: true },
  ]);
  // The model's summary is what memory kept (not the extractive fall-back).
  assert.ok(compacted?.includes(SUMMARY), compacted);
});
