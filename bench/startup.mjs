#!/usr/bin/env node
// Start-up beside other programs: launch → first model request of `hands` and of pi
// (@mariozechner/pi-coding-agent, `pi -p --offline`), each against its own scripted server on
// loopback (bench/fake-model-server.mjs; one streamed answer, every body checked after the run),
// and launch → exit of `node -e 0` (what any Node program pays before its first line).
// Runs are interleaved so the machine's load hits all alike; medians are printed, and the
// ratio hands / pi. Run by `npm run bench` (after the step figures) and `npm run bench:startup`
// (--runs N, --no-pi, --hands PATH for another tree's bin, --cpu for the CPU time instead).
// "hands" runs in a fresh data folder, as a first run does; "hands, 2nd run" (--no-second to
// leave it out; one for each --hands bin too) in one where a task ran before, so memory has a file to open and read first;
// "hands, no code cache" (--no-uncached to leave it out) with HANDS_NO_CODE_CACHE=1, as the
// first run after a build starts (the bin compiles the bundle from source and saves V8's code).
//
// pi is installed on first use into bench/.peers/ (gitignored, never committed) with npm, and
// configured the way its docs/models.md says: a provider entry in the models.json of its
// PI_CODING_AGENT_DIR, here a fresh folder per run, as HANDS_DATA_DIR is for hands.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeModel } from "./fake-model-server.mjs";
import { handsFlags, median } from "./harness-run.mjs";

const here = dirname(fileURLToPath(import.meta.url));
export const PI_PACKAGE = "@mariozechner/pi-coding-agent";
export const PI_VERSION = "0.73.1";
const PEERS = join(here, ".peers");
const HANDS_BIN = join(here, "..", "packages", "cli", "bin", "hands.js");

/**
 * A pi agent folder in `ws` whose only provider is the model server at `url` (docs/models.md:
 * a custom provider speaking the Chat Completions API, model "bench"); pi reads it through
 * PI_CODING_AGENT_DIR.
 */
export function piAgentDir(ws, url) {
  const agentDir = join(ws, ".pi-agent");
  mkdirSync(agentDir);
  const models = {
    providers: {
      bench: { baseUrl: url, api: "openai-completions", apiKey: "sk-bench", models: [{ id: "bench" }] },
    },
  };
  writeFileSync(join(agentDir, "models.json"), JSON.stringify(models));
  return agentDir;
}

/** pi's bin, installed into bench/.peers on first use. */
export function installPi(log = (s) => console.error(s)) {
  const bin = join(PEERS, "node_modules", ".bin", "pi");
  const pkgFile = join(PEERS, "node_modules", ...PI_PACKAGE.split("/"), "package.json");
  if (existsSync(bin) && JSON.parse(readFileSync(pkgFile, "utf8")).version === PI_VERSION) return bin;
  log(`installing ${PI_PACKAGE}@${PI_VERSION} into ${PEERS} (once)…`);
  mkdirSync(PEERS, { recursive: true });
  writeFileSync(
    join(PEERS, "package.json"),
    `${JSON.stringify({ private: true, dependencies: { [PI_PACKAGE]: PI_VERSION } }, null, 2)}\n`,
  );
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: PEERS,
    stdio: ["ignore", "inherit", "inherit"],
  });
  return bin;
}

/**
 * One launch of `command args` (in `cwd`, with `env` added); resolves to the ms from spawn to
 * the first request the scripted server saw (or to exit when `model` is absent), after checking
 * the exit code, `check(stdout)` and every request body.
 */
async function launch({ label, command, args, env = {}, cwd, model, check }) {
  const started = performance.now();
  const child = spawn(command, args, {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const code = await new Promise((r, reject) => {
    child.on("error", reject);
    child.on("close", r);
  });
  const exitMs = performance.now() - started;
  if (code !== 0 || (check && !check(out)))
    throw new Error(`${label} failed (exit ${code}): ${out.slice(-500)} ${err.slice(-1500)}`);
  if (!model) return exitMs;
  const invalid = model.invalid();
  if (model.requests !== 1 || invalid.length > 0)
    throw new Error(`${label}: ${model.requests} requests, invalid: ${JSON.stringify(invalid)}`);
  return model.firstRequestAt - started;
}

/**
 * One measured `hands` launch in a fresh workspace and data folder; with `earlier`, after one
 * unmeasured run there, so the memory file exists and holds what that task taught (a user's
 * second run: memory is opened and read before the first request).
 */
async function handsRun(bin, { cpu, earlier, env: extraEnv = {} }) {
  const ws = mkdtempSync(join(tmpdir(), "hands-startup-"));
  const cpuFile = join(ws, ".cpu-at-request");
  const probe = cpu
    ? {
        NODE_OPTIONS: `--import=${join(here, "cpu-at-request.mjs")}`,
        HANDS_BENCH_CPU_AT_REQUEST: cpuFile,
      }
    : {};
  const once = async (env) => {
    const model = await startFakeModel({ steps: 1, file: "unused" });
    try {
      return await launch({
        label: "hands",
        command: bin,
        args: [...handsFlags(model.url, ws), "say done"],
        env: { HANDS_DATA_DIR: join(ws, ".data"), ...extraEnv, ...env },
        cwd: ws,
        model,
        check: (out) => JSON.parse(out.trim().split("\n").at(-1)).status === "done",
      });
    } finally {
      await model.close();
    }
  };
  try {
    if (earlier) await once({});
    const ms = await once(probe);
    return cpu ? Number(readFileSync(cpuFile, "utf8")) : ms;
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

/** The programs compared; `hands` entries may name other bins (an older tree) to compare. */
function programs({ pi, handsBins, cpu, second, uncached }) {
  const hands = handsBins.map((bin, i) => ({
    name: i === 0 ? "hands" : `hands (${bin})`,
    run: () => handsRun(bin, { cpu, earlier: false }),
  }));
  // After the others' first runs, each bin's second run (another tree's named by its bin).
  if (second)
    hands.splice(
      handsBins.length,
      0,
      ...handsBins.map((bin, i) => ({
        name: i === 0 ? "hands, 2nd run" : `hands (${bin}), 2nd run`,
        run: () => handsRun(bin, { cpu, earlier: true }),
      })),
    );
  // As a first run after `npm run build` starts: the chunks compiled from source (bin/hands.js).
  if (uncached)
    hands.splice(1, 0, {
      name: "hands, no code cache",
      run: () => handsRun(handsBins[0], { cpu, earlier: false, env: { HANDS_NO_CODE_CACHE: "1" } }),
    });
  const piRun = pi && {
    name: "pi",
    async run() {
      const ws = mkdtempSync(join(tmpdir(), "pi-startup-"));
      const model = await startFakeModel({ steps: 1, file: "unused" });
      const agentDir = piAgentDir(ws, model.url);
      try {
        return await launch({
          label: "pi",
          command: pi,
          args: ["-p", "--offline", "--provider", "bench", "--model", "bench", "say done"],
          env: { PI_CODING_AGENT_DIR: agentDir },
          cwd: ws,
          model,
          check: (out) => out.trim() === "Done.",
        });
      } finally {
        await model.close();
        rmSync(ws, { recursive: true, force: true });
      }
    },
  };
  const node = {
    name: "node -e 0",
    run: () => launch({ label: "node -e 0", command: process.execPath, args: ["-e", "0"], cwd: tmpdir() }),
  };
  return [...hands, ...(piRun ? [piRun] : []), node];
}

/**
 * Medians (ms) of `runs` interleaved launches of each program, the load average, the ratio.
 * With `cpu`, only the hands bins run, and each sample is the process's CPU time when its
 * first request left (bench/cpu-at-request.mjs) instead of the wall time.
 */
export async function measureStartup({
  runs = 11,
  pi = true,
  handsBins = [HANDS_BIN],
  cpu = false,
  second = true,
  uncached = true,
} = {}) {
  const list = programs({
    pi: pi && !cpu ? installPi() : undefined,
    handsBins,
    cpu,
    second,
    uncached,
  }).filter((p) => !cpu || p.name.startsWith("hands"));
  const samples = new Map(list.map((p) => [p.name, []]));
  const loadAtStart = loadavg()[0];
  for (const p of list) await p.run(); // warm the file cache once; not counted
  for (let i = 0; i < runs; i++) for (const p of list) samples.get(p.name).push(await p.run());
  const medians = Object.fromEntries([...samples].map(([k, v]) => [k, +median(v).toFixed(1)]));
  return {
    runs,
    medianMs: medians,
    samplesMs: Object.fromEntries([...samples].map(([k, v]) => [k, v.map((x) => +x.toFixed(1))])),
    ...(medians.pi ? { handsOverPi: +(medians.hands / medians.pi).toFixed(3) } : {}),
    // A user's second run (memory read before the first request) against pi's run.
    ...(medians.pi && medians["hands, 2nd run"]
      ? { secondOverPi: +(medians["hands, 2nd run"] / medians.pi).toFixed(3) }
      : {}),
    measure: cpu ? "process CPU ms at the first request" : "wall ms, launch to first request (node: to exit)",
    loadAverage: [+loadAtStart.toFixed(2), +loadavg()[0].toFixed(2)],
  };
}

export function printStartup(r) {
  console.log(`start-up, median of ${r.runs} interleaved launches (${r.measure}):`);
  const width = Math.max(24, ...Object.keys(r.medianMs).map((n) => n.length + 2));
  for (const [name, ms] of Object.entries(r.medianMs))
    console.log(
      `  ${name.padEnd(width)}${String(ms).padStart(8)} ms${name === "node -e 0" ? "   (launch → exit)" : ""}`,
    );
  if (r.handsOverPi !== undefined) console.log(`  hands / pi:             ${r.handsOverPi}   (goal ≤ 0.10)`);
  if (r.secondOverPi !== undefined)
    console.log(`  hands, 2nd run / pi:    ${r.secondOverPi}   (goal ≤ 0.10)`);
  console.log(`  load average, start/end: ${r.loadAverage.join(" / ")}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const opt = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
  // --hands PATH (repeatable): another tree's bin, measured in the same interleaving.
  const others = argv.flatMap((a, i) => (argv[i - 1] === "--hands" ? [resolve(a)] : []));
  const r = await measureStartup({
    runs: Number(opt("--runs") ?? 11) || 11,
    pi: !argv.includes("--no-pi"),
    handsBins: [HANDS_BIN, ...others],
    cpu: argv.includes("--cpu"),
    second: !argv.includes("--no-second"),
    uncached: !argv.includes("--no-uncached"),
  });
  if (argv.includes("--json")) console.log(JSON.stringify(r));
  else printStartup(r);
}
