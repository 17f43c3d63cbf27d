// A directory walker that respects .gitignore files (the workspace root's, nested ones, and
// .git/info/exclude), never enters .git, and skips node_modules unless asked. Used by glob
// and grep. Symlinked folders are not followed (no cycles, no escapes), and every folder is
// opened relative to its parent's descriptor without following symlinks (confined.ts), so a
// folder swapped for a symlink mid-walk is skipped, never listed.
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import ignoreFactory, { type Ignore } from "ignore";
import { isInsideRoot } from "../paths.js";
import {
  closeQuietly,
  type Opened,
  openAt,
  openInside,
  openListed,
  readSmallText,
  viaFd,
} from "./confined.js";

/** .gitignore files larger than this are not read. */
const IGNORE_FILE_MAX_BYTES = 1024 * 1024;
/** Folders nested deeper than this are not entered (each level holds one descriptor). */
export const WALK_MAX_DEPTH = 128;

export interface WalkEntry {
  /** Absolute path (for display: use dirFd/name to open it). */
  abs: string;
  /** Path relative to the walk's base, with "/" separators. */
  rel: string;
  /** Path relative to the workspace root, with "/" separators. */
  wsRel: string;
  isSymlink: boolean;
  /**
   * The open folder holding the entry, and its name in it: reach the entry only through
   * viaFd(dirFd, name) (or openAt / openListed), and only until the walk moves on.
   */
  dirFd: number;
  name: string;
}

export interface WalkOptions {
  /** Real path of the workspace root (where the root .gitignore lives). */
  workspace: string;
  /** Real folders the walk may be in (default: the workspace). */
  roots?: readonly string[];
  /** Real path of the folder to walk (inside the workspace, or the workspace itself). */
  base: string;
  /** Walk into node_modules folders (default false). */
  includeNodeModules?: boolean;
  /** Folder names never entered. Default: .git (always). */
  signal?: AbortSignal;
  /** Return false to skip a folder (relative to base, "/" separators). */
  enterDir?: (rel: string) => boolean;
}

interface Matcher {
  /** Folder of the .gitignore, relative to the workspace ("" for the root). */
  dir: string;
  ig: Ignore;
}

const createIgnore = ignoreFactory as unknown as () => Ignore;

async function loadIgnore(opens: (() => Opened)[], dir: string): Promise<Matcher | undefined> {
  let ig: Ignore | undefined;
  for (const open of opens) {
    const text = await readSmallText(open, IGNORE_FILE_MAX_BYTES);
    if (text === undefined) continue;
    ig ??= createIgnore();
    ig.add(text);
  }
  return ig ? { dir, ig } : undefined;
}

function toPosix(p: string): string {
  return sep === "/" ? p : p.split(sep).join("/");
}

/** Applies matchers from the root down; the deepest rule that matches wins. */
function isIgnored(matchers: Matcher[], wsRel: string, isDir: boolean): boolean {
  let ignored = false;
  for (const m of matchers) {
    const rel = m.dir === "" ? wsRel : wsRel.slice(m.dir.length + 1);
    if (rel === "") continue;
    const r = m.ig.test(isDir ? `${rel}/` : rel);
    if (r.ignored) ignored = true;
    else if (r.unignored) ignored = false;
  }
  return ignored;
}

/**
 * Yields the files under `base` (depth first, names sorted), honouring .gitignore files.
 * If `base` itself is ignored (the caller asked for it explicitly), the rules of the folders
 * above it are not applied.
 */
export async function* walkFiles(options: WalkOptions): AsyncGenerator<WalkEntry> {
  const { workspace, base } = options;
  const roots = options.roots ?? [workspace];
  const inWorkspace = isInsideRoot(workspace, base);
  // Rules from the workspace root down to base's parent folders.
  let matchers: Matcher[] = [];
  if (inWorkspace) {
    const inRoots = (p: string) => () => openInside(roots, p);
    const rootMatcher = await loadIgnore(
      [inRoots(join(workspace, ".git", "info", "exclude")), inRoots(join(workspace, ".gitignore"))],
      "",
    );
    if (rootMatcher) matchers.push(rootMatcher);
    const parts = toPosix(relative(workspace, base)).split("/").filter(Boolean);
    for (let i = 1; i <= parts.length; i++) {
      const dir = parts.slice(0, i).join("/");
      const m = await loadIgnore([inRoots(join(workspace, dir, ".gitignore"))], dir);
      if (m) matchers.push(m);
    }
    const baseRel = parts.join("/");
    if (
      baseRel !== "" &&
      isIgnored(
        matchers.filter((m) => m.dir !== baseRel),
        baseRel,
        true,
      )
    ) {
      // Explicitly asked for an ignored folder: keep only its own (and deeper) rules.
      matchers = matchers.filter((m) => m.dir === baseRel);
    }
  }
  const baseWsRel = inWorkspace ? toPosix(relative(workspace, base)) : "";

  async function* walk(
    dirFd: number,
    dirAbs: string,
    dirRel: string,
    depth: number,
    chain: Matcher[],
  ): AsyncGenerator<WalkEntry> {
    if (options.signal?.aborted) return;
    let entries: Dirent[];
    try {
      entries = await readdir(viaFd(dirFd), { withFileTypes: true });
    } catch {
      return; // unreadable folder: skip
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    let here = chain;
    if (dirRel !== "" && inWorkspace && entries.some((e) => e.name === ".gitignore" && !e.isDirectory())) {
      const wsRel = baseWsRel ? `${baseWsRel}/${dirRel}` : dirRel;
      const m = await loadIgnore(
        [() => openListed(roots, dirFd, ".gitignore", join(dirAbs, ".gitignore"))],
        wsRel,
      );
      if (m) here = [...chain, m];
    }
    for (const e of entries) {
      const rel = dirRel ? `${dirRel}/${e.name}` : e.name;
      const wsRel = baseWsRel ? `${baseWsRel}/${rel}` : rel;
      const abs = join(dirAbs, e.name);
      if (e.isDirectory()) {
        if (e.name === ".git") continue;
        if (e.name === "node_modules" && !options.includeNodeModules) continue;
        if (depth >= WALK_MAX_DEPTH) continue;
        if (isIgnored(here, wsRel, true)) continue;
        if (options.enterDir && !options.enterDir(rel)) continue;
        let sub: Opened;
        try {
          sub = openAt(dirFd, e.name, abs); // no symlink followed: a swapped-in link is skipped
        } catch {
          continue;
        }
        try {
          if (sub.stats.isDirectory()) yield* walk(sub.fd, abs, rel, depth + 1, here);
        } finally {
          closeQuietly(sub.fd);
        }
      } else if (e.isFile() || e.isSymbolicLink()) {
        if (isIgnored(here, wsRel, false)) continue;
        yield { abs, rel, wsRel, isSymlink: e.isSymbolicLink(), dirFd, name: e.name };
      }
    }
  }
  let top: Opened;
  try {
    top = openInside(roots, base);
  } catch {
    return; // the base vanished or was swapped since the caller checked it
  }
  try {
    if (top.stats.isDirectory()) yield* walk(top.fd, base, "", 0, matchers);
  } finally {
    closeQuietly(top.fd);
  }
}
