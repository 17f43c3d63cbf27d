// Sub-agents (the task tool) through the SDK against the scripted model server: children run in
// parallel (their requests overlap in time), see only read-only tools when they explore, fail
// without ending the parent, stop with the parent's abort, count in the parent's token budget,
// and each writes a trace the parent's links to.
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
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

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-sub-")));
after(() => rmSync(scratch, { recursive: true, force: true }));
const servers: ScriptedServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

type Script = (req: RecordedHttpRequest, role: "parent" | "child", task: string) => ServerTurn;

/** A server answering parent and child requests apart (a child's system prompt says it is one). */
async function setup(script: Script) {
  const arrivals: { role: string; task: string; at: number }[] = [];
  const server = await startScriptedServer((req) => {
    const messages = req.body?.messages ?? [];
    const system = messages[0]?.content ?? "";
    const role = /You are a sub-agent/.test(system) ? "child" : "parent";
    const task = messages.find((m: { role: string }) => m.role === "user")?.content ?? "";
    arrivals.push({ role, task, at: performance.now() });
    return script(req, role, task);
  });
  servers.push(server);
  const home = mkdtempSync(join(scratch, "case-"));
  const workspace = join(home, "ws");
  mkdirSync(workspace);
  writeFileSync(join(workspace, "a.txt"), "AAA\n");
  const options: SessionOptions = {
    workspace,
    baseURL: server.url,
    apiKey: "sk-test",
    model: "scripted-model",
    dataDir: join(home, "data"),
    env: {},
    memory: false,
    save: false,
    subagents: { maxConcurrent: 3 },
  };
  return { server, arrivals, home, workspace, options };
}

const task = (prompt: string, extra: Record<string, unknown> = {}) => ({
  name: "task",
  arguments: { description: prompt.slice(0, 20), prompt, ...extra },
});
const toolResults = (req: RecordedHttpRequest): string[] =>
  req.body.messages
    .filter((m: { role: string }) => m.role === "tool")
    .map((m: { content: string }) => m.content);

test("three explorers run at once; each sees only read-only tools; the parent gets their reports", async () => {
  const DELAY = 600;
  let parentTurn = 0;
  const childTools: string[][] = [];
  const { server, arrivals, options } = await setup((req, role, t) => {
    if (role === "child") {
      childTools.push(req.body.tools.map((x: { function: { name: string } }) => x.function.name));
      return { content: `report on ${t}`, delayMs: DELAY };
    }
    parentTurn++;
    if (parentTurn === 1)
      return { toolCalls: [task("explore src"), task("explore docs"), task("explore tests")] };
    return { content: "summary" };
  });
  const events: { type: string; tracePath?: string; runId?: string }[] = [];
  const session = await createSession(options);
  try {
    const started = performance.now();
    const result = await session.run("survey the repo", { onEvent: (e) => events.push(e as never) });
    const wall = performance.now() - started;
    assert.equal(result.status, "done");
    const children = arrivals.filter((a) => a.role === "child");
    assert.equal(children.length, 3);
    // Overlap: every child request arrived before the first one was answered.
    const first = Math.min(...children.map((c) => c.at));
    const last = Math.max(...children.map((c) => c.at));
    assert.ok(last - first < DELAY, `the children's requests spread over ${last - first} ms`);
    assert.ok(wall < 3 * DELAY, `took ${wall} ms: not parallel`);
    for (const tools of childTools) {
      assert.ok(tools.includes("read_file") && tools.includes("grep"), tools.join(","));
      for (const w of ["write_file", "edit_file", "run_command", "task"])
        assert.ok(!tools.includes(w), tools.join(","));
    }
    const parentSecond = server.requests.filter((r) => r.path.endsWith("/chat/completions")).at(-1)!;
    assert.deepEqual(toolResults(parentSecond), [
      "report on explore src",
      "report on explore docs",
      "report on explore tests",
    ]);
    // Linked traces: each child's trace exists and holds its whole run.
    const starts = events.filter((e) => e.type === "subagent_start");
    assert.equal(starts.length, 3);
    for (const s of starts) {
      assert.ok(s.tracePath && existsSync(s.tracePath), s.tracePath);
      const lines = readFileSync(s.tracePath!, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      assert.equal(lines[0].type, "run_start");
      assert.equal(lines[0].runId, s.runId);
      assert.equal(lines.at(-1).type, "result");
    }
    assert.equal(events.filter((e) => e.type === "subagent_end").length, 3);
    // The parent's usage covers its children's.
    const childTokens = events
      .filter((e) => e.type === "subagent_end")
      .reduce((n, e) => n + ((e as never as { usage: { inputTokens: number } }).usage.inputTokens ?? 0), 0);
    assert.ok(result.usage.inputTokens > childTokens, `${result.usage.inputTokens} ≤ ${childTokens}`);
  } finally {
    await session.close();
  }
});

test("a failing child is reported as that call's error; its sibling's report and the parent go on", async () => {
  let parentTurn = 0;
  const { server, options } = await setup((_req, role, t) => {
    if (role === "child")
      return t === "bad" ? { status: 400, errorMessage: "model refuses this prompt" } : { content: "fine" };
    parentTurn++;
    return parentTurn === 1 ? { toolCalls: [task("bad"), task("good")] } : { content: "handled" };
  });
  const session = await createSession(options);
  try {
    const result = await session.run("go");
    assert.equal(result.status, "done");
    assert.equal(result.answer, "handled");
    const last = server.requests.filter((r) => r.path.endsWith("/chat/completions")).at(-1)!;
    const [bad, good] = toolResults(last);
    assert.match(
      bad!,
      /^ERROR: the sub-agent did not finish \(error\): model call failed: .*model refuses this prompt/,
    );
    assert.equal(good, "fine");
  } finally {
    await session.close();
  }
});

test("aborting the parent aborts its children at once", async () => {
  const { arrivals, options } = await setup((_req, role) =>
    role === "child"
      ? { content: "late", delayMs: 20_000 }
      : { toolCalls: [task("slow one"), task("slow two")] },
  );
  const events: { type: string; status?: string; tracePath?: string }[] = [];
  const session = await createSession(options);
  try {
    const controller = new AbortController();
    const started = performance.now();
    const waitForChildren = setInterval(() => {
      if (arrivals.filter((a) => a.role === "child").length === 2) controller.abort();
    }, 20);
    const result = await session.run("go", {
      signal: controller.signal,
      onEvent: (e) => events.push(e as never),
    });
    clearInterval(waitForChildren);
    assert.equal(result.status, "aborted");
    assert.ok(performance.now() - started < 10_000, "the children did not stop with the parent");
    const ends = events.filter((e) => e.type === "subagent_end");
    assert.deepEqual(
      ends.map((e) => e.status),
      ["aborted", "aborted"],
    );
  } finally {
    await session.close();
  }
});

test("budgets add up: the children's tokens count in the parent's maxTokens", async () => {
  let parentTurn = 0;
  const { options } = await setup((_req, role) => {
    if (role === "child") return { content: "r", usage: { inputTokens: 3000, outputTokens: 10 } };
    parentTurn++;
    return parentTurn === 1
      ? { toolCalls: [task("one"), task("two")], usage: { inputTokens: 100, outputTokens: 10 } }
      : { content: "never reached", usage: { inputTokens: 100, outputTokens: 10 } };
  });
  const session = await createSession({ ...options, maxTokens: 5000 });
  try {
    const result = await session.run("go");
    // 110 (parent) + 2 × 3010 (children) ≥ 5000: the parent stops before its next request.
    assert.equal(result.status, "token_budget");
    assert.match(result.reason ?? "", /token budget of 5000 reached \(6130 used\)/);
    assert.equal(result.usage.inputTokens, 6100);
    assert.equal(parentTurn, 1);
  } finally {
    await session.close();
  }
});

test("a child stops when the parent's budget is spent, even mid-way through its own steps", async () => {
  let parentTurn = 0;
  const { options } = await setup((_req, role) => {
    if (role === "child")
      return {
        toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }],
        usage: { inputTokens: 400, outputTokens: 0 },
      };
    parentTurn++;
    return parentTurn === 1
      ? { toolCalls: [task("loop")], usage: { inputTokens: 100, outputTokens: 0 } }
      : { content: "x" };
  });
  const events: { type: string; status?: string; reason?: string; steps?: number }[] = [];
  const session = await createSession({ ...options, maxTokens: 1000 });
  try {
    const result = await session.run("go", { onEvent: (e) => events.push(e as never) });
    const end = events.find((e) => e.type === "subagent_end")!;
    assert.equal(end.status, "token_budget");
    assert.match(end.reason ?? "", /the parent run's token budget of 1000 reached/);
    assert.equal(end.steps, 3, "100 + 3 × 400 ≥ 1000 after the child's third step");
    assert.equal(result.status, "token_budget");
  } finally {
    await session.close();
  }
});

test("with memory on, each child has a memory scope of its own: its chunks are not in the parent's or its sibling's", async () => {
  let parentTurn = 0;
  const childTools: string[][] = [];
  const { home, workspace, options } = await setup((req, role, t) => {
    if (role === "child") {
      const n = /one/.test(t) ? "one" : "two";
      if (toolResults(req).length === 0) {
        childTools.push(req.body.tools.map((x: { function: { name: string } }) => x.function.name));
        return { toolCalls: [{ name: "read_file", arguments: { path: `secret-${n}.txt` } }] };
      }
      return { content: `report ${n}: read it` };
    }
    parentTurn++;
    return parentTurn === 1 ? { toolCalls: [task("look one"), task("look two")] } : { content: "both read" };
  });
  writeFileSync(join(workspace, "secret-one.txt"), "SECRET-ONE-7f3a\n");
  writeFileSync(join(workspace, "secret-two.txt"), "SECRET-TWO-9c1e\n");
  const events: { type: string; memoryScope?: string; tracePath?: string }[] = [];
  const session = await createSession({ ...options, memory: true });
  try {
    const result = await session.run("read both secrets", { onEvent: (e) => events.push(e as never) });
    assert.equal(result.status, "done");
  } finally {
    await session.close();
  }
  for (const tools of childTools)
    assert.equal(tools.filter((n) => n === "recall").length, 1, tools.join(","));
  const scopes = events.filter((e) => e.type === "subagent_start").map((e) => e.memoryScope);
  assert.equal(scopes.length, 2);
  assert.equal(new Set(scopes).size, 2, "siblings share a scope");
  const parentScope = scopes[0]!.split("/task-")[0];
  for (const s of scopes)
    assert.ok(s?.startsWith(`${parentScope}/task-`), `${s} is not under ${parentScope}`);
  const { SqliteStore } = await import("@hands/memory");
  const store = new SqliteStore({ path: join(home, "data", "memory.db"), dimensions: 256, readonly: true });
  try {
    const all = new Set(store.list({ limit: 5000, content: false }).map((c) => c.scope));
    for (const s of [parentScope, ...scopes])
      assert.ok(all.has(s!), `no chunks in ${s}: ${[...all].join(", ")}`);
    const text = (scope: string) =>
      store
        .list({ scope, limit: 1000 })
        .map((c) => c.content)
        .join("\n");
    const parent = text(parentScope!);
    assert.match(parent, /report one: read it/, "the parent's memory holds the children's reports");
    assert.doesNotMatch(parent, /SECRET-/, "a child's tool result leaked into the parent's scope");
    const [first, second] = scopes.map((s) => text(s!));
    const own = [/SECRET-ONE-7f3a/, /SECRET-TWO-9c1e/];
    // Each child's scope holds its own read (which child got which task is the scheduler's).
    const oneFirst = own[0]!.test(first!);
    assert.match(first!, oneFirst ? own[0]! : own[1]!);
    assert.doesNotMatch(first!, oneFirst ? own[1]! : own[0]!);
    assert.match(second!, oneFirst ? own[1]! : own[0]!);
    assert.doesNotMatch(second!, oneFirst ? own[0]! : own[1]!);
  } finally {
    store.close();
  }
});
