// The trace reader reads what TraceWriter wrote, and says what it could not read: a torn last
// line, garbage, events of another version, a FIFO in place of a file.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { appendFileSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ScriptedProvider } from "@hands/llm";
import { Agent } from "./agent.js";
import type { AgentEvent } from "./events.js";
import { TraceWriter } from "./trace.js";
import { NotATraceFileError, parseTrace, readTrace, TraceFollower } from "./trace-read.js";

const dir = mkdtempSync(join(tmpdir(), "trace-read-"));

async function writtenTrace(name: string): Promise<{ path: string; events: AgentEvent[] }> {
  const path = join(dir, name);
  const trace = new TraceWriter(path);
  const events: AgentEvent[] = [];
  const agent = new Agent({
    provider: new ScriptedProvider([
      { toolCalls: [{ name: "nothing", arguments: { a: "é€😀" } }] },
      { content: "done" },
    ]),
    workspace: realpathSync(tmpdir()),
    tools: [
      {
        name: "nothing",
        description: "does nothing",
        parameters: { type: "object", properties: {} },
        readOnly: true,
        execute: async () => ({ output: "ok" }),
      },
    ],
    createSandbox: async () => {
      throw new Error("no sandbox");
    },
  });
  await agent.run("task", {
    onEvent: (e) => {
      trace.write(e);
      if (e.type !== "text_delta" && e.type !== "thinking_delta") events.push(e);
    },
  });
  trace.close();
  return { path, events };
}

test("reads back every event TraceWriter wrote, with no problems", async () => {
  const { path, events } = await writtenTrace("whole.jsonl");
  const r = readTrace(path);
  assert.deepEqual(r.problems, []);
  // The trace adds what each request sent (the message ids); the rest is the events as emitted.
  const withoutSent = r.events.map((e) => {
    if (e.type !== "model_request") return e;
    assert.ok(e.sent?.length);
    const { sent: _s, ...rest } = e;
    return rest;
  });
  assert.deepEqual(withoutSent, JSON.parse(JSON.stringify(events)));
  assert.equal(r.messages.length, 4, "system, task, the call, its result");
  assert.equal(r.events[0]!.type, "run_start");
  assert.equal(r.events.at(-1)!.type, "result");
});

test("a torn last line, garbage and another version's events are problems, the rest is read", async () => {
  const { path, events } = await writtenTrace("bad.jsonl");
  appendFileSync(path, "not json\n");
  appendFileSync(path, `${JSON.stringify({ type: "hologram", time: 1 })}\n`);
  appendFileSync(path, `${JSON.stringify({ type: "tool_end", time: 1, step: 1 })}\n`);
  appendFileSync(path, `[1,2]\n{"type":"model_resp`);
  const r = readTrace(path);
  const written = events.length + r.messages.length;
  assert.equal(r.events.length, events.length);
  assert.deepEqual(
    r.problems.map((p) => [p.line, p.kind]),
    [
      [written + 1, "invalid_json"],
      [written + 2, "unknown_type"],
      [written + 3, "missing_fields"],
      [written + 4, "invalid_json"],
      [written + 5, "torn"],
    ],
  );
  assert.match(r.problems[2]!.message, /tool_end without callId, name, output/);
});

test("a follower gets only whole lines, multi-byte characters split across reads included", async () => {
  const { path: source } = await writtenTrace("source.jsonl");
  const text = readTrace(source);
  const bytes = Buffer.from(`${text.events.map((e) => JSON.stringify(e)).join("\n")}\n`, "utf8");
  const path = join(dir, "growing.jsonl");
  writeFileSync(path, "");
  const follower = new TraceFollower(path);
  const seen: AgentEvent[] = [];
  // Append in 7-byte pieces: lines and UTF-8 sequences are cut everywhere.
  for (let i = 0; i < bytes.length; i += 7) {
    appendFileSync(path, bytes.subarray(i, i + 7));
    const r = follower.poll();
    assert.deepEqual(r.problems, []);
    seen.push(...r.events);
  }
  assert.deepEqual(seen, text.events);
  assert.equal(follower.offset, bytes.length);
});

test("parseTrace leaves an unterminated line for later unless the file is final", () => {
  const line = JSON.stringify({ type: "plan", time: 1, items: [] });
  assert.equal(parseTrace(line).events.length, 0);
  assert.equal(parseTrace(line, { final: true }).events.length, 1);
});

test("a FIFO or a symlink in place of a trace is refused at once, never read or waited on", () => {
  const fifo = join(dir, "fifo.jsonl");
  execFileSync("mkfifo", [fifo]);
  assert.throws(() => readTrace(fifo), NotATraceFileError);
  const link = join(dir, "link.jsonl");
  execFileSync("ln", ["-s", "/etc/passwd", link]);
  assert.throws(() => readTrace(link), /ELOOP|symbolic/);
});
