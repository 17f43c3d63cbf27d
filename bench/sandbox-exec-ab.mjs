#!/usr/bin/env node
// A/B of one command step (`true` in a live session) against another checkout, for bwrap,
// docker and local: both builds are loaded in one process and their sessions take turns, call
// by call, so a loaded machine weighs on both alike. Per side: median and p90 wall time, the
// CPU this process spent per call, and the CPU of the sandbox's own processes per call (its
// cgroup; local: the children this process reaped during the call — a spawned `bash -c` — plus
// the persistent helper's own CPU and its jobs', where there is one).
// `node bench/sandbox-exec-ab.mjs /path/to/other/checkout [N=200] [--busy 2]`.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { groupCpuMs, processCpuMs, sandboxGroups } from "./sandbox-cpu.mjs";

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
    // local: what the command itself cost — children this process reaped (a spawned bash) and
    // the helper's CPU with its reaped jobs (a private field: read as JS).
    // The reaped children's time is taken around each call (a spawned bash is reaped within
    // it); the helper's over the whole run (it forks the next job after a call has returned).
    // Page faults too (load-independent; a fault costs ~45 µs on this guest): this process's
    // own, its reaped children's, the helper's and its jobs'.
    const stat = (pid) => {
      try {
        return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ").map(Number);
      } catch {
        return [];
      }
    };
    const reapedMs = () => {
      const f = stat("self");
      return (f[13] + f[14]) * 10;
    };
    const myFaults = () => {
      const me = stat("self");
      return me[7] + me[8];
    };
    const faults = (sb) => {
      const h = sb.helper?.child?.pid ? stat(sb.helper.child.pid) : [];
      return h.length ? h[7] + h[8] : 0;
    };
    const helperMs = (sb) => (sb.helper?.child?.pid ? processCpuMs(sb.helper.child.pid) : 0);
    for (const [name, sb] of Object.entries(sbs)) {
      for (let i = 0; i < 10; i++) await sb.exec("true");
      res[name] = {
        wall: [],
        host: 0,
        sb0: groupCpuMs(sandboxGroups(kind, sb)),
        local: -helperMs(sb),
        faults: -faults(sb),
      };
    }
    for (let i = 0; i < N; i++) {
      for (const name of i % 2 ? ["other", "this"] : ["this", "other"]) {
        const c = process.cpuUsage();
        const l0 = kind === "local" ? reapedMs() : 0;
        const f0 = kind === "local" ? myFaults() : 0;
        const t = performance.now();
        const r = await sbs[name].exec("true");
        res[name].wall.push(performance.now() - t);
        const d = process.cpuUsage(c);
        res[name].host += (d.user + d.system) / 1000;
        if (kind === "local") {
          res[name].local += reapedMs() - l0;
          res[name].faults += myFaults() - f0;
        }
        if (r.exitCode !== 0) throw new Error(`${kind}/${name}: ${JSON.stringify(r)}`);
      }
    }
    if (kind === "local")
      for (const [name, r] of Object.entries(res)) {
        r.local += helperMs(sbs[name]);
        r.faults += faults(sbs[name]);
      }
    for (const [name, r] of Object.entries(res)) {
      const sbMs = kind === "local" ? r.local / N : (groupCpuMs(sandboxGroups(kind, sbs[name])) - r.sb0) / N;
      console.log(
        `${kind.padEnd(6)} ${name.padEnd(5)} median ${q(r.wall, 0.5).toFixed(2)} ms  p90 ${q(r.wall, 0.9).toFixed(2)} ms  CPU/call: host ${(r.host / N).toFixed(2)} ms${Number.isFinite(sbMs) ? `, ${kind === "local" ? "commands (bash, helper)" : "sandbox"} ${sbMs.toFixed(2)} ms` : ""}${kind === "local" ? `; page faults/call (this process, reaped, helper) ${(r.faults / N).toFixed(0)}` : ""}`,
      );
    }
    for (const s of Object.values(sbs)) await s.destroy();
  }
} finally {
  for (const l of loops) l.kill("SIGKILL");
  rmSync(ws, { recursive: true, force: true });
}
console.log(`load average at the end ${load()}`);
