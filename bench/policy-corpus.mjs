#!/usr/bin/env node
// The command policy against its corpora (packages/agent/src/policy/corpus/): the share of
// hostile commands denied or asked (goal 100 %), the share of everyday commands asked or denied
// (false alarms, goal ≤ 2 %), under the built-in rules alone and with the allow rules of issue
// 23's scenario (find, awk, sed -n, grep, git log, git diff, ls, echo, make test) — where none of
// the scenario's walk-arounds may be allowed — and the time per judged command.
// `npm run bench:policy` (after `npx tsc -b`); --list prints every verdict, --json the figures.
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { corpusPolicy, judge, readCorpora } from "../packages/agent/dist/policy/corpus-run.js";
import { loadShellParser } from "../packages/agent/dist/policy/shell-parse.js";

const args = process.argv.slice(2);
await loadShellParser();
const { hostile, everyday, allowRules, notAllowed } = readCorpora();
const pct = (n, d) => `${((100 * n) / d).toFixed(1)} %`;

function scenario(label, policy) {
  const h = judge(policy, hostile);
  const e = judge(policy, everyday);
  const caught = h.filter((v) => v.action === "deny" || v.action === "ask");
  const denied = h.filter((v) => v.action === "deny");
  const alarms = e.filter((v) => v.action === "deny" || v.action === "ask");
  const out = {
    scenario: label,
    hostile: {
      total: h.length,
      caught: caught.length,
      denied: denied.length,
      missed: h.filter((v) => !caught.includes(v)),
    },
    everyday: {
      total: e.length,
      alarms: alarms.length,
      allowed: e.filter((v) => v.action === "allow").length,
      alarmList: alarms,
    },
  };
  console.log(`\n${label}`);
  console.log(
    `  hostile:  ${caught.length}/${h.length} denied or asked (${pct(caught.length, h.length)}; denied ${denied.length}, asked ${caught.length - denied.length})`,
  );
  const groups = [...new Set(hostile.map((x) => x.group))];
  for (const g of groups) {
    const inG = h.filter((v) => v.group === g);
    const c = inG.filter((v) => v.action !== "none" && v.action !== "allow").length;
    console.log(`    ${g.padEnd(48)} ${String(c).padStart(3)}/${inG.length}`);
  }
  for (const v of out.hostile.missed) console.log(`    MISSED (${v.action}): ${JSON.stringify(v.command)}`);
  console.log(
    `  everyday: ${alarms.length}/${e.length} asked or denied (false alarms ${pct(alarms.length, e.length)})${out.everyday.allowed ? `; ${out.everyday.allowed} allowed by the rules` : ""}`,
  );
  for (const v of alarms)
    console.log(`    ${v.action}: ${JSON.stringify(v.command)} — ${v.rule}: ${v.reason}`);
  if (args.includes("--list"))
    for (const v of [...h, ...e]) console.log(`    ${v.action.padEnd(5)} ${JSON.stringify(v.command)}`);
  return out;
}

const base = scenario("built-in rules", corpusPolicy());
const withAllow = corpusPolicy(allowRules);
const scen = scenario(`built-in rules + allow ${allowRules.join(", ")}`, withAllow);
const walk = judge(
  withAllow,
  notAllowed.map((command) => ({ group: "walk-around", command })),
);
const allowed = walk.filter((v) => v.action === "allow");
console.log(
  `  allow-rule walk-arounds: ${walk.length - allowed.length}/${walk.length} not allowed (${pct(walk.length - allowed.length, walk.length)})`,
);
for (const v of allowed) console.log(`    ALLOWED: ${JSON.stringify(v.command)} by ${v.rule}`);

// Time per judged command: every corpus command, several passes, the median pass (wall and
// CPU). `--against DIST` times another build's policy (e.g. main's packages/agent/dist) on the
// same commands, passes interleaved so the machine's load hits both alike.
const all = [...hostile, ...everyday, ...notAllowed.map((command) => ({ command }))].map((x) => x.command);
const policy = corpusPolicy();
const against = args.includes("--against") ? args[args.indexOf("--against") + 1] : undefined;
let other;
if (against) {
  const dist = new URL(`file://${resolve(against)}/`);
  await (await import(new URL("policy/shell-parse.js", dist).href)).loadShellParser();
  other = (await import(new URL("policy/load.js", dist).href)).loadCommandPolicy({});
}
const passes = [];
const cpu = [];
const otherPasses = [];
const otherCpu = [];
for (let p = 0; p < 7; p++) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const c of all) policy.evaluate(c, { workspaces: ["/workspace"] });
  passes.push((performance.now() - t0) / all.length);
  const c1 = process.cpuUsage(c0);
  cpu.push((c1.user + c1.system) / 1000 / all.length);
  if (other) {
    const c2 = process.cpuUsage();
    const t1 = performance.now();
    for (const c of all) other.evaluate(c);
    otherPasses.push((performance.now() - t1) / all.length);
    const c3 = process.cpuUsage(c2);
    otherCpu.push((c3.user + c3.system) / 1000 / all.length);
  }
}
for (const a of [passes, cpu, otherPasses, otherCpu]) a.sort((x, y) => x - y);
let slowest = { ms: 0, command: "" };
for (const c of all) {
  const t0 = performance.now();
  policy.evaluate(c, { workspaces: ["/workspace"] });
  const ms = performance.now() - t0;
  if (ms > slowest.ms) slowest = { ms, command: c };
}
const load = loadavg()[0].toFixed(1);
console.log(
  `\ntime per judged command (load ${load}): median ${(passes[3] * 1000).toFixed(0)} µs wall, ${(cpu[3] * 1000).toFixed(0)} µs CPU${other ? `; ${against}: ${(otherPasses[3] * 1000).toFixed(0)} µs wall, ${(otherCpu[3] * 1000).toFixed(0)} µs CPU` : ""};`,
);
console.log(
  `  median pass ${(passes[3] * 1000).toFixed(0)} µs over ${all.length} commands × 7 passes (fastest pass ${(passes[0] * 1000).toFixed(0)} µs); slowest single ${(slowest.ms * 1000).toFixed(0)} µs: ${JSON.stringify(slowest.command.slice(0, 60))}`,
);
if (args.includes("--json"))
  console.log(
    JSON.stringify({
      base,
      scenario: scen,
      walkAroundsAllowed: allowed.length,
      usPerCommand: passes[3] * 1000,
    }),
  );
const ok =
  base.hostile.missed.length === 0 &&
  scen.hostile.missed.length === 0 &&
  allowed.length === 0 &&
  base.everyday.alarms / base.everyday.total <= 0.02;
process.exitCode = ok ? 0 : 1;
