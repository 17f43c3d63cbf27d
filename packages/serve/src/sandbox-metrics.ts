// A sandbox's resource figures in the shape of E2B's SandboxMetric (GET /sandboxes/{id}/metrics),
// plus the number of processes. The in-sandbox agent reads them from the sandbox's own /proc
// (its pid namespace) and home folder; CPU % is the change of its processes' CPU time between two
// readings. The agent runs where sandboxed code runs, so its reply is checked like any input.
import type { SandboxRuntime } from "./runtime.js";
import type { SandboxRow } from "./store.js";

export interface SandboxMetric {
  timestamp: string;
  timestampUnix: number;
  cpuCount: number;
  /** Busy share of the sandbox's CPUs, 0..100. */
  cpuUsedPct: number;
  memUsed: number;
  memTotal: number;
  memCache: number;
  diskUsed: number;
  diskTotal: number;
  /** Hands extension: processes running in the sandbox. */
  pids: number;
}

interface Reading {
  ticks: number;
  hz: number;
  rss: number;
  pids: number;
  diskUsed: number;
  diskTotal: number;
  at: number;
}

/** A reading older than this is not used for CPU %: two fresh ones are taken instead. */
const STALE_MS = 30_000;
const FIRST_INTERVAL_MS = 200;
const previous = new WeakMap<SandboxRuntime, Reading>();

function count(v: unknown, what: string): number {
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
    throw new Error(`sandbox agent sent a bad ${what}: ${String(v).slice(0, 40)}`);
  return v;
}

async function read(rt: SandboxRuntime): Promise<Reading> {
  const r = (await rt.agent.call<Record<string, unknown>>("stats")) ?? {};
  const hz = count(r.hz, "clock rate");
  if (hz === 0) throw new Error("sandbox agent sent a clock rate of 0");
  return {
    ticks: count(r.ticks, "CPU time"),
    hz,
    rss: count(r.rss, "memory figure"),
    pids: count(r.pids, "process count"),
    diskUsed: count(r.diskUsed, "disk figure"),
    diskTotal: count(r.diskTotal, "disk size"),
    at: performance.now(),
  };
}

/** The sandbox's figures now (CPU % since the last call, or over a short interval if none). */
export async function sampleMetrics(rt: SandboxRuntime, row: SandboxRow): Promise<SandboxMetric> {
  let before = previous.get(rt);
  if (!before || performance.now() - before.at > STALE_MS) {
    before = await read(rt);
    await new Promise((r) => setTimeout(r, FIRST_INTERVAL_MS));
  }
  const now = await read(rt);
  previous.set(rt, now);
  const seconds = (now.at - before.at) / 1000;
  const cpuSeconds = Math.max(0, now.ticks - before.ticks) / now.hz;
  const pct = seconds > 0 ? (cpuSeconds / seconds / row.cpus) * 100 : 0;
  const memTotal = row.memoryMB * 1024 * 1024;
  const t = Date.now();
  return {
    timestamp: new Date(t).toISOString(),
    timestampUnix: Math.floor(t / 1000),
    cpuCount: row.cpus,
    cpuUsedPct: Math.round(Math.min(100, pct) * 100) / 100,
    // Resident sizes summed (shared pages count once per process): an upper bound, capped at the limit.
    memUsed: Math.min(now.rss, memTotal),
    memTotal,
    memCache: 0,
    diskUsed: now.diskUsed,
    diskTotal: Math.max(now.diskTotal, now.diskUsed),
    pids: now.pids,
  };
}
