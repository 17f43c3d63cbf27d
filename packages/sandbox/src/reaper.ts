// Cleans what crashed runs left behind: containers labelled as Hands sessions whose owning
// process is gone (or that are older than the hard maximum age), empty session cgroups, and
// temp folders of uploads/images.
import { readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pruneCgroups } from "./cgroups.js";

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export interface ReapReport {
  containers: string[];
  cgroups: number;
  tempDirs: string[];
}

/** Removes leftovers; `live` are session ids still in use by this process. */
export async function reapLeftovers(options: {
  live?: Set<string>;
  maxAgeMs?: number;
  docker?: boolean;
  onReap?: (session: string, what: string) => void;
}): Promise<ReapReport> {
  const live = options.live ?? new Set<string>();
  const report: ReapReport = { containers: [], cgroups: 0, tempDirs: [] };
  if (options.docker) {
    const { dockerClient, LABEL_SESSION, LABEL_CREATED, LABEL_OWNER_PID } = await import("./docker.js");
    const docker = await dockerClient();
    const list = await docker.listContainers({ all: true, filters: { label: [LABEL_SESSION] } });
    for (const c of list) {
      const session = c.Labels[LABEL_SESSION] ?? "";
      if (live.has(session)) continue;
      const owner = Number(c.Labels[LABEL_OWNER_PID] ?? 0);
      const age = Date.now() - Date.parse(c.Labels[LABEL_CREATED] ?? "");
      const orphan = owner === process.pid ? true : !processAlive(owner);
      const old = options.maxAgeMs !== undefined && age > options.maxAgeMs;
      if (!orphan && !old) continue;
      await docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {});
      report.containers.push(session);
      options.onReap?.(session, `container ${c.Id.slice(0, 12)}`);
    }
  }
  report.cgroups = pruneCgroups(live);
  const tmp = tmpdir();
  for (const name of readdirSync(tmp)) {
    if (!name.startsWith("hands-upload-") && !name.startsWith("hands-image-")) continue;
    const p = join(tmp, name);
    try {
      // Only folders older than a minute: a live upload may be using a new one.
      if (Date.now() - statSync(p).mtimeMs < 60_000) continue;
      rmSync(p, { recursive: true, force: true });
      report.tempDirs.push(p);
    } catch {
      // gone
    }
  }
  return report;
}
