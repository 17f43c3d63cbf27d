// How much a session may add to its workspace (the workspace is a host folder, so a size-capped
// mount is not available without loop devices or project quotas). The rule: at most
// `limitBytes` of disk space more than the workspace used when the session started. The
// baseline is measured in the background at start; while a command runs, the filesystem's
// free space is polled (one statfs, microseconds) and only when it fell by a noticeable
// amount is the workspace walked to see whether the growth is really the session's.
import { statfsSync } from "node:fs";
import { lstat, opendir, statfs } from "node:fs/promises";
import { join } from "node:path";
import type { ExecOptions, ExecResult } from "./types.js";

export const DEFAULT_WORKSPACE_QUOTA_BYTES = 1024 * 1024 * 1024;
const POLL_MS = 100;

/** Disk space used by the files under `dir` (allocated blocks; symlinks are not followed). */
export async function diskUsage(dir: string, signal?: AbortSignal): Promise<number> {
  let total = 0;
  const todo = [dir];
  while (todo.length > 0) {
    if (signal?.aborted) break;
    const d = todo.pop() as string;
    let handle: Awaited<ReturnType<typeof opendir>>;
    try {
      handle = await opendir(d);
    } catch {
      continue;
    }
    for await (const e of handle) {
      const p = join(d, e.name);
      if (e.isDirectory()) todo.push(p);
      try {
        total += (await lstat(p)).blocks * 512;
      } catch {
        // gone
      }
    }
  }
  return total;
}

async function freeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

export class WorkspaceQuota {
  private baseline: Promise<number>;

  constructor(
    readonly workspace: string,
    readonly limitBytes: number,
  ) {
    this.baseline = diskUsage(workspace);
    this.baseline.catch(() => {});
  }

  /** Bytes the session added so far (negative: it freed space). */
  async growth(): Promise<number> {
    return (await diskUsage(this.workspace)) - (await this.baseline);
  }

  /**
   * Watches one command: calls `onExceeded(growth)` once when the session's growth passes the
   * limit. Returns the function that stops watching and gives the last growth it measured.
   */
  watch(onExceeded: (growth: number) => void): () => Promise<number | undefined> {
    let stopped = false;
    let measured: number | undefined;
    let last: number | undefined;
    let busy = false;
    // Walk when the filesystem lost a quarter of the remaining allowance (or 16 MiB).
    const trigger = Math.max(16 * 1024 * 1024, Math.floor(this.limitBytes / 4));
    const tick = async () => {
      if (busy || stopped) return;
      busy = true;
      try {
        const free = await freeBytes(this.workspace);
        // Drops are measured from the most free space seen: what others free on the same
        // filesystem meanwhile (a test run's cleanup, a build) must not hide the session's writes.
        if (last === undefined || free > last) last = free;
        if (last - free >= trigger) {
          last = free;
          measured = await this.growth();
          if (!stopped && measured > this.limitBytes) {
            stopped = true;
            onExceeded(measured);
          }
        }
      } catch {
        // the workspace vanished: nothing to measure
      } finally {
        busy = false;
      }
    };
    // The first reading is one statfs call, made here: a thread-pool round trip per command
    // is a wait on a loaded machine.
    try {
      const s = statfsSync(this.workspace);
      last = s.bavail * s.bsize;
    } catch {
      // the workspace vanished: the ticks find out
    }
    const timer = setInterval(() => void tick(), POLL_MS);
    timer.unref();
    return async () => {
      stopped = true;
      clearInterval(timer);
      return measured;
    };
  }
}

/** The line a result carries when its command was stopped for filling the workspace. */
export function quotaNote(limitBytes: number, growth: number): string {
  const mib = (n: number) => Math.round(n / 1048576);
  return `[killed: workspace quota exceeded (limit ${mib(limitBytes)} MiB of new data per session; the session has added ${mib(growth)} MiB) — delete files to go on]`;
}

/**
 * Runs one command under the quota: when the session's growth passes the limit the command is
 * stopped (through its abort signal) and its result says why.
 */
export async function execWithQuota(
  quota: WorkspaceQuota | undefined,
  options: ExecOptions,
  run: (options: ExecOptions) => Promise<ExecResult>,
): Promise<ExecResult> {
  if (!quota) return run(options);
  const ac = new AbortController();
  const outer = options.signal;
  const forward = () => ac.abort();
  if (outer?.aborted) ac.abort();
  else outer?.addEventListener("abort", forward, { once: true });
  let over: number | undefined;
  const stop = quota.watch((growth) => {
    over = growth;
    ac.abort();
  });
  try {
    const r = await run({ ...options, signal: ac.signal });
    await stop();
    if (over !== undefined && !outer?.aborted) {
      r.aborted = false;
      r.quotaExceeded = true;
      r.stderr += `${r.stderr ? "\n" : ""}${quotaNote(quota.limitBytes, over)}`;
    }
    return r;
  } finally {
    await stop();
    outer?.removeEventListener("abort", forward);
  }
}
