// A context overflow never ends a run: against a real HTTP server enforcing a token window
// (and checking every body: tool calls answered, roles valid), the loop shrinks what it sends
// and carries on to the final answer.
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import {
  AnthropicProvider,
  type Message,
  OpenAIProvider,
  type OverflowWording,
  type ServerScript,
  startScriptedServer,
} from "@hands/llm";
import { Agent, type AgentOptions } from "./agent.js";
import type { AgentEvent } from "./events.js";
import { builtinTools } from "./tools/index.js";

const FILE = Array.from(
  { length: 60 },
  (_, i) => `def function_${i}(x):  # line ${i + 1} of the sample\n`,
).join("");
const noSandbox = async () => {
  throw new Error("no sandbox in this test");
};

async function longRun(opts: {
  steps: number;
  window: number;
  wording?: OverflowWording;
  anthropic?: boolean;
  context?: AgentOptions["context"];
  script?: ServerScript;
}) {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), "hands-overflow-")));
  writeFileSync(join(ws, "sample.py"), FILE);
  const server = await startScriptedServer({
    script:
      opts.script ??
      ((_req, index) =>
        index + 1 < opts.steps
          ? { toolCalls: [{ id: `call_${index}`, name: "read_file", arguments: { path: "sample.py" } }] }
          : { content: "All read: the final answer." }),
    contextWindow: { tokens: opts.window, ...(opts.wording ? { server: opts.wording } : {}) },
  });
  const retry = { baseDelayMs: 0, maxDelayMs: 0 };
  const provider = opts.anthropic
    ? new AnthropicProvider({ baseURL: server.origin, model: "m", apiKey: "k", retry })
    : new OpenAIProvider({ baseURL: server.url, model: "m", apiKey: "k", retry });
  const events: AgentEvent[] = [];
  const agent = new Agent({
    provider,
    workspace: ws,
    tools: builtinTools(),
    createSandbox: noSandbox,
    maxSteps: opts.steps + 5,
    outputDir: join(ws, ".out"),
    ...(opts.context ? { context: opts.context } : {}),
  });
  try {
    const result = await agent.run("read sample.py over and over", { onEvent: (e) => events.push(e) });
    return { result, events, server, ws };
  } finally {
    await server.close();
    rmSync(ws, { recursive: true, force: true });
  }
}

test("a 200-step run against an 8,000-token window finishes with its final answer (OpenAI wording)", async () => {
  const { result, events, server } = await longRun({ steps: 200, window: 8000 });
  assert.equal(result.status, "done", result.reason);
  assert.equal(result.answer, "All read: the final answer.");
  assert.equal(result.steps, 200);
  assert.ok(server.overflows >= 1, "the window was hit");
  // It learns the window: a handful of rejections, not one per step.
  assert.ok(server.overflows <= 6, `${server.overflows} overflows`);
  const notices = events.filter((e) => e.type === "model_retry");
  assert.equal(notices.length, server.overflows);
  assert.match((notices[0] as { error: string }).error, /did not fit the model's window \(8000 tokens\)/);
  // The history itself stays whole.
  assert.equal(result.messages.filter((m) => m.role === "tool").length, 199);
  // Every request after the first rejection fit (the server's count).
  for (const r of server.requests.slice(-50)) {
    assert.ok(JSON.stringify(r.body).length / 4 <= 8000);
  }
});

for (const wording of ["anthropic", "llamacpp", "lmstudio", "ollama"] as const) {
  test(`overflow worded as ${wording} is recognised and recovered from`, async () => {
    const { result, server } = await longRun({ steps: 40, window: 6000, wording });
    assert.equal(result.status, "done", result.reason);
    assert.equal(result.steps, 40);
    assert.ok(server.overflows >= 1);
  });
}

test("through the Anthropic provider: its tool_use/tool_result pairing survives the shrinking", async () => {
  const { result, server } = await longRun({ steps: 60, window: 6000, anthropic: true });
  assert.equal(result.status, "done", result.reason);
  assert.ok(server.overflows >= 1);
});

test("the oldest outputs become pointers to saved text the model can read back", async () => {
  let pointer = "";
  const { result } = await longRun({
    steps: 10,
    window: 6500,
    script: (req, index) => {
      const tools = (req.body.messages as Array<{ role: string; content: string }>).filter(
        (m) => m.role === "tool",
      );
      pointer ||= tools.find((m) => m.content.startsWith("[output of read_file"))?.content ?? "";
      if (index < 8) return { toolCalls: [{ name: "read_file", arguments: { path: "sample.py" } }] };
      if (index === 8) {
        const path = /saved at (\S+);/.exec(pointer)?.[1] ?? "none";
        return { toolCalls: [{ name: "read_file", arguments: { path } }] };
      }
      return { content: "done" };
    },
  });
  assert.equal(result.status, "done", result.reason);
  assert.match(pointer, /left out to fit the model's context window: the full output is saved at /);
  // The model's read_file of the pointer got the original text back.
  const last = result.messages.filter((m) => m.role === "tool").at(-1)!;
  assert.match(last.content, /def function_59\(x\)/);
  assert.ok(!last.content.startsWith("ERROR"), last.content.slice(0, 200));
});

test("the context hook is told the window after an overflow; what it returns is still made to fit", async () => {
  const windows: Array<number | undefined> = [];
  const { result } = await longRun({
    steps: 30,
    window: 5000,
    // A hook that ignores the hint and sends everything: the loop's own shrinking covers it.
    context: (history, _step, info) => {
      windows.push(info.windowTokens);
      return history as Message[];
    },
  });
  assert.equal(result.status, "done", result.reason);
  assert.equal(windows[0], undefined);
  assert.ok(
    windows.some((w) => w !== undefined && w <= 5000 * 1.5),
    JSON.stringify(windows.slice(-3)),
  );
});
