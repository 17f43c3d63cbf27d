#!/usr/bin/env node
// A/B of one command step (`true` in a live session) against another checkout, for bwrap,
// docker and local: both builds are loaded in one process and their sessions take turns, call
// by call, so a loaded machine weighs on both alike. Per side: median and p90 wall time, the
// CPU this process spent per call, and the CPU of the sandbox's own processes per call (its
// cgroup). `node bench/sandbox-exec-ab.mjs /path/to/other/checkout [N=200] [--busy 2]`.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { groupCpuMs, sandboxGroups } from "./sandbox-cpu.mjs";

const args = process.argv.slice(2);
const busyAt = args.indexOf("--busy");
const BUSY = busyAt >= 0 ? Number(args[busyAt + 1]) : 0;
if (busyAt >= 0) args.splice(busyAt, 2);
const other = args[0];
if (!other) throw new Error("usage: node bench/sandbox-exec-ab.mjs /path/to/other/checkout [N] [--busy 2]");
const N = Number(args[1] ?? 200);
const sides = {
  other: await import(resolve(other, "packages/sandbox/dist/index.js")),
  this: await import(new URL("../packages/sandbox/dist/index.js", import.meta.url).href),
};
const limits = { memoryBytes: 512 * 1024 * 1024, pids: 256, cpus: 1 };

const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)];
const loops = Array.from({ length: BUSY }, () =>
  spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
);
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
console.log(`${BUSY} busy loop(s); load average ${load()}; ${N} calls a side, taking turns`);
const ws = mkdtempSync(join(tmpdir(), "hands-exec-ab-"));
try {
  for (const kind of ["bwrap", "docker", "local"]) {
    const sbs = {};
    try {
      for (const [name, M] of Object.entries(sides)) {
        if (kind === "bwrap") sbs[name] = await M.BwrapSandbox.create({ workspace: ws, limits });
        else if (kind === "docker") sbs[name] = await M.DockerSandbox.create({ workspace: ws, limits });
        else sbs[name] = new M.LocalSandbox({ workspace: ws });
      }
    } catch (e) {
      console.log(`${kind}: unavailable (${e.message})`);
      for (const s of Object.values(sbs)) await s.destroy();
      continue;
    }
    const res = {};
    for (const [name, sb] of Object.entries(sbs)) {
      for (let i = 0; i < 10; i++) await sb.exec("true");
      res[name] = { wall: [], host: 0, sb0: groupCpuMs(sandboxGroups(kind, sb)) };
    }
    for (let i = 0; i < N; i++) {
      for (const name of i % 2 ? ["other", "this"] : ["this", "other"]) {
        const c = process.cpuUsage();
        const t = performance.now();
        const r = await sbs[name].exec("true");
        res[name].wall.push(performance.now() - t);
        const d = process.cpuUsage(c);
        res[name].host += (d.user + d.system) / 1000;
        if (r.exitCode !== 0) throw new Error(`${kind}/${name}: ${JSON.stringify(r)}`);
      }
    }
    for (const [name, r] of Object.entries(res)) {
      const sbMs = (groupCpuMs(sandboxGroups(kind, sbs[name])) - r.sb0) / N;
      console.log(
        `${kind.padEnd(6)} ${name.padEnd(5)} median ${q(r.wall, 0.5).toFixed(2)} ms  p90 ${q(r.wall, 0.9).toFixed(2)} ms  CPU/call: host ${(r.host / N).toFixed(2)} ms${Number.isFinite(sbMs) ? `, sandbox ${sbMs.toFixed(2)} ms` : ""}`,
      );
    }
    for (const s of Object.values(sbs)) await s.destroy();
  }
} finally {
  for (const l of loops) l.kill("SIGKILL");
  rmSync(ws, { recursive: true, force: true });
}
console.log(`load average at the end ${load()}`);
