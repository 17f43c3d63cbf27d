// What a trace records of each model request: the messages it sent, each distinct message written
// once and every request listing the ids it sent — checked against what the model server was
// actually sent, with the loop's append-only history and with a context hook that assembles a
// different context each step. And the live mark that says a process is writing the trace.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { type Message, ScriptedProvider, type ScriptedTurn } from "@hands/llm";
import { Agent, type AgentOptions } from "./agent.js";
import { TraceWriter } from "./trace.js";
import { liveMarkPath, traceLiveness } from "./trace-live.js";
import { expandRanges, parseTrace, readTrace, TraceFollower } from "./trace-read.js";

const dir = mkdtempSync(join(tmpdir(), "trace-sent-"));

const echo = {
  name: "echo",
  description: "echoes",
  parameters: { type: "object", properties: { n: { type: "number" } } },
  readOnly: true,
  execute: async (args: unknown) => ({ output: `echoed ${(args as { n: number }).n} ${"~".repeat(40)}` }),
};

/** An agent with the echo tool and no sandbox. */
function echoAgent(provider: ScriptedProvider, extra: Partial<AgentOptions> = {}): Agent {
  return new Agent({
    provider,
    workspace: realpathSync(tmpdir()),
    tools: [echo],
    createSandbox: async () => {
      throw new Error("no sandbox");
    },
    ...extra,
  });
}

async function tracedRun(
  name: string,
  steps: number,
  extra: Partial<AgentOptions> = {},
): Promise<{ path: string; provider: ScriptedProvider }> {
  const script: ScriptedTurn[] = [];
  for (let i = 0; i < steps - 1; i++) script.push({ toolCalls: [{ name: "echo", arguments: { n: i } }] });
  script.push({ content: "done" });
  const provider = new ScriptedProvider(script);
  const path = join(dir, name);
  const trace = new TraceWriter(path);
  const agent = echoAgent(provider, extra);
  await agent.run("count for me", { onEvent: trace.write });
  trace.close();
  return { path, provider };
}

/** Each request's messages as the trace says it sent them. */
function sentPerRequest(path: string): Message[][] {
  const r = readTrace(path);
  assert.deepEqual(r.problems, []);
  const byId = new Map(r.messages.map((m) => [m.id, m.message]));
  assert.equal(byId.size, r.messages.length, "each message id written once");
  return r.events.flatMap((e) => {
    if (e.type !== "model_request") return [];
    assert.ok(e.sent, "the request lists what it sent");
    return [expandRanges(e.sent).map((id) => byId.get(id)!)];
  });
}

test("without memory: each request's messages are exactly what the model got, each written once", async () => {
  const { path, provider } = await tracedRun("plain.jsonl", 30);
  const sent = sentPerRequest(path);
  assert.equal(sent.length, 30);
  for (const [i, req] of provider.requests.entries())
    assert.deepEqual(sent[i], JSON.parse(JSON.stringify(req.messages)), `request ${i + 1}`);
  const r = readTrace(path);
  // system + task + 29 × (assistant + tool) distinct messages, none repeated.
  assert.equal(r.messages.length, 2 + 29 * 2);
  // The history only grew: every request is one range, so a request line stays small.
  for (const e of r.events) if (e.type === "model_request") assert.equal(e.sent!.length, 1);
  const text = readFileSync(path, "utf8");
  const requestLines = text.split("\n").filter((l) => l.includes('"type":"model_request"'));
  // A tool result's text is in the trace once (its tool_end); its message line points there.
  assert.equal(text.split(`echoed 7 ${"~".repeat(40)}`).length - 1, 1);
  assert.equal(r.messages.filter((m) => m.message.role === "tool").length, 29);
  assert.ok(
    requestLines.every((l) => l.length < 250),
    "a request line does not grow with the conversation",
  );
});

test("a context assembled anew each step (not append-only) is recorded as it was sent", async () => {
  let note: Message | undefined;
  const { path, provider } = await tracedRun("assembled.jsonl", 12, {
    // Like memory: the system prompt and task, a note that changes, the newest four messages.
    context: async (history, step) => {
      if (step % 3 === 1) note = { role: "user", content: `Memory note at step ${step}` };
      const recent = history.slice(2).slice(-4);
      while (recent[0]?.role === "tool") recent.shift();
      // Like memory's squeezed groups: a tool result shortened into a new object.
      const squeezed = recent.map((m) =>
        m.role === "tool" && step % 2 === 0 ? { ...m, content: `${m.content.slice(0, 9)}…` } : m,
      );
      return [history[0]!, history[1]!, note!, ...squeezed];
    },
  });
  const sent = sentPerRequest(path);
  assert.equal(sent.length, 12);
  for (const [i, req] of provider.requests.entries())
    assert.deepEqual(sent[i], JSON.parse(JSON.stringify(req.messages)), `request ${i + 1}`);
  const r = readTrace(path);
  // The squeezed copies are written whole (their text is not their tool_end's).
  assert.ok(r.messages.some((m) => m.message.role === "tool" && m.message.content.endsWith("…")));
  // The same note object, sent at three steps, is one line; four notes in all.
  assert.equal(r.messages.filter((m) => m.message.content.startsWith("Memory note")).length, 4);
  const later = r.events.filter((e) => e.type === "model_request").at(-1);
  assert.ok(later?.type === "model_request" && later.sent!.length > 1, "a gap: more than one range");
});

test("a tool result with a note after its output stores only the note; one whose tool_end is lost is a problem", async () => {
  // The loop adds a note to a result repeated three times in a row: that text is the model's own.
  const script: ScriptedTurn[] = [];
  for (let i = 0; i < 4; i++) script.push({ toolCalls: [{ name: "echo", arguments: { n: 1 } }] });
  script.push({ content: "done" });
  const provider = new ScriptedProvider(script);
  const path = join(dir, "repeats.jsonl");
  const trace = new TraceWriter(path);
  const agent = echoAgent(provider);
  await agent.run("repeat yourself", { onEvent: trace.write });
  trace.close();
  const sent = sentPerRequest(path);
  for (const [i, req] of provider.requests.entries())
    assert.deepEqual(sent[i], JSON.parse(JSON.stringify(req.messages)), `request ${i + 1}`);
  assert.ok(sent.at(-1)!.some((m) => m.role === "tool" && m.content.includes("same call 3 times")));
  // The output is still written once (in its tool_end); the note after it in the message line.
  const text = readFileSync(path, "utf8");
  assert.equal(text.split(`echoed 1 ${"~".repeat(40)}`).length - 1, 4, "four calls, four tool_end lines");
  assert.ok(text.includes('"contentAfter":"\\n\\nNOTE: the same call 3 times'));
  // Lose the tool_end lines (a damaged trace): the results that pointed there cannot be shown.
  const damaged = readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => !l.includes('"type":"tool_end"'))
    .join("\n");
  const r = parseTrace(damaged, { final: true });
  const lost = r.problems.filter((p) => /tool_end line is missing/.test(p.message));
  assert.equal(lost.length, 4, JSON.stringify(r.problems));
  assert.equal(r.messages.filter((m) => m.message.role === "assistant").length, 4, "the rest is still read");
});

test("a second writer appending to the same trace (a resumed session): every request still resolves to what it sent", async () => {
  const path = join(dir, "resumed.jsonl");
  const providers: ScriptedProvider[] = [];
  let firstEnds = 0;
  for (const task of ["first process", "second process"]) {
    if (task === "second process") firstEnds = readTrace(path).offset;
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "echo", arguments: { n: task.length } }] },
      { content: `done: ${task}` },
    ]);
    providers.push(provider);
    // A new process: a new writer, numbering from 1 again, appending to the file.
    const trace = new TraceWriter(path);
    const agent = echoAgent(provider);
    await agent.run(task, { onEvent: trace.write });
    trace.close();
  }
  const sent = sentPerRequest(path);
  const wire = providers.flatMap((p) => p.requests.map((r) => JSON.parse(JSON.stringify(r.messages))));
  assert.deepEqual(sent, wire);
  // Followed from where a whole read of the first process's lines stopped (the dashboard's live
  // view): the same ids, tool results found in tool_end lines before that point, no problems.
  const whole = readTrace(path);
  const polled = new TraceFollower(path, firstEnds).poll();
  assert.deepEqual(polled.problems, []);
  const later = whole.messages.filter((m) => m.id > whole.messages.length - polled.messages.length);
  assert.deepEqual(polled.messages, later);
  const requests = (events: typeof whole.events) =>
    events.flatMap((e) => (e.type === "model_request" ? [e.sent] : []));
  assert.deepEqual(requests(polled.events), requests(whole.events).slice(-2));
  assert.ok(
    polled.messages.some((m) => m.message.role === "tool"),
    "a tool result resolved across the start",
  );
  assert.equal(
    new Set(whole.messages.map((m) => m.id)).size,
    whole.messages.length,
    "ids unique in the file",
  );
});

test("a trace from before messages were recorded, and a malformed list, read as not recorded", () => {
  const old = parseTrace(
    `${JSON.stringify({ type: "model_request", time: 1, step: 1, messageCount: 2, chars: 10 })}\n`,
  );
  assert.equal(old.events[0]?.type === "model_request" && old.events[0].sent, undefined);
  for (const bad of [[[3, 1]], [[0, 2]], "1-3", [[1.5, 2]], [[1]]]) {
    const r = parseTrace(
      `${JSON.stringify({ type: "model_request", time: 1, step: 1, messageCount: 2, chars: 1, sent: bad })}\n`,
    );
    assert.equal(r.events.length, 1);
    assert.equal(r.events[0]?.type === "model_request" && r.events[0].sent, undefined, JSON.stringify(bad));
  }
  const lines = [
    { type: "message", time: 1, id: 1, message: { role: "user", content: "hi" } },
    { type: "message", time: 1, message: { role: "user", content: "no id" } },
    { type: "message", time: 1, id: 2, message: { role: "wizard", content: "x" } },
    { type: "message", time: 1, id: 3, message: { role: "user", content: 5 } },
  ];
  const r = parseTrace(`${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  assert.deepEqual(
    r.messages.map((m) => m.id),
    [1],
  );
  assert.deepEqual(
    r.problems.map((p) => [p.line, p.kind]),
    [
      [2, "missing_fields"],
      [3, "missing_fields"],
      [4, "missing_fields"],
    ],
  );
});

test("the trace and its live mark are private; the mark says running while open, nothing once closed", () => {
  const path = join(dir, "private", "t.jsonl");
  const trace = new TraceWriter(path);
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(statSync(liveMarkPath(path)).mode & 0o777, 0o600);
  assert.equal(statSync(join(dir, "private")).mode & 0o777, 0o700);
  assert.equal(traceLiveness(path), "running");
  trace.close();
  assert.equal(traceLiveness(path), "none");
});

test("a mark whose process died, or whose pid now belongs to another process, says gone", async () => {
  const path = join(dir, "dead.jsonl");
  writeFileSync(path, "");
  // A real process that exits: its pid is dead afterwards.
  const child = spawn(process.execPath, ["-e", ""]);
  await new Promise((r) => child.on("close", r));
  writeFileSync(liveMarkPath(path), JSON.stringify({ pid: child.pid, host: hostname(), time: 1 }));
  assert.equal(traceLiveness(path), "gone");
  // Our own pid, but another start time: the pid was reused by a later process.
  const real = new TraceWriter(join(dir, "mine.jsonl"));
  const mine = JSON.parse(readFileSync(liveMarkPath(real.path), "utf8")) as { startTicks?: number };
  real.close();
  assert.ok(mine.startTicks !== undefined, "Linux: the start time is recorded");
  writeFileSync(
    liveMarkPath(path),
    JSON.stringify({ pid: process.pid, startTicks: mine.startTicks! - 1, host: hostname(), time: 1 }),
  );
  assert.equal(traceLiveness(path), "gone");
  writeFileSync(
    liveMarkPath(path),
    JSON.stringify({ pid: process.pid, startTicks: mine.startTicks, host: hostname(), time: 1 }),
  );
  assert.equal(traceLiveness(path), "running");
});

test("garbage, a FIFO or a symlink as the mark: none, read at once without hanging", () => {
  const path = join(dir, "hostile.jsonl");
  writeFileSync(path, "");
  writeFileSync(liveMarkPath(path), "not json");
  assert.equal(traceLiveness(path), "none");
  writeFileSync(liveMarkPath(path), JSON.stringify({ pid: -1 }));
  assert.equal(traceLiveness(path), "none");
  const fifoTrace = join(dir, "fifo.jsonl");
  execFileSync("mkfifo", [liveMarkPath(fifoTrace)]);
  assert.equal(traceLiveness(fifoTrace), "none");
  const linkTrace = join(dir, "link.jsonl");
  execFileSync("ln", ["-s", liveMarkPath(path), liveMarkPath(linkTrace)]);
  assert.equal(traceLiveness(linkTrace), "none");
});
