// The workspace's index of definitions and references, kept up to date without parsing a file
// twice: each file is keyed by its size and modification time, and a refresh only lstat()s the
// unchanged ones. The index can be saved to a file in Hands' data folder and loaded by the next
// session, so a second session's first map parses only what changed since.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { readSettingsFile } from "../safe-read.js";
import { openInside } from "../tools/fs/confined.js";
import { onFilesWritten, workspaceGeneration } from "./freshness.js";
import { quickTagsOf } from "./quick-tags.js";
import {
  MAP_MAX_FILE_BYTES,
  readOpened,
  type ScanOptions,
  type SkipReason,
  type SourceStat,
  scanSources,
} from "./scan.js";
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
  /** Files given quick tags (patterns, no parse) because parsing ran past `parseForMs`; parsed after. */
  quick: number;
  /** Files left out of the index, by reason. */
  skipped: Partial<Record<SkipReason, number>>;
  /** Files dropped because they are gone (or are now skipped). */
  removed: number;
  /** The walk stopped at the file limit. */
  truncated: boolean;
  /** The refresh was aborted: the index has what was parsed by then. */
  aborted: boolean;
  /** Whether the workspace was walked (false: the index was fresh, RefreshOptions.unlessFreshFor). */
  walked: boolean;
  ms: number;
}

export interface RepoIndexOptions extends Omit<ScanOptions, "signal"> {
  /** Where the index is saved between sessions (a file in Hands' data folder), if anywhere. */
  cacheFile?: string;
}

export interface RefreshOptions {
  signal?: AbortSignal;
  /**
   * Parse changed files for at most this long, then give the rest quick tags (quick-tags.ts)
   * and resolve; the index parses those right after, in the background (whenParsed()).
   * Default: parse everything before resolving.
   */
  parseForMs?: number;
  /**
   * No walk when the index is fresh() for this long (ms): what the file tools wrote was re-read
   * already, and nothing else can have changed. Default: always walk.
   */
  unlessFreshFor?: number;
}

/** Text kept for the background parse at most (the rest is parsed at the next refresh). */
const PENDING_MAX_BYTES = 64 * 1024 * 1024;
/** The background parse lets other work run this often (it shares the thread with the session). */
const YIELD_EVERY_MS = 20;

const CACHE_VERSION = 2;
/** A saved index larger than this is not read (it is rebuilt instead). */
const CACHE_MAX_BYTES = 256 * 1024 * 1024;

export class RepoIndex {
  readonly files = new Map<string, IndexedFile>();
  private running: Promise<unknown> = Promise.resolve();
  /** Goes up whenever a file is added, changed or dropped (what depends on the files is made again). */
  version = 0;
  private dirty = false;
  /** Files added, changed or dropped since the last takeChanges() (all: more than that is known). */
  private changedRels = new Set<string>();
  private changedAll = true;
  /** workspaceGeneration() at the last complete walk, and when it ended (undefined: never walked). */
  private walkedAt: { generation: number; ms: number } | undefined;

  constructor(readonly options: RepoIndexOptions) {
    if (options.cacheFile) this.load(options.cacheFile);
  }

  /** Brings the index up to date with the workspace (one refresh at a time). */
  refresh(signalOrOptions?: AbortSignal | RefreshOptions): Promise<RefreshStats> {
    const o: RefreshOptions =
      signalOrOptions instanceof AbortSignal ? { signal: signalOrOptions } : (signalOrOptions ?? {});
    const pending: Pending[] = [];
    const next = this.running.then(() => this.doRefresh(o, pending));
    // What was left to the background is parsed before the next refresh or update starts.
    this.running = next.then(() => this.parsePending(pending, o.signal)).catch(() => {});
    return next;
  }

  /** Resolves when every refresh so far is done, background parsing included. */
  whenParsed(): Promise<void> {
    return this.running.then(() => {});
  }

  /**
   * Re-reads only `rels` (workspace-relative files the caller just wrote), without walking the
   * workspace: the update after an edit. A file not in the index yet is left to the next
   * refresh (only the walk knows whether .gitignore leaves it out); a file gone is dropped.
   */
  update(rels: readonly string[], signal?: AbortSignal): Promise<RefreshStats> {
    const next = this.running.then(() => this.doUpdate(rels, signal));
    this.running = next.catch(() => {});
    return next;
  }

  private async doUpdate(rels: readonly string[], signal?: AbortSignal): Promise<RefreshStats> {
    const started = performance.now();
    const stats = { ...emptyStats(), walked: false };
    const roots = this.options.roots ?? [this.options.workspace];
    const maxBytes = this.options.maxFileBytes ?? MAP_MAX_FILE_BYTES;
    for (const rel of new Set(rels)) {
      signal?.throwIfAborted();
      const known = this.files.get(rel);
      if (!known) {
        this.walkedAt = undefined; // a new file: only a walk knows whether it is indexed
        continue;
      }
      let text: string | undefined;
      let size = 0;
      let mtimeMs = 0;
      try {
        const opened = openInside(roots, `${this.options.workspace}/${rel}`);
        size = opened.stats.size;
        mtimeMs = opened.stats.mtimeMs;
        if (size === known.size && mtimeMs === known.mtimeMs && !known.tags.quick) continue;
        const read = await readOpened(opened, maxBytes, signal);
        if ("text" in read) text = read.text;
        else stats.skipped[read.skip] = (stats.skipped[read.skip] ?? 0) + 1;
      } catch (err) {
        if (signal?.aborted) throw err;
      }
      if (text === undefined) {
        this.files.delete(rel); // gone, swapped for a symlink or a FIFO, grown too big
        stats.removed++;
      } else {
        this.files.set(rel, {
          language: known.language,
          size,
          mtimeMs,
          tags: await parsedTags(text, known.language),
        });
        stats.parsed++;
      }
      this.changed(rel);
    }
    stats.files = this.files.size;
    stats.ms = performance.now() - started;
    return stats;
  }

  /** Notes that `rel` was added, changed or dropped. */
  private changed(rel: string): void {
    this.dirty = true;
    this.version++;
    if (this.changedRels.size > 10_000) this.changedAll = true;
    else this.changedRels.add(rel);
  }

  /** What changed since the last call: the files, or `all` when the caller should start over. */
  takeChanges(): { all: boolean; rels: Set<string> } {
    const taken = { all: this.changedAll, rels: this.changedRels };
    this.changedAll = false;
    this.changedRels = new Set();
    return taken;
  }

  /**
   * Whether a walk would find nothing new: the last one was complete, nothing but the file
   * tools' reported writes happened in the workspace since (freshness.ts), and it is younger
   * than `maxAgeMs` (a person's editor reports nothing).
   */
  fresh(maxAgeMs: number): boolean {
    const w = this.walkedAt;
    return (
      w !== undefined &&
      w.generation === workspaceGeneration(this.options.workspace) &&
      performance.now() - w.ms < maxAgeMs
    );
  }

  /** Parses the files a refresh gave quick tags, unless they changed again meanwhile. */
  private async parsePending(pending: Pending[], signal?: AbortSignal): Promise<void> {
    let slice = performance.now();
    for (const p of pending) {
      if (signal?.aborted) return;
      const known = this.files.get(p.rel);
      if (!known || known.size !== p.size || known.mtimeMs !== p.mtimeMs || !known.tags.quick) continue;
      known.tags = await parsedTags(p.text, known.language);
      this.files.set(p.rel, { ...known });
      this.changed(p.rel);
      if (performance.now() - slice > YIELD_EVERY_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        slice = performance.now();
      }
    }
  }

  private async doRefresh(o: RefreshOptions, pending: Pending[]): Promise<RefreshStats> {
    const signal = o.signal;
    const started = performance.now();
    const generation = workspaceGeneration(this.options.workspace);
    let pendingBytes = 0;
    const seen = new Set<string>();
    const stats = emptyStats();
    if (o.unlessFreshFor !== undefined && this.fresh(o.unlessFreshFor)) {
      stats.files = this.files.size;
      stats.walked = false;
      stats.ms = performance.now() - started;
      return stats;
    }
    try {
      const { truncated } = await scanSources(
        { ...this.options, ...(signal ? { signal } : {}) },
        {
          changed: (s: SourceStat) => {
            seen.add(s.rel);
            const known = this.files.get(s.rel);
            return (
              !known ||
              known.size !== s.size ||
              known.mtimeMs !== s.mtimeMs ||
              known.language !== s.language ||
              known.tags.quick === true
            );
          },
          read: async (s: SourceStat, text: string) => {
            let tags: FileTags;
            const late = o.parseForMs !== undefined && performance.now() - started > o.parseForMs;
            if (late) {
              tags = quickTagsOf(text, s.language);
              stats.quick++;
              if (pendingBytes + text.length <= PENDING_MAX_BYTES) {
                pending.push({ rel: s.rel, size: s.size, mtimeMs: s.mtimeMs, text });
                pendingBytes += text.length;
              }
            } else {
              tags = await parsedTags(text, s.language);
              stats.parsed++;
            }
            this.files.set(s.rel, { language: s.language, size: s.size, mtimeMs: s.mtimeMs, tags });
            this.changed(s.rel);
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
      this.walkedAt = { generation, ms: performance.now() };
      for (const rel of [...this.files.keys()]) {
        if (seen.has(rel)) continue;
        this.files.delete(rel);
        stats.removed++;
        this.changed(rel);
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
    // Quick tags are not saved: the next session parses those files.
    const rows = [...this.files]
      .filter(([, f]) => !f.tags.quick)
      .map(([rel, f]) => [rel, f.language, f.size, f.mtimeMs, f.tags]);
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
      const notes = typeof tags.notes === "object" && tags.notes !== null ? tags.notes : {};
      this.files.set(rel, { language, size, mtimeMs, tags: { defs: tags.defs, refs: tags.refs, notes } });
    }
    this.version++;
    this.changedAll = true;
  }
}

interface Pending {
  rel: string;
  size: number;
  mtimeMs: number;
  text: string;
}

function emptyStats(): RefreshStats {
  return {
    files: 0,
    parsed: 0,
    quick: 0,
    skipped: {},
    removed: 0,
    truncated: false,
    aborted: false,
    walked: true,
    ms: 0,
  };
}

/** The file's tags from a parse; a file tree-sitter cannot parse has none. */
async function parsedTags(text: string, language: string): Promise<FileTags> {
  try {
    return await tagsOf(text, language);
  } catch {
    return { defs: [], refs: {} };
  }
}

/** One index per workspace in this process: the first-request map and the repo_map tool share it. */
const shared = new Map<string, RepoIndex>();

/** The process's index of `workspace`, made on first use (with `cacheFile` when given then). */
export function sharedIndex(options: RepoIndexOptions): RepoIndex {
  const key = `${options.workspace}\u0000${(options.roots ?? []).join("\u0000")}`;
  let index = shared.get(key);
  if (!index) {
    const made = new RepoIndex(options);
    index = made;
    shared.set(key, made);
    // What write_file and edit_file wrote is re-read at once (no walk), in the background.
    onFilesWritten(options.workspace, {
      written: (rels) => void made.update(rels).catch(() => {}),
    });
  } else if (options.cacheFile && !index.options.cacheFile) {
    index.useCache(options.cacheFile);
  }
  return index;
}
