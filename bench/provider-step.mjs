#!/usr/bin/env node
// What one model request costs the harness, per provider: N requests of a growing tool-use
// conversation (each reply a tool call, each result ~1 KB) against the scripted server on
// loopback, which parses and checks every body as the real API would (packages/llm testing).
// Prints wall and CPU ms per request, medians of --rounds interleaved rounds. Run after
// `npm run build`: `npm run bench:provider-step -- [--steps 200] [--rounds 5] [--llm <dist folder>]`
// (--llm: another tree's packages/llm/dist, to compare).
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { median } from "./harness-run.mjs";

const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const STEPS = Number(opt("--steps", 200));
const ROUNDS = Number(opt("--rounds", 5));
const dists = [
  resolve("packages/llm/dist"),
  ...argv.flatMap((a, i) => (argv[i - 1] === "--llm" ? [resolve(a)] : [])),
];

const TOOLS = [
  {
    name: "read_file",
    description: "Read a file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
];
const RESULT = "def f():\n    return 1\n".repeat(40);

async function load(dist) {
  const at = (f) => import(pathToFileURL(`${dist}/${f}`).href);
  const [{ AnthropicProvider }, { OpenAIProvider }, { startScriptedServer }] = await Promise.all([
    at("anthropic.js"),
    at("openai.js"),
    at("testing/scripted-server.js"),
  ]);
  return { AnthropicProvider, OpenAIProvider, startScriptedServer };
}

async function round(lib, kind) {
  const script = Array.from({ length: STEPS }, () => ({
    content: "reading",
    toolCalls: [{ name: "read_file", arguments: { path: "a.py" } }],
  }));
  const server = await lib.startScriptedServer({ script });
  const provider =
    kind === "anthropic"
      ? new lib.AnthropicProvider({
          baseURL: server.origin,
          apiKey: "k",
          model: "claude-opus-4-8",
          maxRetries: 0,
        })
      : new lib.OpenAIProvider({ baseURL: server.url, apiKey: "k", model: "bench", maxRetries: 0 });
  const history = [
    { role: "system", content: "You are a coding agent. ".repeat(200) },
    { role: "user", content: "read a.py over and over" },
  ];
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  for (let i = 0; i < STEPS; i++) {
    const r = await provider.complete({ messages: history, tools: TOOLS });
    const call = r.message.toolCalls?.[0];
    if (!call) throw new Error(`${kind}: step ${i} has no tool call`);
    history.push(r.message, { role: "tool", toolCallId: call.id, name: call.name, content: RESULT });
  }
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - wall0;
  const invalid = server.invalid.length;
  await server.close(); // rejects if any body was invalid
  if (server.requests.length !== STEPS || invalid)
    throw new Error(`${kind}: ${server.requests.length} requests, ${invalid} invalid`);
  return { wall: wall / STEPS, cpu: (cpu.user + cpu.system) / 1000 / STEPS };
}

const libs = await Promise.all(dists.map(load));
const samples = new Map();
for (let r = 0; r < ROUNDS + 1; r++)
  for (const [d, lib] of libs.entries())
    for (const kind of ["openai", "anthropic"]) {
      const s = await round(lib, kind);
      if (r === 0) continue; // warm-up
      const key = `${kind}${d ? ` (${dists[d]})` : ""}`;
      samples.set(key, [...(samples.get(key) ?? []), s]);
    }
console.log(`per request, ${STEPS} requests of a growing conversation, median of ${ROUNDS} rounds:`);
for (const [key, list] of samples)
  console.log(
    `  ${key.padEnd(40)} ${median(list.map((s) => s.wall)).toFixed(3)} ms wall   ${median(list.map((s) => s.cpu)).toFixed(3)} ms CPU`,
  );
