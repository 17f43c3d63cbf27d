// Cleans what crashed runs left behind: containers labelled as Hands sessions whose owning
// process is gone (or that are older than the hard maximum age), empty session cgroups, and
// temp folders of uploads/images.
import { readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pruneCgroups } from "./cgroups.js";
import { processAlive } from "./proc.js";

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
  /** Empty cgroups younger than this are left alone (default a minute: about to be joined). */
  cgroupMinAgeMs?: number;
}): Promise<ReapReport> {
  const live = options.live ?? new Set<string>();
  const report: ReapReport = { containers: [], cgroups: 0, tempDirs: [] };
  if (options.docker) {
    const { reapDeadContainers } = await import("./docker.js");
    report.containers = await reapDeadContainers({
      live: options.live,
      ...(options.maxAgeMs !== undefined ? { maxAgeMs: options.maxAgeMs } : {}),
      ...(options.onReap ? { onReap: options.onReap } : {}),
    });
  }
  report.cgroups = pruneCgroups(live, options.cgroupMinAgeMs);
  for (const tmp of new Set([tmpdir(), "/tmp"])) reapTempDirs(tmp, report);
  return report;
}

/** Upload/image temp folders older than a minute, and private folders of dead processes. */
function reapTempDirs(tmp: string, report: ReapReport): void {
  let names: string[];
  try {
    names = readdirSync(tmp);
  } catch {
    return;
  }
  for (const name of names) {
    const rt = /^hands-rt-(\d+)-/.exec(name);
    if (!name.startsWith("hands-upload-") && !name.startsWith("hands-image-") && !rt) continue;
    // A process's private folder: only once that process is gone.
    if (rt && processAlive(Number(rt[1]))) continue;
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
}
