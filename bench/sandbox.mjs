#!/usr/bin/env node
// Sandbox speed: session create, exec round trip in a live session, one-shot run, for bwrap
// and docker (medians of N runs), then 20 sessions at once and a leak check (cgroups, mounts,
// containers, temp folders counted before and after). `npm run bench:sandbox [-- --runs N]`.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import {
  BwrapSandbox,
  checkBwrap,
  checkDocker,
  DockerSandbox,
  imageExists,
  imageTag,
  LABEL_SESSION,
  listCgroups,
  runBwrapOnce,
} from "../packages/sandbox/dist/index.js";

const runsArg = process.argv.indexOf("--runs");
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 20;
const ws = mkdtempSync(join(tmpdir(), "hands-bench-ws-"));
const limits = { memoryBytes: 512 * 1024 * 1024, pids: 256, cpus: 1 };

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const fmt = (ms) => `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
const rows = [];
const report = (name, goal, values) => {
  const m = median(values);
  rows.push({ name, goal, median: m, pass: goal === undefined ? "" : m <= goal ? "yes" : "NO" });
  console.log(
    `${name.padEnd(34)} median ${fmt(m).padStart(10)}  (n=${values.length}${goal ? `, goal ≤ ${goal} ms` : ""})`,
  );
};

async function docker() {
  return (await checkDocker()).ok
    ? (await import("../packages/sandbox/dist/docker.js")).dockerClient()
    : undefined;
}

async function counts() {
  const d = await docker();
  const containers = d
    ? (await d.listContainers({ all: true, filters: { label: [LABEL_SESSION] } })).length
    : 0;
  return {
    cgroups: listCgroups().length,
    mounts: readFileSync("/proc/self/mountinfo", "utf8").split("\n").length,
    containers,
    tempDirs: readdirSync(tmpdir()).filter(
      (n) => n.startsWith("hands-") && !n.startsWith("hands-bench-ws-") && !n.startsWith("hands-etc-"),
    ).length,
    processes: readdirSync("/proc").filter((n) => /^\d+$/.test(n)).length,
  };
}

async function time(f) {
  const t = performance.now();
  const r = await f();
  return [performance.now() - t, r];
}

async function backend(kind, Cls, goals) {
  // Warm up (page cache, first spawn).
  const warm = await Cls.create({ workspace: ws, limits });
  await warm.exec("true");
  await warm.destroy();
  const creates = [];
  for (let i = 0; i < RUNS; i++) {
    const [ms, sb] = await time(() => Cls.create({ workspace: ws, limits }));
    creates.push(ms);
    await sb.destroy();
  }
  report(`${kind}: session create`, goals.create, creates);
  const sb = await Cls.create({ workspace: ws, limits });
  const execs = [];
  for (let i = 0; i < Math.max(RUNS, 100); i++) {
    const [ms, r] = await time(() => sb.exec("true"));
    if (r.exitCode !== 0) throw new Error(`exec failed: ${JSON.stringify(r)}`);
    execs.push(ms);
  }
  report(`${kind}: exec in a live session`, goals.exec, execs);
  await sb.destroy();
  if (kind === "bwrap") {
    const ones = [];
    for (let i = 0; i < RUNS; i++)
      ones.push((await time(() => runBwrapOnce({ workspace: ws, limits }, "true")))[0]);
    report("bwrap: one-shot run", goals.oneShot, ones);
  }
  // 20 sessions at once on 2 cores: all answer, nothing leaks.
  const before = await counts();
  const [ms, all] = await time(() =>
    Promise.all(Array.from({ length: 20 }, () => Cls.create({ workspace: ws, limits }))),
  );
  const answers = await Promise.all(all.map((s, i) => s.exec(`echo ${i}`)));
  const ok = answers.every((r, i) => r.stdout === `${i}\n`);
  await Promise.all(all.map((s) => s.destroy()));
  await new Promise((r) => setTimeout(r, 300));
  const after = await counts();
  const leaks = Object.keys(before).filter((k) => k !== "processes" && after[k] > before[k]);
  console.log(
    `${kind}: 20 concurrent sessions created in ${fmt(ms)}, all answered: ${ok}; before ${JSON.stringify(before)} after ${JSON.stringify(after)}${leaks.length ? ` LEAK: ${leaks.join(",")}` : " no leaks"}`,
  );
  rows.push({
    name: `${kind}: 20 concurrent sessions`,
    goal: undefined,
    median: ms,
    pass: ok && leaks.length === 0 ? "yes" : "NO",
  });
}

try {
  if (checkBwrap().ok) await backend("bwrap", BwrapSandbox, { create: 30, exec: 3, oneShot: 30 });
  else console.log(`bwrap: unavailable (${checkBwrap().reason})`);
  if ((await checkDocker()).ok && (await imageExists(imageTag())))
    await backend("docker", DockerSandbox, { create: 400, exec: 40 });
  else console.log("docker: unavailable (no engine or image; run scripts/test-env.sh)");
} finally {
  rmSync(ws, { recursive: true, force: true });
}
console.log(JSON.stringify(rows));
