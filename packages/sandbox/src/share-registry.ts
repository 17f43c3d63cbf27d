// Which Hands processes (as root) share which workspaces with the dedicated sandbox uid, so one
// that is done does not take a share back from under another still running in the same
// workspace, nor the pass-through on a folder above it that another still needs. One empty file
// per process and folder in a root-only folder under /run: `<hash of the folder>.<pid>` for the
// workspace and for each folder above it that got a pass-through entry; files of processes that
// are gone do not count.
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
