// Reading the workspace's source files for the index, the way the file tools do: the walk
// honours .gitignore, never enters .git or node_modules and never follows a symlinked folder
// (fs/walk.ts); a symlinked file is skipped (it may lead outside); every file is looked at with
// lstat through its folder's descriptor and opened with openAt (O_NOFOLLOW | O_NONBLOCK: a
// FIFO, socket or device is refused, never waited on); huge and binary files are skipped.
import { lstatSync, readSync } from "node:fs";
import { languageForPath } from "../outline/languages.js";
import { closeQuietly, type Opened, openAt, viaFd } from "../tools/fs/confined.js";
import { walkFiles } from "../tools/fs/walk.js";

/** Files larger than this are not indexed (generated bundles, data). */
export const MAP_MAX_FILE_BYTES = 512 * 1024;
/** At most this many source files are indexed. */
export const MAP_MAX_FILES = 20_000;

export interface SourceStat {
  /** Relative to the workspace, "/" separators. */
  rel: string;
  language: string;
  size: number;
  mtimeMs: number;
}

export type SkipReason = "symlink" | "special" | "too big" | "binary" | "unreadable";

export interface ScanVisitor {
  /** Whether the file must be read: false when the index has it at this size and time. */
  changed(stat: SourceStat): boolean;
  /** A changed file's text. */
  read(stat: SourceStat, text: string): Promise<void>;
  skipped(rel: string, reason: SkipReason): void;
}

export interface ScanOptions {
  workspace: string;
  roots?: readonly string[];
  signal?: AbortSignal;
  maxFiles?: number;
  maxFileBytes?: number;
}

/** Visits every source file of the workspace; returns whether it stopped at maxFiles. */
export async function scanSources(options: ScanOptions, visit: ScanVisitor): Promise<{ truncated: boolean }> {
  const maxFiles = options.maxFiles ?? MAP_MAX_FILES;
  const maxBytes = options.maxFileBytes ?? MAP_MAX_FILE_BYTES;
  let count = 0;
  const walk = walkFiles({
    workspace: options.workspace,
    base: options.workspace,
    ...(options.roots ? { roots: options.roots } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  for await (const entry of walk) {
    options.signal?.throwIfAborted();
    const language = languageForPath(entry.name);
    if (!language) continue;
    if (entry.isSymlink) {
      visit.skipped(entry.wsRel, "symlink");
      continue;
    }
    if (count >= maxFiles) return { truncated: true };
    count++;
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(viaFd(entry.dirFd, entry.name));
    } catch {
      visit.skipped(entry.wsRel, "unreadable");
      continue;
    }
    if (!st.isFile()) {
      visit.skipped(entry.wsRel, st.isSymbolicLink() ? "symlink" : "special");
      continue;
    }
    if (st.size > maxBytes) {
      visit.skipped(entry.wsRel, "too big");
      continue;
    }
    const stat: SourceStat = { rel: entry.wsRel, language, size: st.size, mtimeMs: st.mtimeMs };
    if (!visit.changed(stat)) continue;
    let opened: Opened;
    try {
      opened = openAt(entry.dirFd, entry.name, entry.wsRel);
    } catch (err) {
      visit.skipped(entry.wsRel, (err as Error).name === "SpecialFileError" ? "special" : "unreadable");
      continue;
    }
    stat.size = opened.stats.size;
    stat.mtimeMs = opened.stats.mtimeMs;
    const read = await readOpened(opened, maxBytes, options.signal);
    if ("skip" in read) {
      visit.skipped(entry.wsRel, read.skip);
      continue;
    }
    await visit.read(stat, read.text);
  }
  return { truncated: false };
}

/**
 * The open regular file's bytes, at most `max` (even if it grows meanwhile), read synchronously:
 * the files are small (≤ max) and thousands of them are read in a row, where the thread pool's
 * round trip per read and a 256 KB buffer per chunk (readFd) cost more than the reads.
 */
function readWhole(fd: number, size: number, max: number): Buffer {
  const buf = Buffer.allocUnsafe(Math.min(max, size) + 1);
  let pos = 0;
  while (pos < buf.length) {
    const n = readSync(fd, buf, pos, buf.length - pos, pos);
    if (n === 0) break;
    pos += n;
  }
  return buf.subarray(0, Math.min(pos, max));
}

/** The text of an opened file (closed here), or why it is skipped. */
export async function readOpened(
  opened: Opened,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<{ text: string } | { skip: SkipReason }> {
  let buffer: Buffer;
  try {
    if (!opened.stats.isFile()) return { skip: "special" };
    if (opened.stats.size > maxBytes) return { skip: "too big" };
    signal?.throwIfAborted();
    buffer = readWhole(opened.fd, opened.stats.size, maxBytes);
  } catch (err) {
    if (signal?.aborted) throw err;
    return { skip: "unreadable" };
  } finally {
    closeQuietly(opened.fd);
  }
  if (buffer.subarray(0, 8192).includes(0)) return { skip: "binary" };
  return { text: buffer.toString("utf8") };
}
