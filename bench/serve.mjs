#!/usr/bin/env node
// hands serve through the official e2b SDK, on loopback: sandbox create p50/p99 and
// `commands.run('true')` round trip p50/p99 per backend (bwrap with and without the warm pool,
// docker, gVisor), then N sandboxes at once with C clients running M commands in all —
// completed, failed, leaked (sandbox folders, cgroups, containers and rows left after the kills).
// `npm run bench:serve [-- --creates 30 --runs 200 --sandboxes 100 --clients 20 --commands 2000 --json]`
// Per backend also fork, snapshot and restore (a sandbox from the snapshot) p50/p99, over a home of
// --fork-files small files (default 200, ~800 KB); `--forks N` of each (default 10; 0 skips them),
// `--fork-only` for just those.
// `npm run bench:serve -- --forwarding [--runs 500]`: instead, two nodes sharing PostgreSQL (the
// private test server of scripts/postgres.sh, or --database URL): the `commands.run('true')`
// round trip to a sandbox on node A, straight to A and through node B (which forwards it).
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import {
  checkDocker,
  dockerClient,
  imageExists,
  imageTag,
  listCgroups,
} from "../packages/sandbox/dist/index.js";
import { startServe } from "../packages/serve/dist/index.js";

const arg = (name, d) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};
const CREATES = arg("creates", 30);
const RUNS = arg("runs", 200);
const SANDBOXES = arg("sandboxes", 100);
const CLIENTS = arg("clients", 20);
const COMMANDS = arg("commands", 2000);
const JSON_OUT = process.argv.includes("--json");
const FORKS = arg("forks", 10);
const FORK_FILES = arg("fork-files", 200);
const FORK_ONLY = process.argv.includes("--fork-only");

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (ms) => `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
const results = [];
function report(name, xs, goal) {
  const r = { name, n: xs.length, p50: pct(xs, 50), p99: pct(xs, 99), goal };
  results.push(r);
  console.log(
    `${name.padEnd(56)} p50 ${fmt(r.p50).padStart(9)}  p99 ${fmt(r.p99).padStart(9)}  (n=${r.n}${goal ? `, goal p50 ≤ ${goal} ms: ${r.p50 <= goal ? "met" : "NOT met"}` : ""})`,
  );
}

async function withServe(options, f) {
  const dataDir = mkdtempSync(join(tmpdir(), "hsb-"));
  const s = await startServe({ dataDir, ...options });
  const { key } = await s.keys.create("bench", "k", { maxSandboxes: 1000, maxCpus: 1000, maxMemoryMB: 1e7 });
  process.env.E2B_API_KEY = key;
  process.env.E2B_API_URL = s.apiUrl;
  process.env.E2B_SANDBOX_URL = s.sandboxUrl;
  try {
    return await f(s, dataDir);
  } finally {
    await s.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const { Sandbox } = await import("e2b");

if (process.argv.includes("--forwarding")) {
  await forwardingOverhead();
  process.exit(0);
}

async function forwardingOverhead() {
  const { execFileSync } = await import("node:child_process");
  const { randomBytes } = await import("node:crypto");
  const { default: pg } = await import("pg");
  const i = process.argv.indexOf("--database");
  const adminUrl = i > 0 ? process.argv[i + 1] : "postgres://hands@127.0.0.1:55432/postgres";
  if (i < 0)
    execFileSync("bash", [new URL("../scripts/postgres.sh", import.meta.url).pathname], { stdio: "inherit" });
  const name = `hsbench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const dirs = ["a", "b", "one"].map((n) => mkdtempSync(join(tmpdir(), `hsb-${n}-`)));
  const [a, b] = await Promise.all(
    ["a", "b"].map((node, k) => startServe({ dataDir: dirs[k], database: url.toString(), node, warm: {} })),
  );
  // For scale: one node on SQLite, the default.
  const one = await startServe({ dataDir: dirs[2], warm: {} });
  try {
    const { key } = await a.keys.create("bench", "k");
    const { key: oneKey } = await one.keys.create("bench", "k");
    const opts = (s, k = key) => ({ apiKey: k, apiUrl: s.apiUrl, sandboxUrl: s.sandboxUrl });
    const direct = await Sandbox.create(opts(a));
    const viaB = await Sandbox.connect(direct.sandboxId, opts(b));
    const sqlite = await Sandbox.create(opts(one, oneKey));
    const series = [
      ["direct", direct],
      ["forwarded", viaB],
      ["sqlite", sqlite],
    ];
    for (let w = 0; w < 10; w++) for (const [, sb] of series) await sb.commands.run("true");
    const times = { direct: [], forwarded: [], sqlite: [] };
    // Interleaved, so all see the same background load.
    for (let r = 0; r < RUNS; r++) {
      for (const [k, sb] of series) {
        const t = performance.now();
        await sb.commands.run("true");
        times[k].push(performance.now() - t);
      }
    }
    report("commands.run('true') one node, SQLite", times.sqlite);
    report("commands.run('true') straight to its node (PostgreSQL)", times.direct);
    report("commands.run('true') through another node", times.forwarded);
    await sqlite.kill();
    console.log(
      `forwarding adds p50 ${fmt(pct(times.forwarded, 50) - pct(times.direct, 50))}, p99 ${fmt(pct(times.forwarded, 99) - pct(times.direct, 99))}`,
    );
    await direct.kill();
    if (JSON_OUT) console.log(JSON.stringify({ results }, null, 2));
  } finally {
    await Promise.all([a.close(), b.close(), one.close()]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/** fork(), createSnapshot() and Sandbox.create(snapshotId), each timed until the SDK has it. */
async function forkAndSnapshot(label, template, n, warm = {}) {
  if (n === 0) return;
  await withServe({ warm }, async (s) => {
    // With a pool, each timed call finds a warm sandbox ready, as on a steady service.
    const ready = async () => {
      for (let i = 0; i < 400 && Object.keys(warm).length > 0 && s.service.poolSize < 1; i++)
        await new Promise((r) => setTimeout(r, 25));
    };
    const sb = await Sandbox.create(template, { timeoutMs: 600_000 });
    // python3, not coreutils: this gVisor answers coreutils' statx with EINVAL.
    await sb.commands.run(
      `python3 -c "import os; os.makedirs('proj'); [open('proj/f%d' % i, 'wb').write(os.urandom(4096)) for i in range(${FORK_FILES})]"`,
    );
    const fork = [];
    const snapshot = [];
    const restore = [];
    for (let i = 0; i < n; i++) {
      await ready();
      let t = performance.now();
      const [f] = await sb.fork();
      fork.push(performance.now() - t);
      if (!(f instanceof Sandbox)) throw f;
      await f.kill();
      t = performance.now();
      const snap = await sb.createSnapshot();
      snapshot.push(performance.now() - t);
      await ready();
      t = performance.now();
      const r = await Sandbox.create(snap.snapshotId);
      restore.push(performance.now() - t);
      // The restored sandbox has the files (the timing is of a usable copy, not of an empty one).
      const count = `python3 -c "import os; print(len(os.listdir('proj')))"`;
      if ((await r.commands.run(count)).stdout.trim() !== String(FORK_FILES))
        throw new Error(`restore ${label}: files missing`);
      await r.kill();
      await Sandbox.deleteSnapshot(snap.snapshotId);
    }
    report(`fork ${label} (${FORK_FILES} files)`, fork);
    report(`createSnapshot ${label}`, snapshot);
    report(`create from snapshot ${label}`, restore);
    await sb.kill();
  });
}

async function createAndRun(label, template, options, creates, runs) {
  if (FORK_ONLY) return;
  const warm = Object.keys(options.warm ?? {}).length > 0;
  await withServe(options, async (s) => {
    // Let a warm pool fill before timing (a steady service has one ready).
    for (let i = 0; i < 400 && warm && s.service.poolSize < Object.values(options.warm)[0]; i++)
      await new Promise((r) => setTimeout(r, 25));
    const create = [];
    for (let i = 0; i < creates; i++) {
      const t = performance.now();
      const sb = await Sandbox.create(template);
      create.push(performance.now() - t);
      await sb.kill();
      // Between creates a real client does work; give the pool the time a short task takes.
      if (warm) await new Promise((r) => setTimeout(r, 150));
    }
    report(`create ${label}`, create, template === "base" ? 50 : undefined);
    if (runs === 0) return;
    const sb = await Sandbox.create(template);
    for (let i = 0; i < 5; i++) await sb.commands.run("true");
    const run = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await sb.commands.run("true");
      run.push(performance.now() - t);
    }
    report(`commands.run('true') ${label}`, run, template === "base" ? 5 : undefined);
    await sb.kill();
  });
}

await createAndRun("bwrap (warm pool)", "base", { warm: { base: 4 } }, CREATES, RUNS);
await createAndRun("bwrap (cold)", "base", { warm: {} }, CREATES, 0);
await forkAndSnapshot("bwrap (warm pool)", "base", FORKS, { base: 2 });
await forkAndSnapshot("bwrap (cold)", "base", FORKS);
const dockerOk = (await checkDocker()).ok && (await imageExists(imageTag()));
if (dockerOk) {
  await createAndRun("docker", "docker", { warm: {} }, Math.ceil(CREATES / 3), Math.ceil(RUNS / 2));
  await forkAndSnapshot("docker", "docker", Math.ceil(FORKS / 2));
  const info = await (await dockerClient()).info();
  if (info.Runtimes?.runsc) {
    await createAndRun("gvisor", "gvisor", { warm: {} }, Math.ceil(CREATES / 3), Math.ceil(RUNS / 2));
    await forkAndSnapshot("gvisor", "gvisor", Math.ceil(FORKS / 2));
  } else console.log("gvisor: skipped (docker has no runsc runtime)");
} else console.log("docker, gvisor: skipped (no docker or no sandbox image)");
if (FORK_ONLY) {
  if (JSON_OUT) console.log(JSON.stringify({ results }, null, 2));
  process.exit(0);
}

// Load: N sandboxes alive at once, C clients sharing M commands.
const load = await withServe({ warm: {}, capacity: SANDBOXES }, async (s, dataDir) => {
  const cgBefore = new Set(listCgroups());
  const t0 = performance.now();
  const made = await Promise.allSettled(
    Array.from({ length: SANDBOXES }, () => Sandbox.create({ timeoutMs: 600_000 })),
  );
  const boxes = made.filter((m) => m.status === "fulfilled").map((m) => m.value);
  const createFailed = made.length - boxes.length;
  const createMs = performance.now() - t0;
  let next = 0;
  let completed = 0;
  let failed = 0;
  const errors = new Map();
  const lat = [];
  const t1 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (;;) {
        const i = next++;
        if (i >= COMMANDS) return;
        const sb = boxes[i % boxes.length];
        const t = performance.now();
        try {
          const r = await sb.commands.run(`echo ${i}`);
          if (r.stdout === `${i}\n`) completed++;
          else {
            failed++;
            errors.set("wrong output", (errors.get("wrong output") ?? 0) + 1);
          }
        } catch (e) {
          failed++;
          const k = String(e.message).slice(0, 80);
          errors.set(k, (errors.get(k) ?? 0) + 1);
        }
        lat.push(performance.now() - t);
      }
    }),
  );
  const runMs = performance.now() - t1;
  await Promise.all(boxes.map((b) => b.kill()));
  await new Promise((r) => setTimeout(r, 500));
  const leakedDirs = readdirSync(join(dataDir, "sandboxes")).length;
  const leakedCgroups = listCgroups().filter((c) => !cgBefore.has(c) && c.includes("serve-")).length;
  const leakedRows = (await s.store.countByState()).running ?? 0;
  return {
    sandboxes: SANDBOXES,
    created: boxes.length,
    createFailed,
    createAllMs: Math.round(createMs),
    clients: CLIENTS,
    commands: COMMANDS,
    completed,
    failed,
    errors: Object.fromEntries(errors),
    runP50: pct(lat, 50),
    runP99: pct(lat, 99),
    commandsPerSecond: Math.round((COMMANDS / runMs) * 1000),
    leaked: { folders: leakedDirs, cgroups: leakedCgroups, runningRows: leakedRows },
  };
});
console.log(
  `load: ${load.created}/${load.sandboxes} sandboxes created in ${load.createAllMs} ms (${load.createFailed} failed); ` +
    `${load.clients} clients, ${load.commands} commands: ${load.completed} completed, ${load.failed} failed, ` +
    `p50 ${fmt(load.runP50)} p99 ${fmt(load.runP99)}, ${load.commandsPerSecond}/s; leaked ${JSON.stringify(load.leaked)}`,
);
if (load.failed) console.log("errors:", load.errors);
if (JSON_OUT) console.log(JSON.stringify({ results, load }, null, 2));
// The docker client keeps a connection to dockerd open: end here rather than wait on it.
process.exit(0);
