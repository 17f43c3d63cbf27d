// Workspace paths a sandboxed command may not change: Hands' own settings (`.hands/`) and the
// instruction files the agent reads (AGENTS.md, CLAUDE.md) — a command planting those would
// steer the next run (settings) or the model (prompt injection). They are mounted read-only
// inside the sandbox whether or not they exist: a missing one gets an empty read-only folder
// as placeholder (invisible to git, skipped by the instruction loader), removed at the end.
// The agent's own file tools work on the host side and can still edit them.
//
// Limits of a mount: one on a symlink lands on its target, so a protected symlink (CLAUDE.md ->
// AGENTS.md) is checked after each command and put back if a command replaced it; and when the
// host replaces a protected file (an editor's rename), the kernel drops the mount in the
// sandbox, so the backends check the protected paths before each command and start a fresh
// session when one changed.
import { lstatSync, mkdirSync, readlinkSync, realpathSync, rmdirSync, rmSync, symlinkSync } from "node:fs";
import { isAbsolute, join, normalize, relative, sep } from "node:path";
import { isInside } from "./confine.js";
import type { ExecResult } from "./types.js";

export const DEFAULT_PROTECTED_PATHS: readonly string[] = [".hands", "AGENTS.md", "CLAUDE.md"];

export interface ProtectedPaths {
  /** Host paths to mount read-only, with their path relative to the workspace. */
  binds: Array<{ host: string; rel: string }>;
  /** Placeholder folders this session created (removed by `release`). */
  placeholders: string[];
  /** Protected symlinks, put back by `repair` when a command replaces them. */
  links: Array<{ host: string; rel: string; target: string }>;
  /** Identity (device and inode) of every protected path, as mounted. */
  identity: Map<string, string>;
}

function identityOf(path: string): string {
  try {
    const st = lstatSync(path);
    return `${st.dev}:${st.ino}:${st.isSymbolicLink() ? readlinkSync(path) : ""}`;
  } catch {
    return "missing";
  }
}

function checkedRel(name: string): string {
  const rel = normalize(name);
  if (isAbsolute(rel) || rel === "." || rel === ".." || rel.startsWith(`..${sep}`))
    throw new Error(`protected path must be relative to the workspace: ${name}`);
  return rel;
}

/** Prepares the protected paths of `workspace` (a real path) before a sandbox starts. */
export function prepareProtectedPaths(workspace: string, names: readonly string[]): ProtectedPaths {
  const out: ProtectedPaths = { binds: [], placeholders: [], links: [], identity: new Map() };
  for (const name of names) {
    const rel = checkedRel(name);
    const host = join(workspace, rel);
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(host);
    } catch {
      st = undefined;
    }
    if (!st) {
      try {
        mkdirSync(host, { mode: 0o755 });
        out.placeholders.push(host);
      } catch {
        // its folder does not exist either (a nested name) or something raced us: checked below
      }
      if (lstatSync(host, { throwIfNoEntry: false })?.isDirectory()) out.binds.push({ host, rel });
    } else if (st.isSymbolicLink()) {
      const target = readlinkSync(host);
      out.links.push({ host, rel, target });
      let real: string | undefined;
      try {
        real = realpathSync(host);
      } catch {
        real = undefined;
      }
      if (real && isInside(workspace, real) && real !== workspace)
        out.binds.push({ host: real, rel: relative(workspace, real) });
    } else {
      out.binds.push({ host, rel });
    }
    out.identity.set(host, identityOf(host));
  }
  // A symlink's target may be protected under its own name too: mount it once.
  const seen = new Set<string>();
  out.binds = out.binds.filter((b) => !seen.has(b.rel) && seen.add(b.rel));
  return out;
}

/** True when the host changed a protected path since the mounts were made (they may be gone). */
export function protectedPathsChanged(p: ProtectedPaths): boolean {
  for (const [host, id] of p.identity) if (identityOf(host) !== id) return true;
  return false;
}

/** Puts back protected symlinks a command replaced; returns their names. */
export function repairProtectedLinks(p: ProtectedPaths): string[] {
  const fixed: string[] = [];
  for (const l of p.links) {
    if (identityOf(l.host) === p.identity.get(l.host)) continue;
    rmSync(l.host, { recursive: true, force: true });
    symlinkSync(l.target, l.host);
    p.identity.set(l.host, identityOf(l.host));
    fixed.push(l.rel);
  }
  return fixed;
}

/** Removes the placeholders this session made (only while they are still empty folders). */
export function releaseProtectedPaths(p: Pick<ProtectedPaths, "placeholders">): void {
  for (const dir of p.placeholders) {
    try {
      rmdirSync(dir);
    } catch {
      // not empty (the host put something there) or gone
    }
  }
}

/**
 * The protected paths of one session across its restarts: the mounts to make at each start,
 * the check before each command, the repair and notes after it, the cleanup at the end.
 */
export class ProtectedPathsGuard {
  private current: ProtectedPaths | undefined;
  private readonly placeholders = new Set<string>();

  constructor(
    private readonly workspace: string,
    private readonly names: readonly string[] = DEFAULT_PROTECTED_PATHS,
  ) {}

  /** Before the sandbox (re)starts: the read-only mounts to make. */
  prepare(): Array<{ host: string; rel: string }> {
    this.current = prepareProtectedPaths(this.workspace, this.names);
    for (const p of this.current.placeholders) this.placeholders.add(p);
    return this.current.binds;
  }

  /** Before a command: true when the host replaced a protected path (its mount is gone). */
  changed(): boolean {
    return this.current !== undefined && protectedPathsChanged(this.current);
  }

  /** After a command: puts back replaced symlinks and says so (and whether it restarted). */
  finish(r: ExecResult, restarted = false): void {
    const fixed = this.current ? repairProtectedLinks(this.current) : [];
    if (fixed.length > 0)
      r.stderr += `${r.stderr ? "\n" : ""}[read-only in the sandbox, put back: ${fixed.join(", ")}]`;
    if (restarted)
      r.stderr += `${r.stderr ? "\n" : ""}[the sandbox session was restarted first (a protected file changed on the host); cwd, variables and background processes were reset]`;
  }

  /** When the session ends: the placeholders go. */
  release(): void {
    releaseProtectedPaths({ placeholders: [...this.placeholders] });
  }
}
