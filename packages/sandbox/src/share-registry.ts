// Which Hands processes (as root) share which workspaces with the dedicated sandbox uid, so one
// that is done does not take a share back from under another still running in the same
// workspace. One empty file per process and workspace in a root-only folder under /run:
// `<hash of the workspace>.<pid>`; files of processes that are gone do not count.
import { createHash } from "node:crypto";
import { closeSync, lstatSync, mkdirSync, openSync, readdirSync, rmSync } from "node:fs";
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

function key(workspace: string): string {
  return createHash("sha256").update(workspace).digest("hex").slice(0, 24);
}

export function registerShare(workspace: string): void {
  const dir = registry();
  if (!dir) return;
  try {
    closeSync(openSync(join(dir, `${key(workspace)}.${process.pid}`), "w", 0o600));
  } catch {
    // without a registry, each process takes back its own share
  }
}

export function unregisterShare(workspace: string): void {
  const dir = registry();
  if (dir) rmSync(join(dir, `${key(workspace)}.${process.pid}`), { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether another live process shares `workspace`, and whether it shares any workspace. */
export function sharedElsewhere(workspace: string): { workspace: boolean; any: boolean } {
  const dir = registry();
  const out = { workspace: false, any: false };
  if (!dir) return out;
  const mine = key(workspace);
  for (const name of readdirSync(dir)) {
    const m = /^([0-9a-f]{24})\.(\d+)$/.exec(name);
    if (!m || Number(m[2]) === process.pid) continue;
    if (!alive(Number(m[2]))) {
      rmSync(join(dir, name), { force: true });
      continue;
    }
    out.any = true;
    if (m[1] === mine) out.workspace = true;
  }
  return out;
}
