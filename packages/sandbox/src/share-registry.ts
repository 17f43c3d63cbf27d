// Which Hands processes (as root) share which workspaces with the dedicated sandbox uid, so one
// that is done does not take a share back from under another still running in the same
// workspace, nor the pass-through on a folder above it that another still needs. One empty file
// per process and folder in a root-only folder under /run: `<hash of the folder>.<pid>` for the
// workspace and for each folder above it that got a pass-through entry; files of processes that
// are gone do not count. Sharing and taking back run under one lock across processes: a check
// of the registry and the ACL changes that follow it must not interleave with another
// process's (one ending would take back the pass-through another had just been given).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, constants, lstatSync, mkdirSync, openSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const DIR = "/run/hands-shares";

/** The registry folder, or undefined when it is not safely ours (root's, 0700, not a link). */
function registry(): string | undefined {
  try {
    mkdirSync(DIR, { mode: 0o700 });
  } catch {
    // exists already (checked below), or /run is not writable
  }
  const st = lstatSync(DIR, { throwIfNoEntry: false });
  return st?.isDirectory() && st.uid === 0 && (st.mode & 0o077) === 0 ? DIR : undefined;
}

/** How long a share or take-back waits for another process's before going on without the lock. */
const LOCK_WAIT_S = 300;

/**
 * Runs `fn` holding the registry's lock (a kernel flock on `.lock`, so a process that dies
 * mid-way frees it). util-linux `flock` takes the lock on the descriptor it inherits: the lock
 * belongs to the open file, which stays open here until `fn` is done. Without a registry or
 * the `flock` program, `fn` runs unlocked (as before).
 */
export function withShareLock<T>(fn: () => T): T {
  const dir = registry();
  let fd: number | undefined;
  try {
    if (dir) {
      fd = openSync(join(dir, ".lock"), constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
      const r = spawnSync("flock", ["-x", "-w", String(LOCK_WAIT_S), "3"], {
        stdio: ["ignore", "ignore", "ignore", fd],
        timeout: (LOCK_WAIT_S + 5) * 1000,
      });
      if (r.status !== 0) {
        closeSync(fd);
        fd = undefined;
      }
    }
  } catch {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  }
  try {
    return fn();
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function key(workspace: string): string {
  return createHash("sha256").update(workspace).digest("hex").slice(0, 24);
}

export function registerShare(workspace: string, above: readonly string[]): void {
  const dir = registry();
  if (!dir) return;
  try {
    for (const folder of [workspace, ...above])
      closeSync(openSync(join(dir, `${key(folder)}.${process.pid}`), "w", 0o600));
  } catch {
    // without a registry, each process takes back its own share
  }
}

export function unregisterShare(workspace: string, above: readonly string[]): void {
  const dir = registry();
  if (!dir) return;
  for (const folder of [workspace, ...above])
    rmSync(join(dir, `${key(folder)}.${process.pid}`), { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether another live process shares `workspace`, and which of the folders `above` it another
 * live process still needs a pass-through on.
 */
export function sharedElsewhere(
  workspace: string,
  above: readonly string[],
): { workspace: boolean; above: Set<string> } {
  const dir = registry();
  const out = { workspace: false, above: new Set<string>() };
  if (!dir) return out;
  const others = new Set<string>();
  for (const name of readdirSync(dir)) {
    const m = /^([0-9a-f]{24})\.(\d+)$/.exec(name);
    if (!m || Number(m[2]) === process.pid) continue;
    if (!alive(Number(m[2]))) {
      rmSync(join(dir, name), { force: true });
      continue;
    }
    others.add(m[1] as string);
  }
  out.workspace = others.has(key(workspace));
  for (const folder of above) if (others.has(key(folder))) out.above.add(folder);
  return out;
}
