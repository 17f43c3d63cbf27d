// CPU a sandbox's own processes used: read from its cgroup (bwrap's, or the docker container's),
// shared by bench/sandbox.mjs and bench/sandbox-exec-ab.mjs.
import { readFileSync } from "node:fs";
import { join } from "node:path";

const TICK_MS = 1000 / 100; // USER_HZ: /proc times are in 1/100 s

/** The cgroup folders that may hold a sandbox's processes (the first that answers counts). */
export function sandboxGroups(kind, sb) {
  if (kind === "bwrap") return sb.cgroup ? [...sb.cgroup.dirs].reverse() : [];
  if (kind === "docker") {
    const id = sb.containerId;
    return [
      `/sys/fs/cgroup/cpuacct/docker/${id}`,
      `/sys/fs/cgroup/system.slice/docker-${id}.scope`,
      `/sys/fs/cgroup/docker/${id}`,
    ];
  }
  return [];
}

/** CPU (ms) used so far by the processes of a cgroup folder (v1 cpuacct, v2 cpu.stat, else /proc). */
export function groupCpuMs(dirs) {
  for (const d of dirs) {
    try {
      const v2 = /usage_usec (\d+)/.exec(readFileSync(join(d, "cpu.stat"), "utf8"));
      if (v2) return Number(v2[1]) / 1000;
    } catch {}
    try {
      return Number(readFileSync(join(d, "cpuacct.usage"), "utf8")) / 1e6;
    } catch {}
  }
  // No accounting file: the processes' own times and those of the children they reaped.
  for (const d of dirs) {
    let pids = [];
    try {
      pids = readFileSync(join(d, "cgroup.procs"), "utf8").split("\n").filter(Boolean);
    } catch {
      continue;
    }
    let ms = 0;
    for (const p of pids) {
      try {
        const f = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ");
        ms += (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_MS;
      } catch {}
    }
    return ms;
  }
  return Number.NaN;
}

/**
 * CPU (ms) of one process and of the children it reaped: the local backend's helper
 * (packages/sandbox/src/local-helper.ts), which waits for every job it forks.
 */
export function processCpuMs(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_MS;
  } catch {
    return Number.NaN;
  }
}
