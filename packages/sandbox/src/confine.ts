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
 * Resolves `p` (relative to `root`, or absolute inside it) to a real absolute path inside the
 * real `root`. The longest existing prefix is realpath'd, so a symlink anywhere on the way that
 * leads out is refused; the not-yet-existing rest is appended. Throws SandboxPathError.
 */
export async function confinePath(root: string, p: string): Promise<string> {
  if (p.includes("\0")) throw new SandboxPathError(`path contains a NUL byte: ${JSON.stringify(p)}`);
  const realRoot = await realpath(root);
  const candidate = isAbsolute(p) ? resolve(p) : resolve(realRoot, p);
  // Walk up to the nearest existing ancestor (lstat: a dangling symlink counts as existing
  // and is resolved — and refused — below).
  let existing = candidate;
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
    throw new SandboxPathError(`path escapes the workspace (unresolvable symlink): ${p}`);
  }
  const full = rest.length > 0 ? join(real, ...rest) : real;
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
