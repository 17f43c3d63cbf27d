// Keeps a remote sandbox's copy of the workspace and the host's in step, for backends whose
// sandbox cannot see the host folder (e2b). The host folder stays the one users and the agent's
// file tools work on: before each command what changed on the host is pushed, after it what
// the command changed is pulled back. Each side is compared only with its own listing from the
// last sync (type, size, modification time, link target), so clocks never need to agree.
//
// The remote side is untrusted: pulled entries are confined to the workspace (FileApi), links
// leading out, special files and Hands' protected paths are not copied back, and sizes are
// bounded. A file changed on both sides keeps the host's version.
import { lstat, opendir, readlink, rm, rmdir } from "node:fs/promises";
import { basename, dirname, join, posix } from "node:path";
import { confinePath } from "./confine.js";
import { type Manifest, type ManifestEntry, SYNC_EXCLUDES } from "./e2b-script.js";
import { type FileApi, runTar } from "./files.js";

export interface SyncLimits {
  /** Most entries the workspace may have (files, folders, links). */
  maxEntries: number;
  /** Most bytes of file content one push or one pull carries. */
  maxBytes: number;
}

export const DEFAULT_SYNC_LIMITS: SyncLimits = { maxEntries: 50_000, maxBytes: 512 * 1024 * 1024 };

const EXCLUDED = new Set(SYNC_EXCLUDES);

/** One host entry as a listing records it (undefined when it is gone). */
async function entryOf(root: string, path: string): Promise<ManifestEntry | undefined> {
  let st: Awaited<ReturnType<typeof lstat>>;
  try {
    st = await lstat(join(root, path), { bigint: true });
  } catch {
    return undefined;
  }
  const type = st.isFile() ? "f" : st.isDirectory() ? "d" : st.isSymbolicLink() ? "l" : "o";
  const entry: ManifestEntry = { type, size: type === "f" ? Number(st.size) : 0, mtime: String(st.mtimeNs) };
  if (type === "l") entry.link = await readlink(join(root, path)).catch(() => "");
  return entry;
}

/** The host workspace's listing (symlinks not followed; excluded folders skipped). */
export async function localManifest(root: string, limits: SyncLimits): Promise<Manifest> {
  const out: Manifest = new Map();
  let bytes = 0;
  const todo = [""];
  while (todo.length > 0) {
    const rel = todo.pop() as string;
    let dir: Awaited<ReturnType<typeof opendir>>;
    try {
      dir = await opendir(join(root, rel));
    } catch {
      continue; // vanished or unreadable: not synced
    }
    const paths: string[] = [];
    for await (const e of dir) {
      // Names that are not UTF-8 cannot be named to tar or the sandbox: not synced.
      if (EXCLUDED.has(e.name) || e.name.includes("\uFFFD")) continue;
      paths.push(rel ? `${rel}/${e.name}` : e.name);
      if (out.size + paths.length > limits.maxEntries)
        throw new Error(
          `the workspace has more than ${limits.maxEntries} files and folders to copy into the sandbox (${SYNC_EXCLUDES.join(", ")} are skipped)`,
        );
    }
    // One folder's entries are looked at together (lstat one at a time is the slow part).
    for (let i = 0; i < paths.length; i += 256) {
      const batch = paths.slice(i, i + 256);
      const entries = await Promise.all(batch.map((p) => entryOf(root, p)));
      entries.forEach((entry, j) => {
        if (!entry) return;
        const path = batch[j] as string;
        if (entry.type === "d") todo.push(path);
        if (entry.type === "f") bytes += entry.size;
        out.set(path, entry);
      });
    }
  }
  if (bytes > limits.maxBytes)
    throw new Error(
      `the workspace holds ${size(bytes)} of files to copy into the sandbox, more than the ${size(limits.maxBytes)} allowed (${SYNC_EXCLUDES.join(", ")} are skipped)`,
    );
  return out;
}

/** A size for messages: bytes below a MiB (limits in tests are small), else whole MiB. */
function size(n: number): string {
  return n < 1048576 ? `${n} bytes` : `${Math.round(n / 1048576)} MiB`;
}

function same(a: ManifestEntry | undefined, b: ManifestEntry | undefined): boolean {
  if (!a || !b) return a === b;
  if (a.type !== b.type) return false;
  if (a.type === "d") return true; // a folder's own time changes with its contents
  return a.size === b.size && a.mtime === b.mtime && a.link === b.link;
}

export interface Changes {
  /** New or changed entries, parents before children. */
  changed: string[];
  /** Entries gone (or replaced by another type), children before parents. */
  deleted: string[];
}

/** What changed from `before` to `now`. */
export function diffManifests(before: Manifest, now: Manifest): Changes {
  const changed: string[] = [];
  const deleted: string[] = [];
  for (const [path, e] of now) if (!same(before.get(path), e) && e.type !== "o") changed.push(path);
  for (const [path, e] of before) {
    const n = now.get(path);
    if (!n || n.type !== e.type) deleted.push(path);
  }
  changed.sort();
  deleted.sort().reverse();
  return { changed, deleted };
}

/** A NUL-separated list of "./"-prefixed paths (tar -T --null, xargs -0). */
export function nulList(paths: readonly string[]): Buffer {
  return Buffer.from(paths.map((p) => `./${p}\0`).join(""), "utf8");
}

/** Packs host entries (already listed, so never special files) into a tar archive. */
export async function packLocal(root: string, paths: readonly string[]): Promise<Buffer> {
  const { stdout, stderr, code } = await runTar(
    ["-C", root, "--null", "--no-recursion", "-T", "-", "-cf", "-"],
    nulList(paths),
  );
  // 1: a file changed or vanished while it was read; the next sync sees it again.
  if (code !== 0 && code !== 1) throw new Error(`tar failed: ${stderr.trim()}`);
  return stdout;
}

function under(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}/`);
}

/** A link the host may keep: relative and staying inside the workspace. */
function linkStaysInside(path: string, target: string): boolean {
  if (!target || target.startsWith("/")) return false;
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  return resolved !== ".." && !resolved.startsWith("../");
}

export interface PullPlan {
  /** Entries to fetch from the remote and unpack on the host. */
  fetch: string[];
  /** Host entries to remove (the command removed them). */
  remove: string[];
  /** Lines for the command's result: what was not copied back, and why. */
  notes: string[];
  /** Protected entries the command changed: the host's version goes back at the next push. */
  restore: string[];
}

export class WorkspaceSync {
  /** Each side's listing at the last sync. */
  private local: Manifest = new Map();
  private remote: Manifest = new Map();
  /** Entries pushed at the next sync whatever their listing says. */
  private readonly forced = new Set<string>();

  constructor(
    readonly root: string,
    private readonly files: FileApi,
    private readonly protectedPaths: readonly string[],
    readonly limits: SyncLimits = DEFAULT_SYNC_LIMITS,
  ) {}

  /** Starts over against a fresh, empty remote copy. */
  reset(): void {
    this.local = new Map();
    this.remote = new Map();
    this.forced.clear();
  }

  /** What the host changed since the last sync: the archive to unpack remotely and what to remove. */
  async planPush(): Promise<{ now: Manifest; changes: Changes; tar: Buffer | undefined }> {
    const now = await localManifest(this.root, this.limits);
    const changes = diffManifests(this.local, now);
    for (const p of this.forced) {
      if (now.has(p)) {
        if (!changes.changed.includes(p)) changes.changed.push(p);
      } else if (!changes.deleted.includes(p)) changes.deleted.push(p);
    }
    // A type change is a removal and an addition; removals run first on the remote.
    const bytes = changes.changed.reduce((n, p) => n + (now.get(p)?.size ?? 0), 0);
    if (bytes > this.limits.maxBytes)
      throw new Error(
        `${size(bytes)} of changed files to copy into the sandbox, more than the ${size(this.limits.maxBytes)} allowed`,
      );
    const tar = changes.changed.length > 0 ? await packLocal(this.root, changes.changed) : undefined;
    return { now, changes, tar };
  }

  /** The push landed: both sides' listings are now the baseline. */
  pushed(localNow: Manifest, remoteNow: Manifest): void {
    this.local = localNow;
    this.remote = remoteNow;
    this.forced.clear();
  }

  /** What the command changed remotely, and what of it may come back. */
  async planPull(remoteNow: Manifest): Promise<PullPlan> {
    const { changed, deleted } = diffManifests(this.remote, remoteNow);
    const plan: PullPlan = { fetch: [], remove: [], notes: [], restore: [] };
    const skipped = (why: string, list: string[]) => {
      if (list.length === 0) return;
      const shown = list.slice(0, 5).join(", ") + (list.length > 5 ? ` and ${list.length - 5} more` : "");
      plan.notes.push(`[not copied back from the sandbox (${why}): ${shown}]`);
    };
    const prot: string[] = [];
    const outward: string[] = [];
    const conflict: string[] = [];
    const tooBig: string[] = [];
    let bytes = 0;
    for (const path of new Set([...deleted, ...changed])) {
      if (this.protectedPaths.some((p) => under(path, p))) {
        if (!prot.includes(path)) prot.push(path);
        continue;
      }
      // Host changes since the push (an editor) win over the command's.
      if (!(await this.hostUnchanged(path))) {
        conflict.push(path);
        continue;
      }
      const e = remoteNow.get(path);
      if (!e || e.type !== (this.remote.get(path)?.type ?? e.type)) plan.remove.push(path);
      if (!e) continue;
      if (e.type === "l" && !linkStaysInside(path, e.link ?? "")) {
        outward.push(`${path} -> ${e.link}`);
        continue;
      }
      if (e.type === "f" && bytes + e.size > this.limits.maxBytes) {
        tooBig.push(path);
        continue;
      }
      bytes += e.type === "f" ? e.size : 0;
      plan.fetch.push(path);
    }
    skipped("Hands' protected paths; the host's version is put back", prot);
    skipped("symbolic links leading out of the workspace", outward);
    skipped("changed on the host meanwhile; the host's version is kept", conflict);
    skipped(`over the ${size(this.limits.maxBytes)} a sync may carry`, tooBig);
    plan.restore = prot;
    return plan;
  }

  private async hostUnchanged(path: string): Promise<boolean> {
    return same(this.local.get(path), await entryOf(this.root, path));
  }

  /**
   * Applies a pull on the host: removals (never through a link), then the fetched archive
   * (FileApi confines every entry). Returns notes about what failed.
   */
  async applyPull(plan: PullPlan, tar: Uint8Array | undefined, remoteNow: Manifest): Promise<string[]> {
    const notes: string[] = [];
    for (const path of plan.remove) {
      try {
        const parent = await confinePath(this.root, dirname(path));
        const target = join(parent, basename(path));
        const st = await lstat(target).catch(() => undefined);
        if (st?.isDirectory())
          await rmdir(target).catch(() => {}); // keeps what was never synced
        else if (st) await rm(target, { force: true });
      } catch (e) {
        notes.push(`[could not remove ${path} on the host: ${(e as Error).message}]`);
      }
    }
    if (tar && plan.fetch.length > 0) {
      try {
        await this.files.unpackTar(".", tar);
      } catch (e) {
        notes.push(`[the sandbox's changes were not copied back: ${(e as Error).message}]`);
      }
    }
    // The host's listing follows what was written; entries not copied keep the old one, so a
    // later host change to them is still pushed.
    for (const path of new Set([...plan.remove, ...plan.fetch])) {
      const e = await entryOf(this.root, path);
      if (e) this.local.set(path, e);
      else this.local.delete(path);
    }
    this.remote = remoteNow;
    for (const p of plan.restore) this.forced.add(p);
    return notes;
  }
}
