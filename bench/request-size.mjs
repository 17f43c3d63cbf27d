#!/usr/bin/env node
// Bytes per request beside pi: what `hands` (the real bundled bin, one-shot) and pi 0.73.1
// (`pi -p`, installed into bench/.peers as bench/startup.mjs does) send a model, captured by
// the repo's scripted OpenAI-compatible server (packages/llm testing), which parses and checks
// every body as a real server would (JSON, model, roles, every tool call answered) and answers
// 400 to a bad one. Each program runs an N-step read loop (default 200): N−1 turns calling its
// own read tool (hands read_file, pi read) — only a tool the request offers — then a final
// answer; and the same loops of commands (hands run_command, pi bash). Printed: the first
// request's system prompt, tool schemas (each tool as sent) and total bytes, and the bytes of
// all N requests for each loop — the same file read every step, a different file each step,
// `true` every step, `echo N` — with the ratio to pi, and what one step adds to the next
// request (the last request less the one before). Bytes are the bodies as received
// (content-length), so every byte the model is sent counts, JSON escapes included.
//
//   node bench/request-size.mjs [--steps N] [--no-pi] [--hands PATH] [--kinds a,b] [--dump DIR] [--no-diagnostics] [--json]
//
// --kinds: of same-read, distinct-read, same-command, distinct-command (default all).
// --dump DIR: writes each run's last two request bodies there, to see what a step adds.
//
// "hands" is the default configuration (memory on: the context is assembled within a budget);
// "hands --no-memory" sends the whole history every step, as pi does.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startScriptedServer } from "../packages/llm/dist/index.js";
import { FILE_TEXT, handsFlags } from "./harness-run.mjs";
import { installPi, PI_VERSION, piAgentDir } from "./startup.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const HANDS_BIN = join(here, "..", "packages", "cli", "bin", "hands.js");

/**
 * Published sizes of two peers that cannot run here (no network, no accounts): facts with
 * where each comes from, for the table beside the measured ones.
 */
export const PUBLISHED = [
  {
    peer: "Codex CLI",
    systemPrompt:
      "prompt.md 22,329 chars; gpt_5_codex_prompt.md 8,179; gpt-5.2-codex_prompt.md 9,121 (openai/codex codex-rs/core/, commit 1d005f8)",
    tools:
      "apply_patch tool instructions 3,124 chars (codex-rs/apply-patch/apply_patch_tool_instructions.md, commit f6fda4c), besides the shell and update_plan schemas",
  },
  {
    peer: "Claude Code",
    systemPrompt:
      "2.7k tokens (its /context, v2.x, claude-opus-4-5: github.com/anthropics/claude-code/issues/17567); 3.2k with claude-sonnet-4 (dannywillems.github.io/2026/01/16/claude-code-context-command.html); as recorded on the wire, 20,806 chars with 29 tools under `claude -p` and 26,131 with 35 interactive (Continuum-AI-Corp/OrcaPromptVault, cited by Piebald-AI/claude-code-system-prompts README, commit 0718f2f)",
    tools:
      "system tools 15.4k tokens (issues/17567), ~15k (issues/10711); 11.6k with claude-sonnet-4 (the same blog post)",
  },
];

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const value = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
};
const STEPS = Number(value("--steps", "200"));
const TASK = "read the file over and over";

/** The file read at `step` (1-based): one file every step, or one per step. */
const fileFor = (distinct, step) => (distinct ? `part_${step}.py` : "sample.py");
const textFor = (distinct, step) => (distinct ? FILE_TEXT.replaceAll("sample", `part ${step}`) : FILE_TEXT);

/** The loops: what each step's call asks (its arguments, by the step, 1-based). */
const KINDS = {
  "same-read": { tool: "read", distinct: false, args: (s) => ({ path: fileFor(false, s) }) },
  "distinct-read": { tool: "read", distinct: true, args: (s) => ({ path: fileFor(true, s) }) },
  "same-command": { tool: "command", args: () => ({ command: "true" }) },
  "distinct-command": { tool: "command", args: (s) => ({ command: `echo ${s}` }) },
};
const kinds = value("--kinds", Object.keys(KINDS).join(",")).split(",");
for (const k of kinds) if (!KINDS[k]) throw new Error(`unknown kind ${k} (${Object.keys(KINDS).join(", ")})`);
const dump = value("--dump", undefined);

/**
 * Runs `command args` in a fresh workspace against a scripted server that calls `tool` N−1
 * times with `callArgs(step)`; resolves to each request's raw body size and the first body
 * (parsed).
 */
async function capture({
  label,
  command,
  args: argv,
  env = {},
  tool,
  callArgs,
  distinct,
  steps,
  check,
  setup,
}) {
  const ws = mkdtempSync(join(tmpdir(), "request-size-"));
  for (let s = 1; s < steps; s++)
    if (distinct || s === 1) writeFileSync(join(ws, fileFor(distinct, s)), textFor(distinct, s));
  const bad = [];
  const server = await startScriptedServer((req, index) => {
    const offered = (req.body?.tools ?? []).map((t) => t.function?.name);
    if (index + 1 >= steps) return { content: "Done." };
    if (!offered.includes(tool)) {
      bad.push(`request ${index + 1} does not offer ${tool} (offers: ${offered.join(", ")})`);
      return { status: 400, errorMessage: `no tool named ${tool}` };
    }
    return {
      content: "Reading the file again.",
      toolCalls: [{ id: `call_${index + 1}`, name: tool, arguments: callArgs(index + 1) }],
    };
  });
  try {
    const extra = setup ? setup(ws, server.url) : {};
    const child = spawn(command, typeof argv === "function" ? argv(server.url, ws) : argv, {
      cwd: ws,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env, ...extra },
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const code = await new Promise((r, reject) => {
      child.on("error", reject);
      child.on("close", r);
    });
    const chat = server.requests.filter((r) => r.path.endsWith("/chat/completions"));
    if (
      code !== 0 ||
      !check(out, chat.length > steps) ||
      bad.length ||
      server.invalid.length ||
      chat.length < steps
    )
      throw new Error(
        `${label}: exit ${code}, ${chat.length}/${steps} requests, ${bad.join("; ")} ${JSON.stringify(server.invalid)}\n${out.slice(-400)}\n${err.slice(-1500)}`,
      );
    const sizes = chat.map((r) => {
      const length = Number(r.headers["content-length"]);
      // Without a content-length (a chunked body), the body as JSON without whitespace.
      return Number.isFinite(length) ? length : Buffer.byteLength(JSON.stringify(r.body));
    });
    if (dump) {
      mkdirSync(dump, { recursive: true });
      const name = label.replace(/[^a-z0-9.]+/gi, "_");
      for (const i of [steps - 2, steps - 1])
        writeFileSync(join(dump, `${name}.${i + 1}.json`), JSON.stringify(chat[i].body, null, 1));
    }
    // Requests after the loop's final answer (pi compacts a long session when a prompt ends).
    return { sizes: sizes.slice(0, steps), after: sizes.slice(steps), first: chat[0].body };
  } finally {
    await server.close();
    rmSync(ws, { recursive: true, force: true });
  }
}

const bytes = (v) => Buffer.byteLength(typeof v === "string" ? v : JSON.stringify(v));

/** The first request's parts: system prompt (its text), each tool as sent, the whole body. */
function breakdown(body, total) {
  const system = body.messages.find((m) => m.role === "system");
  const systemText = typeof system?.content === "string" ? system.content : JSON.stringify(system?.content);
  return {
    systemBytes: bytes(systemText ?? ""),
    tools: (body.tools ?? []).map((t) => ({ name: t.function.name, bytes: bytes(t) })),
    toolsBytes: bytes(body.tools ?? []),
    firstRequestBytes: total,
  };
}

function programs(handsBin, withPi) {
  const hands = (name, extra) => ({
    name,
    tools: { read: "read_file", command: "run_command" },
    command: handsBin,
    args: (url, ws) => [
      ...handsFlags(url, ws),
      "--max-steps",
      String(STEPS + 5),
      // Language servers send the model nothing here (no edits); off, their background start
      // after each .py read cannot fail the run (a write after close, 2026-12-02).
      ...(flag("--no-diagnostics") ? ["--no-diagnostics"] : []),
      ...extra,
      TASK,
    ],
    setup: (ws) => ({ HANDS_DATA_DIR: join(ws, ".data") }),
    check: (out) => JSON.parse(out.trim().split("\n").at(-1)).status === "done",
  });
  const list = [hands("hands", []), hands("hands --no-memory", ["--no-memory"])];
  if (withPi) {
    const bin = installPi();
    list.push({
      name: `pi ${PI_VERSION}`,
      tools: { read: "read", command: "bash" },
      command: bin,
      args: ["-p", "--offline", "--provider", "bench", "--model", "bench", TASK],
      setup: (ws, url) => ({ PI_CODING_AGENT_DIR: piAgentDir(ws, url) }),
      // After a compaction request pi prints no answer (its last message is the summary).
      check: (out, compacted) => out.trim() === "Done." || (compacted && out.trim() === ""),
    });
  }
  return list;
}

async function main() {
  const list = programs(value("--hands", HANDS_BIN), !flag("--no-pi"));
  const load = loadavg()[0];
  const results = [];
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  for (const p of list) {
    const loops = {};
    let first;
    for (const kind of kinds) {
      const k = KINDS[kind];
      const run = await capture({
        label: `${p.name} ${kind}`,
        command: p.command,
        args: p.args,
        tool: p.tools[k.tool],
        callArgs: k.args,
        distinct: k.distinct ?? false,
        steps: STEPS,
        check: p.check,
        setup: p.setup,
      });
      first ??= run;
      loops[kind] = {
        totalBytes: sum(run.sizes),
        lastRequestBytes: run.sizes.at(-1),
        lastStepBytes: run.sizes.at(-1) - run.sizes.at(-2),
        afterLoop: run.after,
      };
    }
    results.push({ name: p.name, ...breakdown(first.first, first.sizes[0]), loops });
    console.error(`${p.name}: done`);
  }
  if (flag("--json")) {
    console.log(JSON.stringify({ steps: STEPS, load, results, published: PUBLISHED }, null, 2));
    return;
  }
  const pi = results.find((r) => r.name.startsWith("pi"));
  const fmt = (n) => n.toLocaleString("en-US");
  const ratio = (n, of) => (of ? ` (${(n / of).toFixed(2)}×)` : "");
  console.log(`Bytes per request, ${STEPS}-step loops, load ${load.toFixed(1)}; ratios to pi`);
  for (const r of results) {
    console.log(`\n${r.name}`);
    console.log(`  system prompt        ${fmt(r.systemBytes)} B${ratio(r.systemBytes, pi?.systemBytes)}`);
    console.log(
      `  tool schemas         ${fmt(r.toolsBytes)} B, ${r.tools.length} tools${ratio(r.toolsBytes, pi?.toolsBytes)}`,
    );
    console.log(`    ${r.tools.map((t) => `${t.name} ${fmt(t.bytes)}`).join(", ")}`);
    console.log(
      `  first request        ${fmt(r.firstRequestBytes)} B${ratio(r.firstRequestBytes, pi?.firstRequestBytes)}`,
    );
    for (const [kind, x] of Object.entries(r.loops))
      console.log(
        `  ${STEPS} steps, ${kind.padEnd(17)} ${fmt(x.totalBytes)} B${ratio(x.totalBytes, pi?.loops[kind].totalBytes)}; last request ${fmt(x.lastRequestBytes)} B, the last step added ${fmt(x.lastStepBytes)} B`,
      );
  }
  for (const r of results)
    for (const [kind, x] of Object.entries(r.loops))
      if (x.afterLoop.length)
        console.log(
          `${r.name}, ${kind}: after the loop ${x.afterLoop.length} more request(s) of ${x.afterLoop.map(fmt).join(", ")} B (not counted above)`,
        );
  console.log("\nPublished (not measured here):");
  for (const p of PUBLISHED) console.log(`  ${p.peer}: system prompt ${p.systemPrompt}; tools ${p.tools}`);
}

await main();
