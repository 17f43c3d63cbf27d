// Workspace confinement for the sandbox's own file API and working directories.
import { realpathSync } from "node:fs";
import { lstat, realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

export class SandboxPathError extends Error {
  override name = "SandboxPathError";
}

/** True when `p` is `root` itself or lies below it (both absolute and normalised). */
export function isInside(root: string, p: string): boolean {
  if (p === root) return true;
  const base = root.endsWith(sep) ? root : root + sep;
  return p.startsWith(base);
}

/**
 * The real path of the absolute path `p`: its longest existing prefix realpath'd (so every
 * symlink on the way is resolved), with the not-yet-existing rest appended. Throws
 * SandboxPathError when the path goes through a dangling symlink.
 */
export async function realPathOf(p: string): Promise<string> {
  // Common case: the path exists and one synchronous syscall resolves it (cheaper than a
  // thread-pool round trip, and this runs on every file operation).
  try {
    return realpathSync.native(p);
  } catch {
    // walk up below
  }
  // Walk up to the nearest existing ancestor (lstat: a dangling symlink counts as existing
  // and is resolved — and refused — below).
  let existing = p;
  const rest: string[] = [];
  for (;;) {
    try {
      await lstat(existing);
      break;
    } catch {
      const parent = dirname(existing);
      if (parent === existing) break;
      rest.unshift(existing.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
      existing = parent;
    }
  }
  let real: string;
  try {
    real = await realpath(existing);
  } catch {
    throw new SandboxPathError(`path goes through a broken symbolic link: ${p}`);
  }
  return rest.length > 0 ? join(real, ...rest) : real;
}

/**
 * Resolves `p` (relative to `root`, or absolute inside it) to a real absolute path inside the
 * real `root`; a symlink anywhere on the way that leads out is refused. Throws SandboxPathError.
 */
export async function confinePath(root: string, p: string): Promise<string> {
  if (p.includes("\0")) throw new SandboxPathError(`path contains a NUL byte: ${JSON.stringify(p)}`);
  const realRoot = await realpath(root);
  const candidate = isAbsolute(p) ? resolve(p) : resolve(realRoot, p);
  let full: string;
  try {
    full = await realPathOf(candidate);
  } catch {
    throw new SandboxPathError(`path escapes the workspace (unresolvable symlink): ${p}`);
  }
  if (!isInside(realRoot, full)) throw new SandboxPathError(`path escapes the workspace: ${p}`);
  return full;
}

export function realpathOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

export function relativeTo(root: string, p: string): string {
  return relative(root, p) || ".";
}
