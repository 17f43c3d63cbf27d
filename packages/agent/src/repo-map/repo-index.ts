// The workspace's index of definitions and references, kept up to date without parsing a file
// twice: each file is keyed by its size and modification time, and a refresh only lstat()s the
// unchanged ones. The index can be saved to a file in Hands' data folder and loaded by the next
// session, so a second session's first map parses only what changed since.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { readSettingsFile } from "../safe-read.js";
import { type ScanOptions, type SkipReason, type SourceStat, scanSources } from "./scan.js";
import { type FileTags, tagsOf } from "./tags.js";

export interface IndexedFile {
  language: string;
  size: number;
  mtimeMs: number;
  tags: FileTags;
}

export interface RefreshStats {
  /** Source files in the index after the refresh. */
  files: number;
  /** Files parsed in this refresh (new or changed). */
  parsed: number;
  /** Files left out of the index, by reason. */
  skipped: Partial<Record<SkipReason, number>>;
  /** Files dropped because they are gone (or are now skipped). */
  removed: number;
  /** The walk stopped at the file limit. */
  truncated: boolean;
  /** The refresh was aborted: the index has what was parsed by then. */
  aborted: boolean;
  ms: number;
}

export interface RepoIndexOptions extends Omit<ScanOptions, "signal"> {
  /** Where the index is saved between sessions (a file in Hands' data folder), if anywhere. */
  cacheFile?: string;
}

const CACHE_VERSION = 1;
/** A saved index larger than this is not read (it is rebuilt instead). */
const CACHE_MAX_BYTES = 256 * 1024 * 1024;

export class RepoIndex {
  readonly files = new Map<string, IndexedFile>();
  private running: Promise<unknown> = Promise.resolve();
  /** Goes up whenever a file is added, changed or dropped (what depends on the files is made again). */
  version = 0;
  private dirty = false;

  constructor(readonly options: RepoIndexOptions) {
    if (options.cacheFile) this.load(options.cacheFile);
  }

  /** Brings the index up to date with the workspace (one refresh at a time). */
  refresh(signal?: AbortSignal): Promise<RefreshStats> {
    const next = this.running.then(() => this.doRefresh(signal));
    this.running = next.catch(() => {});
    return next;
  }

  private async doRefresh(signal?: AbortSignal): Promise<RefreshStats> {
    const started = performance.now();
    const seen = new Set<string>();
    const stats: RefreshStats = {
      files: 0,
      parsed: 0,
      skipped: {},
      removed: 0,
      truncated: false,
      aborted: false,
      ms: 0,
    };
    try {
      const { truncated } = await scanSources(
        { ...this.options, ...(signal ? { signal } : {}) },
        {
          changed: (s: SourceStat) => {
            seen.add(s.rel);
            const known = this.files.get(s.rel);
            return (
              !known || known.size !== s.size || known.mtimeMs !== s.mtimeMs || known.language !== s.language
            );
          },
          read: async (s: SourceStat, text: string) => {
            let tags: FileTags;
            try {
              tags = await tagsOf(text, s.language);
            } catch {
              tags = { defs: [], refs: {} };
            }
            this.files.set(s.rel, { language: s.language, size: s.size, mtimeMs: s.mtimeMs, tags });
            this.dirty = true;
            this.version++;
            stats.parsed++;
          },
          skipped: (rel: string, reason: SkipReason) => {
            stats.skipped[reason] = (stats.skipped[reason] ?? 0) + 1;
            seen.delete(rel);
          },
        },
      );
      stats.truncated = truncated;
      // The walk ends quietly when aborted: what it did not reach is not gone.
      if (signal?.aborted) stats.aborted = true;
    } catch (err) {
      if (!signal?.aborted) throw err;
      stats.aborted = true;
    }
    if (!stats.aborted) {
      for (const rel of [...this.files.keys()]) {
        if (seen.has(rel)) continue;
        this.files.delete(rel);
        stats.removed++;
        this.dirty = true;
        this.version++;
      }
    }
    stats.files = this.files.size;
    stats.ms = performance.now() - started;
    return stats;
  }

  /** Saves to (and, when still empty, loads from) `file` from now on. */
  useCache(file: string): void {
    this.options.cacheFile = file;
    if (this.files.size === 0) this.load(file);
    else this.dirty = true;
  }

  /** Writes the index to its cache file when it changed (atomically: a rename). */
  save(): void {
    const file = this.options.cacheFile;
    if (!file || !this.dirty) return;
    const rows = [...this.files].map(([rel, f]) => [rel, f.language, f.size, f.mtimeMs, f.tags]);
    const text = JSON.stringify({ version: CACHE_VERSION, workspace: this.options.workspace, files: rows });
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, file);
    this.dirty = false;
  }

  /** Loads a saved index; a missing, foreign or damaged file is ignored (the index is rebuilt). */
  private load(file: string): void {
    let data: unknown;
    try {
      const text = readSettingsFile(file, { maxBytes: CACHE_MAX_BYTES, noFollow: true });
      if (text === undefined) return;
      data = JSON.parse(text);
    } catch {
      return;
    }
    const d = data as { version?: unknown; workspace?: unknown; files?: unknown };
    if (d.version !== CACHE_VERSION || d.workspace !== this.options.workspace || !Array.isArray(d.files))
      return;
    for (const row of d.files) {
      if (!Array.isArray(row) || row.length !== 5) continue;
      const [rel, language, size, mtimeMs, tags] = row as [unknown, unknown, unknown, unknown, FileTags];
      if (typeof rel !== "string" || typeof language !== "string") continue;
      if (typeof size !== "number" || typeof mtimeMs !== "number") continue;
      if (!tags || !Array.isArray(tags.defs) || typeof tags.refs !== "object" || tags.refs === null) continue;
      this.files.set(rel, { language, size, mtimeMs, tags: { defs: tags.defs, refs: tags.refs } });
    }
    this.version++;
  }
}

/** One index per workspace in this process: the first-request map and the repo_map tool share it. */
const shared = new Map<string, RepoIndex>();

/** The process's index of `workspace`, made on first use (with `cacheFile` when given then). */
export function sharedIndex(options: RepoIndexOptions): RepoIndex {
  const key = `${options.workspace}\u0000${(options.roots ?? []).join("\u0000")}`;
  let index = shared.get(key);
  if (!index) {
    index = new RepoIndex(options);
    shared.set(key, index);
  } else if (options.cacheFile && !index.options.cacheFile) {
    index.useCache(options.cacheFile);
  }
  return index;
}
