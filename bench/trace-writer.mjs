#!/usr/bin/env node
// `node bench/trace-writer.mjs`: what recording the messages each model request sent adds to
// the trace writer per step, in CPU time of this process. The same event stream as a real run
// (model_request, model_response, tool_start, tool_end; read_file of a 2.7 KB file a step) is
// written twice, interleaved: once with the messages attached to each request (what the agent
// does now: each new message written once, the request lists id ranges) and once without (the
// trace as it was). Two shapes of context: the loop's own history (append-only, memory off)
// and one assembled anew each step from reused messages plus a new note (memory on).
// Options: --steps N (200), --rounds N (15). Prints JSON: per-step CPU ms of each and the
// difference, and the bytes each trace took.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { steps: { type: "string" }, rounds: { type: "string" } } });
const STEPS = Number(values.steps ?? 200);
const ROUNDS = Number(values.rounds ?? 15);
const { TraceWriter, SENT_MESSAGES } = await import(
  new URL("../packages/agent/dist/index.js", import.meta.url).href
);

const FILE = `${"def step(x):\n    return x * 2  # a line of a Python file being read\n".repeat(40)}`.slice(
  0,
  2700,
);
const usage = { inputTokens: 1000, outputTokens: 20, cachedInputTokens: 900, costUsd: 0 };

/** One run's messages, made before timing. */
function makeRun() {
  const head = [
    { role: "system", content: "You are Hands. ".repeat(60) },
    { role: "user", content: "read the file again and again" },
  ];
  const steps = [];
  for (let step = 1; step <= STEPS; step++) {
    const call = { id: `call_${step}`, name: "read_file", arguments: '{"path":"app.py"}' };
    steps.push({
      step,
      call,
      reply: { role: "assistant", content: "", toolCalls: [call] },
      result: { role: "tool", toolCallId: call.id, name: "read_file", content: FILE },
      note: { role: "user", content: `Memory note ${step}: ${"earlier steps ".repeat(30)}` },
    });
  }
  return { head, steps };
}

function write(shape, path, withMessages) {
  const { head, steps } = makeRun();
  const w = new TraceWriter(path);
  // The loop's history: one array that grows by appending, as in the agent.
  const history = [...head];
  let note;
  const t0 = process.cpuUsage();
  for (const s of steps) {
    let sent = history;
    if (shape === "assembled") {
      // Memory: system + task, a note that changes every 5 steps, the newest 12 messages.
      if (s.step % 5 === 1) note = s.note;
      sent = [
        history[0],
        history[1],
        note,
        ...history.slice(-12).filter((m, i) => i > 0 || m.role !== "tool"),
      ];
    }
    const time = Date.now();
    w.write({
      type: "model_request",
      time,
      step: s.step,
      messageCount: sent.length,
      chars: 0,
      ...(withMessages ? { [SENT_MESSAGES]: sent } : {}),
    });
    w.write({
      type: "model_response",
      time,
      step: s.step,
      content: "",
      toolCalls: [s.call],
      finishReason: "tool_calls",
      usage,
      durationMs: 1,
    });
    w.write({
      type: "tool_start",
      time,
      step: s.step,
      callId: s.call.id,
      name: "read_file",
      args: { path: "app.py" },
    });
    w.write({
      type: "tool_end",
      time,
      step: s.step,
      callId: s.call.id,
      name: "read_file",
      isError: false,
      output: FILE,
      resultChars: FILE.length,
      truncated: false,
      durationMs: 1,
    });
    history.push(s.reply, s.result);
  }
  const cpu = process.cpuUsage(t0);
  w.close();
  return { ms: (cpu.user + cpu.system) / 1000, bytes: statSync(path).size };
}

const dir = mkdtempSync(join(tmpdir(), "hands-bench-trace-"));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const report = { steps: STEPS, rounds: ROUNDS, shapes: {} };
try {
  for (const shape of ["append-only", "assembled"]) {
    const samples = { with: [], without: [] };
    let bytes = {};
    for (let r = 0; r < ROUNDS + 2; r++) {
      // Fresh messages and a fresh writer each round, in alternating order.
      for (const mode of r % 2 ? ["with", "without"] : ["without", "with"]) {
        const out = write(shape, join(dir, `${shape}-${mode}-${r}.jsonl`), mode === "with");
        if (r >= 2) samples[mode].push(out.ms);
        bytes[mode] = out.bytes;
      }
    }
    const per = (xs) => +(median(xs) / STEPS).toFixed(4);
    report.shapes[shape] = {
      withMessagesMsPerStep: per(samples.with),
      withoutMsPerStep: per(samples.without),
      addedMsPerStep: +(per(samples.with) - per(samples.without)).toFixed(4),
      traceBytesWith: bytes.with,
      traceBytesWithout: bytes.without,
    };
    bytes = {};
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify(report, null, 2));
