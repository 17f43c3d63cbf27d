// Sub-agents and model routing, measured against the scripted model server (real HTTP, real
// OpenAI wire format, a fixed latency per request):
// 1. the wall time of `--plan` on a 4-item plan whose items are all marked independent, with
//    the sub-agents run 4 at a time vs one at a time (the same requests either way);
// 2. routing's cost split on a scripted run: plain chat to the cheap model, code work to the
//    executor, two failed tool calls in a row → the strong model; tokens and list-price cost per model.
// Usage: npm run bench:reach-agents [-- --latency MS --runs N]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runWithPlan } from "../packages/cli/dist/plan-run.js";
import { openSession } from "../packages/hands/dist/session.js";
import { startScriptedServer } from "../packages/llm/dist/index.js";

const { values } = parseArgs({ options: { latency: { type: "string" }, runs: { type: "string" } } });
const LATENCY = Number(values.latency ?? 800);
const RUNS = Number(values.runs ?? 3);
const scratch = mkdtempSync(join(tmpdir(), "hands-reach-bench-"));

function workspace() {
  const ws = mkdtempSync(join(scratch, "ws-"));
  for (const name of ["api", "cli", "docs", "tests"]) writeFileSync(join(ws, `${name}.txt`), `${name}\n`);
  mkdirSync(join(ws, "data"));
  return ws;
}

async function planRun(maxConcurrent) {
  const items = ["api", "cli", "docs", "tests"];
  const server = await startScriptedServer((req) => {
    const messages = req.body.messages;
    const child = /You are a sub-agent/.test(messages[0].content);
    const tools = messages.filter((m) => m.role === "tool").length;
    if (child) {
      const item = items.find((i) => messages[1].content.includes(`${i}.txt`));
      return tools === 0
        ? { toolCalls: [{ name: "read_file", arguments: { path: `${item}.txt` } }], delayMs: LATENCY }
        : { content: `checked ${item}`, delayMs: LATENCY };
    }
    if (messages.some((m) => m.role === "user" && m.content.startsWith("The plan is accepted")))
      return { content: "all four checked", delayMs: LATENCY };
    return {
      content: items.map((i) => `- [ ] check ${i}.txt and report its first line (independent)`).join("\n"),
      delayMs: LATENCY,
    };
  });
  const ws = workspace();
  const session = await openSession({
    workspace: ws,
    flags: { baseUrl: server.url, apiKey: "k", model: "scripted-model", sandbox: "local", memory: false },
    env: {},
    configFiles: false,
    approvalDefault: "auto",
    save: false,
    dataDir: join(ws, "data"),
    subagents: { maxConcurrent },
  });
  const started = performance.now();
  let subagents = 0;
  const result = await runWithPlan(
    session,
    "check the four parts",
    { onEvent: (e) => e.type === "subagent_end" && subagents++ },
    () => {},
  );
  const wall = performance.now() - started;
  const requests = server.requests.filter((r) => r.path.endsWith("/chat/completions")).length;
  await session.close();
  await server.close();
  if (result.status !== "done" || subagents !== 4)
    throw new Error(`run failed: ${result.status} ${result.reason} (${subagents} sub-agents)`);
  return { wall, requests };
}

async function routingRun() {
  // chat → cheap; code work → executor; 2 failures → strong, then back to the executor.
  const turns = [
    { content: "Hello! Happy to help.", usage: { inputTokens: 900, outputTokens: 20 } },
    {
      toolCalls: [{ name: "read_file", arguments: { path: "src/missing.ts" } }],
      usage: { inputTokens: 4000, outputTokens: 60 },
    },
    {
      toolCalls: [{ name: "read_file", arguments: { path: "lib/missing.ts" } }],
      usage: { inputTokens: 4300, outputTokens: 60 },
    },
    {
      toolCalls: [{ name: "read_file", arguments: { path: "api.txt" } }],
      usage: { inputTokens: 4600, outputTokens: 80 },
    },
    {
      toolCalls: [
        { name: "edit_file", arguments: { path: "api.txt", old_string: "api", new_string: "API" } },
      ],
      usage: { inputTokens: 4900, outputTokens: 90 },
    },
    { content: "Fixed.", usage: { inputTokens: 5200, outputTokens: 30 } },
  ];
  const server = await startScriptedServer((_r, i) => turns[i] ?? { content: "?" });
  const ws = workspace();
  const session = await openSession({
    workspace: ws,
    flags: {
      baseUrl: server.url,
      apiKey: "k",
      model: "gpt-4.1-mini",
      sandbox: "local",
      memory: false,
      models: { chat: "gpt-4.1-nano", executor: "gpt-4.1-mini", strong: "gpt-4.1", escalateAfter: 2 },
    },
    env: {},
    configFiles: false,
    approvalDefault: "auto",
    save: false,
    dataDir: join(ws, "data"),
  });
  const byModel = new Map();
  let current = "";
  const onEvent = (e) => {
    if (e.type === "model_choice") current = `${e.model} (${e.role})`;
    if (e.type === "model_response") {
      const m = byModel.get(current) ?? { steps: 0, input: 0, output: 0, cost: 0 };
      m.steps++;
      m.input += e.usage.inputTokens;
      m.output += e.usage.outputTokens;
      m.cost += e.usage.costUsd ?? 0;
      byModel.set(current, m);
    }
  };
  await session.run("hello there, how are you?", { onEvent });
  await session.run("fix the casing in the api source file", { onEvent });
  const sent = server.requests.filter((r) => r.path.endsWith("/chat/completions")).map((r) => r.body.model);
  await session.close();
  await server.close();
  // The same tokens all on the strong model: what routing saves.
  const tokens = [...byModel.values()].reduce(
    (a, m) => ({ input: a.input + m.input, output: a.output + m.output }),
    { input: 0, output: 0 },
  );
  return { byModel, sent, allStrong: (tokens.input * 2 + tokens.output * 8) / 1e6 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
try {
  console.log(`load: ${(await import("node:fs")).readFileSync("/proc/loadavg", "utf8").trim()}`);
  console.log(`latency per model request: ${LATENCY} ms; ${RUNS} runs each`);
  const rows = [];
  for (const n of [1, 4]) {
    const walls = [];
    let requests = 0;
    for (let i = 0; i < RUNS; i++) {
      const r = await planRun(n);
      walls.push(r.wall);
      requests = r.requests;
    }
    rows.push({ n, wall: median(walls), min: Math.min(...walls), max: Math.max(...walls), requests });
  }
  console.log("\n--plan, 4 independent items (planner 1 request, each sub-agent 2, execution 1):");
  for (const r of rows)
    console.log(
      `  sub-agents ${r.n} at a time: median ${r.wall.toFixed(0)} ms (min ${r.min.toFixed(0)}, max ${r.max.toFixed(0)}), ${r.requests} requests`,
    );
  console.log(
    `  gain: ${(rows[0].wall / rows[1].wall).toFixed(2)}× faster, ${(rows[0].wall - rows[1].wall).toFixed(0)} ms saved`,
  );

  const routing = await routingRun();
  console.log("\nrouting on a scripted run (a chat request, then a fix with two failed reads):");
  console.log(`  models sent, in order: ${routing.sent.join(", ")}`);
  let total = 0;
  for (const [model, m] of routing.byModel) {
    total += m.cost;
    console.log(
      `  ${model}: ${m.steps} steps, ${m.input} in / ${m.output} out tokens, $${m.cost.toFixed(5)}`,
    );
  }
  console.log(
    `  total $${total.toFixed(5)}; the same tokens all on gpt-4.1: $${routing.allStrong.toFixed(5)}`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
