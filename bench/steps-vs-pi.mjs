#!/usr/bin/env node
// `npm run bench:steps`: what a step costs in Hands beside pi 0.73.1 (issue 24), for four kinds
// of step: the same read each step, a distinct file each step, the same command (`true`) each
// step, a distinct command (`echo N`) each step. Each agent runs as users run it (Hands' bundled
// bin with --json, pi -p) against its own scripted OpenAI-compatible server on loopback
// (bench/fake-model-server.mjs, validate "each": every body is parsed and checked before it is
// answered, and must carry the previous call's id, name, arguments and a real result), which
// asks for the tool in the agent's own names (read_file / read, run_command / bash).
// Loops of 1 (only the answer), 40 and 200 model turns, run by run interleaved (hands, pi, …).
//   wall per step = (T200 − T40) / 160, CPU per step likewise (the process tree's user + sys,
//   bench/tree-rusage.py), launch → first request, peak RSS (the largest process of the tree),
//   request bytes (mean over the 200-step loop, and their sum), each with the hands / pi ratio.
// The server's own floor: a minimal client (bench/replay-bodies.mjs) replays each run's bodies
// to a fresh server of the same script, no agent; the ratios are printed raw and net of it.
// Options: --runs N (5), --busy N (N busy loops beside it: load ≈ 2 + N on this 2-core machine),
// --hands PATH (another tree's bin, repeatable, for A/B), --kinds same-read,distinct-read,…,
// --sandbox KIND (hands' --sandbox), --json.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeModel } from "./fake-model-server.mjs";
import { FILE_TEXT, handsFlags, median } from "./harness-run.mjs";
import { installPi, piAgentDir } from "./startup.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const HANDS_BIN = join(here, "..", "packages", "cli", "bin", "hands.js");
const WRAP = ["/usr/bin/python3", "-SI", join(here, "tree-rusage.py")];
const SIZES = [1, 40, 200];

const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const runs = Number(opt("--runs", 5)) || 5;
const busy = Number(opt("--busy", 0)) || 0;
const sandbox = opt("--sandbox");
const handsBins = [HANDS_BIN, ...argv.flatMap((a, i) => (argv[i - 1] === "--hands" ? [resolve(a)] : []))];

/** The n-th file of the distinct reads: a line naming it, then the sample. */
const distinctFile = (n) => `files/f${n}.py`;
const distinctText = (n) => `# file ${n}\n${FILE_TEXT}`;
const wholeFile = (text) => (text.includes("line 60 of the sample") ? undefined : "not the whole file");
/** Output of `echo n` as its own line (Hands frames output, pi prints it bare). */
const echoed = (n, text) => (new RegExp(`(^|\\n)${n}(\\n|$)`).test(text) ? undefined : `no line "${n}"`);
/** What `true` answers: Hands' exit line, or pi's "(no output)". */
const ranTrue = (_n, text) =>
  /^exit code: 0(\n|$)/.test(text) || text.trim() === "(no output)" ? undefined : "not a clean exit";

/** Each kind: the tool call at step n in each agent's names, and what its result must show. */
const KINDS = {
  "same-read": {
    hands: () => ({ name: "read_file", args: { path: "sample.py" } }),
    pi: () => ({ name: "read", args: { path: "sample.py" } }),
    check: (_n, text) => wholeFile(text),
  },
  "distinct-read": {
    hands: (n) => ({ name: "read_file", args: { path: distinctFile(n) } }),
    pi: (n) => ({ name: "read", args: { path: distinctFile(n) } }),
    check: (n, text) =>
      new RegExp(`# file ${n}(?!\\d)`).test(text) ? wholeFile(text) : `not ${distinctFile(n)}`,
  },
  "same-command": {
    hands: () => ({ name: "run_command", args: { command: "true" } }),
    pi: () => ({ name: "bash", args: { command: "true" } }),
    check: ranTrue,
  },
  "distinct-command": {
    hands: (n) => ({ name: "run_command", args: { command: `echo ${n}` } }),
    pi: (n) => ({ name: "bash", args: { command: `echo ${n}` } }),
    check: echoed,
  },
};
const kinds = opt("--kinds", Object.keys(KINDS).join(",")).split(",");
for (const k of kinds) if (!KINDS[k]) throw new Error(`unknown kind ${k} (${Object.keys(KINDS).join(", ")})`);

/** A workspace both agents can do every kind in. */
function workspace(prefix) {
  const ws = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(ws, "sample.py"), FILE_TEXT);
  mkdirSync(join(ws, "files"));
  for (let n = 1; n < 200; n++) writeFileSync(join(ws, distinctFile(n)), distinctText(n));
  return ws;
}

/**
 * Runs `command args` under tree-rusage.py; resolves to its wall time (fork → exit), the tree's CPU and peak
 * RSS, the CLOCK_MONOTONIC ns it started at, and its stdout, after checking the exit code.
 */
async function measured(label, command, args, { env = {}, cwd }) {
  const out = join(cwd, ".rusage.json");
  const child = spawn(WRAP[0], [...WRAP.slice(1), out, command, ...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise((r, reject) => {
    child.on("error", reject);
    child.on("close", r);
  });
  if (code !== 0)
    throw new Error(`${label} failed (exit ${code}): ${stdout.slice(-500)} ${stderr.slice(-1500)}`);
  const usage = JSON.parse(readFileSync(out, "utf8"));
  if (usage.leftovers > 0) console.error(`${label}: ${usage.leftovers} process(es) left running, killed`);
  const startedNs = BigInt(usage.startedNs);
  // From the fork to the command's exit: the wrapper's own start and wait are not counted.
  const wallMs = Number(BigInt(usage.endedNs) - startedNs) / 1e6;
  return { wallMs, cpuMs: usage.cpuMs, rssKb: usage.maxRssKb, startedNs, stdout };
}

/** The agents compared: the hands bins, then pi; each runs one loop of `steps` turns of `kind`. */
function agents(pi) {
  const hands = handsBins.map((bin, i) => ({
    name: i === 0 ? "hands" : `hands#${i + 1}`,
    calls: (kind) => KINDS[kind].hands,
    start: (url, ws, steps) => ({
      command: bin,
      args: [
        ...handsFlags(url, ws),
        "--max-steps",
        String(steps + 5),
        ...(sandbox ? ["--sandbox", sandbox] : []),
        "do the steps you are given",
      ],
      env: { HANDS_DATA_DIR: join(ws, ".data") },
      ok: (out) => {
        const r = JSON.parse(out.trim().split("\n").at(-1) ?? "{}");
        return r.status === "done" && r.steps === steps;
      },
    }),
  }));
  const peer = {
    name: "pi",
    calls: (kind) => KINDS[kind].pi,
    start: (url, ws) => ({
      command: pi,
      args: ["-p", "--offline", "--provider", "bench", "--model", "bench", "do the steps you are given"],
      env: { PI_CODING_AGENT_DIR: piAgentDir(ws, url) },
      ok: (out) => out.trim() === "Done.",
    }),
  };
  return [...hands, peer];
}

/** A scripted server for `steps` turns of `kind` in `agent`'s tool names, checking every body. */
const serverFor = (agent, kind, steps) =>
  startFakeModel({ steps, call: agent.calls(kind), check: KINDS[kind].check, validate: "each" });

function failOnInvalid(label, model) {
  const invalid = model.invalid();
  if (invalid.length === 0) return;
  for (const r of invalid.slice(0, 5))
    console.error(`${label}: request #${r.request} is invalid: ${r.error}`);
  throw new Error(`${label}: ${invalid.length} of ${model.requests} request bodies were invalid`);
}

/** One loop of `steps` turns of `kind` by `agent`, then the same bodies replayed (the floor). */
async function loop(agent, kind, steps) {
  const label = `${agent.name} ${kind} ${steps}`;
  const ws = workspace("steps-vs-pi-");
  try {
    const model = await serverFor(agent, kind, steps);
    let run;
    try {
      const how = agent.start(model.url, ws, steps);
      run = await measured(label, how.command, how.args, { env: how.env, cwd: ws });
      if (!how.ok(run.stdout)) throw new Error(`${label}: unexpected output ${run.stdout.slice(-500)}`);
    } finally {
      await model.close();
    }
    failOnInvalid(label, model);
    if (model.requests !== steps) throw new Error(`${label}: ${model.requests} requests, not ${steps}`);
    const bodies = model.bodies;
    const launchMs = Number(model.firstRequestNs - run.startedNs) / 1e6;
    // The floor: the same bodies from a minimal client to a fresh server of the same script.
    const file = join(ws, ".bodies");
    writeFileSync(file, Buffer.concat(bodies));
    writeFileSync(`${file}.json`, JSON.stringify(bodies.map((b) => b.length)));
    const replayServer = await serverFor(agent, kind, steps);
    let floor;
    try {
      floor = await measured(
        `${label} replay`,
        process.execPath,
        [join(here, "replay-bodies.mjs"), file, replayServer.url],
        { cwd: ws },
      );
    } finally {
      await replayServer.close();
    }
    failOnInvalid(`${label} replay`, replayServer);
    return {
      wallMs: run.wallMs,
      cpuMs: run.cpuMs,
      rssKb: run.rssKb,
      launchMs,
      bytes: bodies.map((b) => b.length),
      floorWallMs: floor.wallMs,
      floorCpuMs: floor.cpuMs,
    };
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

/** Busy loops beside the bench (killed at exit by their pids). */
function startBusy(n) {
  const pids = Array.from(
    { length: n },
    () => spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }).pid,
  );
  const stop = () => {
    for (const pid of pids) {
      try {
        process.kill(pid);
      } catch {}
    }
  };
  process.on("exit", stop);
  for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));
  return stop;
}

const perStep = (xs40, xs200) => (median(xs200) - median(xs40)) / 160;
const round = (x, d = 2) => (Number.isFinite(x) ? +x.toFixed(d) : null);

function summarise(samples) {
  const get = (size, key) => samples[size].map((s) => s[key]);
  const bytes200 = samples[200][0].bytes;
  return {
    wallPerStepMs: round(perStep(get(40, "wallMs"), get(200, "wallMs")), 3),
    floorWallPerStepMs: round(perStep(get(40, "floorWallMs"), get(200, "floorWallMs")), 3),
    cpuPerStepMs: round(perStep(get(40, "cpuMs"), get(200, "cpuMs")), 3),
    floorCpuPerStepMs: round(perStep(get(40, "floorCpuMs"), get(200, "floorCpuMs")), 3),
    s1Ms: round(median(get(1, "wallMs")), 1),
    launchMs: round(median(SIZES.flatMap((s) => get(s, "launchMs"))), 1),
    peakRssMb: round(median(get(200, "rssKb")) / 1024, 1),
    bytesPerRequest: Math.round(bytes200.reduce((a, b) => a + b, 0) / bytes200.length),
    firstRequestBytes: bytes200[0],
    bytes200: bytes200.reduce((a, b) => a + b, 0),
  };
}

const ROWS = [
  ["wall per step, (T200 − T40)/160", "wallPerStepMs", "ms"],
  ["  the server's floor (replay)", "floorWallPerStepMs", "ms"],
  ["  net of the floor", "netWallPerStepMs", "ms"],
  ["CPU per step (process tree)", "cpuPerStepMs", "ms"],
  ["  the replay client's", "floorCpuPerStepMs", "ms"],
  ["  net of the floor", "netCpuPerStepMs", "ms"],
  ["s1: one answer, launch → exit", "s1Ms", "ms"],
  ["launch → first request", "launchMs", "ms"],
  ["peak RSS, 200 steps", "peakRssMb", "MB"],
  ["first request", "firstRequestBytes", "B"],
  ["bytes per request, 200 steps", "bytesPerRequest", "B"],
  ["bytes over the 200 steps", "bytes200", "B"],
];

function printKind(kind, byAgent) {
  const names = Object.keys(byAgent);
  const handsNames = names.filter((n) => n !== "pi");
  const { hands, pi } = KINDS[kind];
  console.log(`\n${kind} (${hands(1).name} ${JSON.stringify(hands(1).args)} / ${pi(1).name})`);
  console.log(
    `  ${"".padEnd(34)}${names.map((n) => n.padStart(11)).join("")}${handsNames.map((n) => `${n}/pi`.padStart(11)).join("")}`,
  );
  for (const [label, key, unit] of ROWS) {
    const vals = names.map((n) => byAgent[n][key]);
    const ratios = handsNames.map((n) => round(byAgent[n][key] / byAgent.pi[key], 3));
    console.log(
      `  ${`${label} (${unit})`.padEnd(34)}${vals.map((v) => String(v).padStart(11)).join("")}${ratios.map((r) => String(r).padStart(11)).join("")}`,
    );
  }
}

const pi = installPi();
const stopBusy = busy > 0 ? startBusy(busy) : () => {};
const list = agents(pi);
const loadAtStart = loadavg()[0];
/** samples[kind][agent][size]: one entry per run. */
const samples = Object.fromEntries(
  kinds.map((k) => [k, Object.fromEntries(list.map((a) => [a.name, { 1: [], 40: [], 200: [] }]))]),
);
for (const a of list) await loop(a, kinds[0], 1); // warm the file cache once; not counted
for (let r = 0; r < runs; r++) {
  // Who goes first alternates run by run, so neither always runs right after the other.
  const order = r % 2 ? [...list].reverse() : list;
  for (const kind of kinds) {
    for (const size of SIZES)
      for (const a of order) samples[kind][a.name][size].push(await loop(a, kind, size));
    console.error(`run ${r + 1}/${runs}: ${kind} done, load ${loadavg()[0].toFixed(2)}`);
  }
}
stopBusy();
const report = {
  runs,
  busyLoops: busy,
  loadAverage: [round(loadAtStart), round(loadavg()[0])],
  node: process.version,
  kinds: Object.fromEntries(
    kinds.map((k) => {
      const byAgent = Object.fromEntries(list.map((a) => [a.name, summarise(samples[k][a.name])]));
      for (const s of Object.values(byAgent)) {
        s.netWallPerStepMs = round(s.wallPerStepMs - s.floorWallPerStepMs, 3);
        s.netCpuPerStepMs = round(s.cpuPerStepMs - s.floorCpuPerStepMs, 3);
      }
      return [k, byAgent];
    }),
  ),
};
if (argv.includes("--json")) console.log(JSON.stringify(report));
else {
  console.log(
    `steps beside pi: median of ${runs} interleaved runs a size, ${busy} busy loop(s), load ${report.loadAverage.join(" → ")}, node ${process.version}`,
  );
  for (const k of kinds) printKind(k, report.kinds[k]);
}
