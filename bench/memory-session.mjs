#!/usr/bin/env node
// Long-session retention and cost: a scripted coding session through the real agent loop
// (ScriptedProvider, tools with realistic output sizes) that plants 10 facts early and needs
// each one later. Each fact must be in the context when needed, or one `recall` away (an id in
// the context whose recall returns it — the scripted model then calls recall and we check the
// result). Four ways of building each request, at several session lengths:
//   full history      every message, every step (what a plain agent sends)
//   AdaMEM default    cache-aware assembly within half the model's window (--window, 128k)
//   AdaMEM fixed      cache-aware assembly within --budget tokens (8,000)
//   AdaMEM per-step   the same budget, re-assembled every step (the earlier behaviour)
// Cost is the billed-token equivalent with prompt caching as providers do it: the part of a
// request that repeats the previous request from its start (whole messages, counted in
// 128-token blocks, nothing under 1,024 tokens) bills at 10 % of the input price, the rest at
// full price, plus the output.
//   npm run bench:memory-session -- [--lengths 50,100,200,400] [--budget 8000] [--window 128000] [--feedback] [--json]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, recallTool } from "@hands/agent";
import { ScriptedProvider } from "@hands/llm";
import { ContextAssembler, FeedbackTracker, Memory, recallText } from "@hands/memory";

const argv = process.argv.slice(2);
const opt = (name, d) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : d);
const BUDGET = opt("--budget", 8000);
const WINDOW = opt("--window", 128_000);
const LENGTHS = (argv.includes("--lengths") ? argv[argv.indexOf("--lengths") + 1] : "50,100,200,400")
  .split(",")
  .map(Number);
const asJson = argv.includes("--json");
const CACHED_PRICE = 0.1;

/** A message as the provider's cache sees it: everything that goes on the wire. */
const wire = (m) =>
  `${m.role}\u0000${m.content}\u0000${JSON.stringify(m.toolCalls ?? null)}\u0000${m.toolCallId ?? ""}\u0000${m.isError ? 1 : 0}`;
const wireTokens = (w) => Math.ceil(w.length / 4) + 4;

/** Tokens of `cur` a provider bills as cached: the whole messages it shares with `prev` from the start, in 128-token blocks, none under 1,024. */
export function cachedTokens(prev, cur) {
  let common = 0;
  for (let i = 0; i < Math.min(prev.length, cur.length); i++) {
    if (prev[i] !== cur[i]) break;
    common += wireTokens(cur[i]);
  }
  return common >= 1024 ? Math.floor(common / 128) * 128 : 0;
}

async function runSession(STEPS, mode) {
  const TASK =
    "Goal: migrate the billing service from REST polling to Stripe webhooks.\n" +
    "Constraint: do not modify anything under legacy/payments/ (another team owns it).";
  // key: what the later cue names; value: what must be in the context (or one recall away).
  const FACTS = [
    { step: 0, key: "goal", value: "from REST polling to Stripe webhooks", text: null },
    { step: 0, key: "constraint", value: "do not modify anything under legacy/payments/", text: null },
    { step: 2, key: "webhook handler file", value: "services/billing/src/hooks/stripe_webhook.ts" },
    { step: 3, key: "integration test command", value: "make itest SUITE=billing-webhooks" },
    { step: 4, key: "webhook timeout", value: "WEBHOOK_TIMEOUT_MS=4750" },
    { step: 5, key: "signing secret variable", value: "BILLING_WH_SECRET_V2" },
    { step: 6, key: "invoice fixture path", value: "test/fixtures/webhooks/invoice_paid.json" },
    { step: 7, key: "retry policy", value: "max 6 retries with exponential backoff base 250ms" },
    { step: 8, key: "migration id", value: "20240611_add_webhook_events" },
    { step: 9, key: "lint command", value: "npx eslint --max-warnings=0 services/billing" },
  ];
  for (const f of FACTS) f.text ??= `NOTE (${f.key}): ${f.value}`;
  // When each fact is needed: spread over the second half of the run.
  FACTS.forEach((f, i) => {
    f.need = Math.floor(STEPS * 0.3 + (i * STEPS * 0.65) / FACTS.length);
  });

  let seed = 11;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const NAMES = [
    "invoice",
    "customer",
    "charge",
    "refund",
    "ledger",
    "payout",
    "plan",
    "coupon",
    "tax",
    "event",
  ];
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];

  function codeFile(step) {
    const lines = [];
    const n = 60 + Math.floor(rnd() * 90);
    for (let i = 0; i < n; i++) {
      const a = pick(NAMES);
      const b = pick(NAMES);
      lines.push(
        i % 9 === 0
          ? `export async function ${a}To${b[0].toUpperCase()}${b.slice(1)}${step}_${i}(input: ${a[0].toUpperCase()}${a.slice(1)}) {`
          : `  const ${a}${i} = await client.${b}s.retrieve(input.${a}Id, { expand: ["${b}"] }); // line ${i}`,
      );
    }
    return lines.join("\n");
  }

  function testLog(step) {
    const lines = [`$ npm test -- services/billing (step ${step})`];
    const n = 40 + Math.floor(rnd() * 80);
    for (let i = 0; i < n; i++)
      lines.push(
        `  ${rnd() < 0.93 ? "✓" : "✗"} ${pick(NAMES)} ${pick(NAMES)} handling case ${i} (${Math.floor(rnd() * 90)} ms)`,
      );
    lines.push(`Tests: ${n} total, exit code 0`);
    return lines.join("\n");
  }

  const dir = mkdtempSync(join(tmpdir(), "hands-session-"));
  const budget = mode === "default" ? Math.floor(WINDOW / 2) : BUDGET;
  const memory = new Memory({
    path: join(dir, "memory.db"),
    scope: "session",
    policy: { workingBudget: budget },
  });
  // --feedback: automatic used/unused feedback after each response, as the CLI runs it.
  const feedback = argv.includes("--feedback") ? new FeedbackTracker(memory) : undefined;
  const assembler = new ContextAssembler(memory, {
    budget,
    cacheAware: mode !== "per-step",
    ...(feedback ? { feedback } : {}),
  });
  let prevWire = [];
  const cost = { input: 0, cached: 0, output: 0 };
  let fullChars = 0;
  let sentChars = 0;
  let maxSentTokens = 0;
  const charsOf = (ms) =>
    ms.reduce(
      (n, m) =>
        n +
        m.content.length +
        (m.toolCalls ?? []).reduce((k, c) => k + c.name.length + c.arguments.length, 0),
      0,
    );

  const results = FACTS.map((f) => ({ key: f.key, need: f.need, how: "missed" }));
  let pendingRecall; // { fact index, expected value }
  const provider = new ScriptedProvider((request) => {
    const step = provider.requests.length; // 1-based: this request is the last one recorded
    const sent = request.messages;
    const text = sent.map((m) => m.content).join("\n");
    if (pendingRecall) {
      const last = sent.at(-1);
      if (last?.role === "tool" && last.content.includes(FACTS[pendingRecall.i].value))
        results[pendingRecall.i].how = "one recall";
      pendingRecall = undefined;
    }
    for (const [i, f] of FACTS.entries()) {
      if (f.need !== step) continue;
      if (text.includes(f.value)) results[i].how = "in context";
      else {
        const ids = [...text.matchAll(/\[(m[0-9a-f]{10})\]/g)].map((m) => m[1]);
        return (async () => {
          for (const id of ids) {
            const r = await recallText(memory, id);
            if (r.includes(f.value)) {
              pendingRecall = { i };
              return { toolCalls: [{ name: "recall", arguments: { id } }] };
            }
          }
          return next(step);
        })();
      }
    }
    return next(step);
  });

  function next(step) {
    if (step >= STEPS) return { content: "Migration done." };
    const planted = FACTS.find((f) => f.step === step && f.step > 0);
    const cue = FACTS.find((f) => f.need === step + 1);
    const args = { step, planted: planted?.text ?? null, cue: cue ? cue.key : null };
    return step % 2
      ? {
          toolCalls: [
            { name: "read_file", arguments: { path: `services/billing/src/${pick(NAMES)}.ts`, ...args } },
          ],
        }
      : {
          toolCalls: [
            { name: "run_command", arguments: { command: "npm test -- services/billing", ...args } },
          ],
        };
  }

  // Tool outputs of realistic size; a planted fact or a cue rides along in the output.
  const fake = (name, body) => ({
    name,
    description: name,
    parameters: { type: "object", additionalProperties: true },
    readOnly: true,
    async execute(args) {
      let out = body(args.step);
      if (args.planted) out = `${out.slice(0, 1500)}\n${args.planted}\n${out.slice(1500)}`;
      if (args.cue) out += `\nTODO: next, use the ${args.cue} noted earlier in this task.`;
      return { output: out };
    },
  });

  const agent = new Agent({
    provider,
    workspace: dir,
    tools: [
      fake("read_file", codeFile),
      fake("run_command", testLog),
      recallTool({ recall: (id) => assembler.recall(id) }),
    ],
    createSandbox: async () => {
      throw new Error("no sandbox");
    },
    maxSteps: STEPS + 20,
    context: async (history, step) => {
      const t = performance.now();
      const sent = mode === "full" ? history.slice() : await assembler.assemble(history, step);
      assembleMs.push(performance.now() - t);
      ingestMs.push(assembler.ingestMs);
      const w = sent.map(wire);
      cost.input += w.reduce((n, x) => n + wireTokens(x), 0);
      cost.cached += cachedTokens(prevWire, w);
      prevWire = w;
      fullChars += charsOf(history);
      const c = charsOf(sent);
      sentChars += c;
      maxSentTokens = Math.max(maxSentTokens, Math.ceil(c / 4));
      return sent;
    },
  });
  const assembleMs = [];
  const ingestMs = [];
  const run = await agent.run(TASK);
  await assembler.flush();
  memory.close();
  rmSync(dir, { recursive: true, force: true });
  for (const m of run.messages ?? []) if (m.role === "assistant") cost.output += wireTokens(wire(m));

  const kept = results.filter((r) => r.how !== "missed").length;
  return {
    mode,
    length: STEPS,
    steps: run.steps,
    status: run.status,
    budgetTokens: mode === "full" ? null : budget,
    billedEquivalent: Math.round(cost.input - cost.cached + CACHED_PRICE * cost.cached + cost.output),
    inputTokens: cost.input,
    cachedTokens: cost.cached,
    outputTokens: cost.output,
    compactions: assembler.compactions,
    maxSentTokensEstimate: maxSentTokens,
    facts: results,
    factsKept: `${kept}/${FACTS.length}`,
    charsSent: sentChars,
    charsFullHistory: fullChars,
    ratio: Math.round((sentChars / fullChars) * 1000) / 1000,
    assembleMsMean: Math.round((assembleMs.reduce((a, b) => a + b, 0) / assembleMs.length) * 100) / 100,
    ingestMsMean: Math.round((ingestMs.reduce((a, b) => a + b, 0) / ingestMs.length) * 100) / 100,
    ...(feedback ? { feedback: feedback.counts } : {}),
  };
}

const runs = [];
for (const steps of LENGTHS)
  for (const mode of ["full", "default", "fixed", "per-step"]) runs.push(await runSession(steps, mode));
if (asJson) console.log(JSON.stringify({ window: WINDOW, fixedBudget: BUDGET, runs }, null, 2));
else {
  console.log(
    `session cost (window ${WINDOW}, fixed budget ${BUDGET}); billed = uncached + 10 % × cached + output tokens`,
  );
  console.log("steps  mode      facts  billed      vs full  input       cached      compactions  chars sent");
  for (const r of runs) {
    const full = runs.find((x) => x.length === r.length && x.mode === "full");
    console.log(
      `${String(r.length).padEnd(6)} ${r.mode.padEnd(9)} ${r.factsKept.padEnd(6)} ${String(r.billedEquivalent).padEnd(11)} ${(r.billedEquivalent / full.billedEquivalent).toFixed(3).padEnd(8)} ${String(r.inputTokens).padEnd(11)} ${String(r.cachedTokens).padEnd(11)} ${String(r.compactions).padEnd(12)} ${r.charsSent}`,
    );
  }
}
