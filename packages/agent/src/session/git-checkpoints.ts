// Checkpoints in a shadow git repository that Hands owns, under the data folder: one per
// workspace (its sessions share the objects, so a file is stored once), with an index and refs
// per session. Before each turn the workspace is snapshotted (what changed since the last
// snapshot is hashed, the rest comes from the index's stat cache), and again when it ends; /undo
// puts back the paths that differ between the two. The workspace's .gitignore is respected,
// .git and heavy dependency folders are never snapshotted, and files over a size cap are left
// alone. The refs live on disk, so /undo works after --continue, --resume and a SIGKILL.
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { rm, rmdir } from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";
import type { CheckpointOptions, TurnCheckpoints, UndoResult } from "./checkpoints.js";
import { gitCommand, ShadowGit, splitNul } from "./git.js";

/** Files larger than this are not snapshotted: /undo leaves them as they are. */
export const MAX_SNAPSHOT_FILE_BYTES = 10 * 1024 * 1024;
/** A snapshot that would hash more than this many files or bytes is skipped (with a warning). */
const MAX_SNAPSHOT_FILES = 100_000;
const MAX_SNAPSHOT_BYTES = 1024 * 1024 * 1024;
/** From this many files on, a snapshot writes one pack instead of loose objects. */
const BULK_FILES = 100;
/** Folders never snapshotted, at any depth: installed dependencies and caches. */
const HEAVY_DIRS = [
  "node_modules/",
  ".venv/",
  "venv/",
  "__pycache__/",
  ".mypy_cache/",
  ".pytest_cache/",
  ".ruff_cache/",
  ".tox/",
  ".gradle/",
  ".next/",
  ".turbo/",
];
/** File times come from a coarse kernel clock (a tick behind): allow for it when asking "made in the turn?". */
const CLOCK_SLACK_MS = 250;
const MAX_SKIPPED_LISTED = 1000;
/** Other sessions' checkpoints untouched this long are dropped when a session of the workspace opens. */
export const CHECKPOINT_RETENTION_MS = 30 * 24 * 3600_000;

interface TurnMeta {
  label: string;
  phase: "start" | "end";
  /** When the snapshot began (ms since the epoch). */
  time: number;
  /** Files present but too large to snapshot. */
  skipped: string[];
}

interface Snapshot {
  tree: string;
  skipped: string[];
}

interface Commit {
  tree: string;
  parent?: string;
  meta: TurnMeta;
}

interface Turn {
  ref: string;
  commit: string;
  /** Set when the turn's snapshot could not be taken: /undo must not silently go past it. */
  failed?: string;
  label?: string;
}

interface Change {
  /** "000000" when the path did not exist at the turn's start. */
  before: string;
  after: string;
  path: string;
}

/** The shadow repository of a workspace inside `dir`. */
export function shadowRepoPath(dir: string, workspace: string): string {
  const hash = createHash("sha256").update(workspace).digest("hex").slice(0, 12);
  const name = basename(workspace).replace(/[^\w.-]/g, "_") || "root";
  return join(dir, `${name}-${hash}.git`);
}

export class GitCheckpoints implements TurnCheckpoints {
  readonly kind = "git";
  private readonly gitDir: string;
  private readonly git: ShadowGit;
  private readonly prefix: string;
  private queue: Promise<unknown> = Promise.resolve();
  private setupDone = false;
  private turns: Turn[] = [];
  private seq = 0;
  /** The turn between begin() and end(). */
  private open: Turn | undefined;
  private started: Promise<void> = Promise.resolve();
  /** The tree of this session's index when it was last written. */
  private lastTree: string | undefined;
  /** Pruning of idle sessions, started once the repository is open. */
  private pruning: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: CheckpointOptions) {
    if (!/^[\w.-]+$/.test(opts.sessionId)) throw new Error(`invalid session id: ${opts.sessionId}`);
    this.gitDir = shadowRepoPath(opts.dir, opts.workspace);
    this.git = new ShadowGit({
      gitDir: this.gitDir,
      workTree: opts.workspace,
      indexFile: join(this.gitDir, "indexes", opts.sessionId),
    });
    this.prefix = `refs/hands/${opts.sessionId}/`;
  }

  begin(label: string): void {
    this.started = this.enqueue(async () => {
      try {
        await this.ready();
        const time = Date.now();
        const snap = await this.snapshot();
        const commit = await this.commit(snap, { label, phase: "start", time, skipped: snap.skipped });
        const ref = `${this.prefix}${String(++this.seq).padStart(6, "0")}`;
        await this.git.run(["update-ref", ref, commit]);
        this.open = { ref, commit };
      } catch (e) {
        this.open = { ref: "", commit: "", failed: (e as Error).message, label };
        this.warn(`no checkpoint for this request, so /undo cannot revert it: ${(e as Error).message}`);
      }
      this.turns.push(this.open);
    });
  }

  beforeChange(): Promise<void> {
    return this.started.catch(() => {});
  }

  end(): Promise<void> {
    return this.enqueue(async () => {
      const turn = this.open;
      this.open = undefined;
      if (!turn || turn.failed) return;
      await this.ready();
      const start = await this.readCommit(turn.commit);
      const snap = await this.snapshot();
      if (snap.tree === start.tree) {
        // Nothing changed: the turn has nothing to undo.
        await this.git.run(["update-ref", "-d", turn.ref]);
        this.turns = this.turns.filter((t) => t !== turn);
        return;
      }
      const commit = await this.commit(
        snap,
        { ...start.meta, phase: "end", time: Date.now(), skipped: snap.skipped },
        turn.commit,
      );
      await this.git.run(["update-ref", turn.ref, commit]);
      turn.commit = commit;
    }).catch((e) => this.warn(`could not record the end of the request: ${(e as Error).message}`));
  }

  undo(): Promise<UndoResult | undefined> {
    return this.enqueue(async () => {
      for (;;) {
        // A turn without a checkpoint is reported even when the repository cannot be opened.
        if (!this.turns.at(-1)?.failed) await this.ready();
        const turn = this.turns.pop();
        if (!turn) return undefined;
        if (turn.failed)
          throw new Error(
            `the request "${turn.label ?? ""}" had no checkpoint (${turn.failed}); /undo again goes on to the request before it`,
          );
        let result: UndoResult | undefined;
        try {
          result = await this.undoTurn(turn);
        } catch (e) {
          this.turns.push(turn);
          throw e;
        }
        await this.git.run(["update-ref", "-d", turn.ref]);
        if (result) return result;
      }
    });
  }

  /** Reverts one turn; undefined when it changed nothing. */
  private async undoTurn(turn: Turn): Promise<UndoResult | undefined> {
    const top = await this.readCommit(turn.commit);
    let start: Commit;
    let end: Snapshot;
    if (top.meta.phase === "end" && top.parent) {
      start = await this.readCommit(top.parent);
      end = { tree: top.tree, skipped: top.meta.skipped };
    } else {
      // The turn never ended (the session was killed): its end is now.
      start = top;
      end = await this.snapshot();
    }
    const changes = await this.changes(start.tree, end.tree);
    // Big files the turn made: not in either snapshot, so not undone; say so.
    const known = new Set([...start.meta.skipped, ...changes.map((c) => c.path)]);
    const tooLarge = end.skipped.filter((p) => !known.has(p));
    if (changes.length === 0 && tooLarge.length === 0) return undefined;
    const result = await this.restore(start, changes);
    for (const path of tooLarge) result.kept.push({ path, why: "too large to checkpoint" });
    return result;
  }

  diff(): Promise<string> {
    return this.enqueue(async () => {
      await this.ready();
      const first = this.turns.find((t) => !t.failed);
      if (!first) return "";
      const c = await this.readCommit(first.commit);
      const base = c.meta.phase === "end" && c.parent ? (await this.readCommit(c.parent)).tree : c.tree;
      const now = await this.snapshot();
      if (now.tree === base) return "";
      return this.git.text([
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        base,
        now.tree,
      ]);
    });
  }

  async close(): Promise<void> {
    await this.queue;
    await this.pruning;
  }

  /**
   * Drops the checkpoints (refs and index) of other sessions of this workspace whose index has
   * not changed for `retentionMs`, then lets git delete what only they held. Runs beside this
   * session's own git calls (other refs, other index), so no turn waits for it. Returns the
   * sessions dropped.
   */
  async pruneIdleSessions(retentionMs = CHECKPOINT_RETENTION_MS, now = Date.now()): Promise<string[]> {
    const indexes = join(this.gitDir, "indexes");
    const own = basename(this.git.opts.indexFile);
    const idle = readdirSync(indexes).filter(
      (id) =>
        id !== own &&
        /^[\w.-]+$/.test(id) &&
        !id.endsWith(".lock") &&
        now - statSync(join(indexes, id)).mtimeMs > retentionMs,
    );
    if (idle.length === 0) return [];
    for (const id of idle) {
      const refs = await this.git.text(["for-each-ref", "--format=%(refname)", `refs/hands/${id}/`]);
      const deletes = refs
        .split("\n")
        .filter(Boolean)
        .map((ref) => `delete ${ref}\n`)
        .join("");
      if (deletes) await this.git.run(["update-ref", "--stdin"], deletes);
      rmSync(join(indexes, id), { force: true });
    }
    // Objects younger than a day stay: a live session may have written them and not yet named
    // them in a ref.
    await this.git.run(["gc", "--quiet", "--prune=1.day.ago"]);
    return idle;
  }

  /** Runs `fn` after all earlier work: git calls of one session never overlap. */
  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => {});
    return run;
  }

  private async ready(): Promise<void> {
    if (!this.setupDone) await this.setup();
  }

  private warn(message: string): void {
    this.opts.onWarning?.(message);
  }

  private async setup(): Promise<void> {
    if (!existsSync(join(this.gitDir, "HEAD"))) {
      mkdirSync(dirname(this.gitDir), { recursive: true, mode: 0o700 });
      // --shared=0600: git makes the snapshots' files 0600 and folders 0700 whatever the umask.
      await gitCommand(["init", "--bare", "--quiet", "--shared=0600", this.gitDir], {
        PATH: process.env.PATH ?? "",
      });
    }
    // Our own settings only: the user's config is not read (see git.ts).
    writeIfChanged(
      join(this.gitDir, "config"),
      [
        "[core]",
        "\trepositoryformatversion = 0",
        "\tbare = false",
        "\tfilemode = true",
        "\tsymlinks = true",
        "\tautocrlf = false",
        "\tlogallrefupdates = false",
        "\tsharedRepository = 0600",
        "[gc]",
        "\tauto = 0",
        "",
      ].join("\n"),
    );
    mkdirSync(join(this.gitDir, "info"), { recursive: true, mode: 0o700 });
    writeIfChanged(join(this.gitDir, "info", "exclude"), `${this.excludes().join("\n")}\n`);
    // These outrank the workspace's .gitattributes: files are stored and restored byte for
    // byte (no end-of-line conversion, filters, $Id$ or encodings).
    writeIfChanged(
      join(this.gitDir, "info", "attributes"),
      "* -text -filter -ident -working-tree-encoding !eol !diff\n",
    );
    const indexes = join(this.gitDir, "indexes");
    mkdirSync(indexes, { recursive: true, mode: 0o700 });
    const index = this.git.opts.indexFile;
    // A process killed in the middle of an update leaves the lock behind; this session is ours.
    rmSync(`${index}.lock`, { force: true });
    if (!existsSync(index)) seedIndex(indexes, index);
    const refs = await this.git.text(["for-each-ref", "--format=%(refname) %(objectname)", this.prefix]);
    const saved = refs
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [ref = "", commit = ""] = line.split(" ");
        return { ref, commit };
      });
    this.seq = Number(saved.at(-1)?.ref.slice(this.prefix.length) ?? 0) || 0;
    // Turns of this process that failed before the repository opened are newer than all saved ones.
    this.turns = [...saved, ...this.turns];
    this.setupDone = true;
    this.pruning = this.pruneIdleSessions().catch((e) =>
      this.warn(`could not drop old sessions' checkpoints: ${(e as Error).message}`),
    );
  }

  /** Never snapshotted: heavy folders, and the data folder when it lies inside the workspace. */
  private excludes(): string[] {
    const out = [...HEAVY_DIRS];
    const rel = relative(this.opts.workspace, this.opts.dir);
    if (rel && !rel.startsWith("..") && !rel.startsWith(sep))
      out.push(
        `/${rel
          .split(sep)
          .join("/")
          .replace(/[*?[\]\\!#]/g, "\\$&")}/`,
      );
    return out;
  }

  /** Brings the index up to the workspace and writes its tree. */
  private async snapshot(): Promise<Snapshot> {
    const [changed, others] = await Promise.all([
      this.git.run(["diff-files", "--name-only", "-z"]),
      this.git.run(["ls-files", "-z", "--others", "--exclude-standard"]),
    ]);
    const tracked = splitNul(changed);
    const untracked = splitNul(others);
    if (tracked.length + untracked.length > MAX_SNAPSHOT_FILES)
      throw new Error(
        `${tracked.length + untracked.length} files to snapshot (over ${MAX_SNAPSHOT_FILES}); add the big folders to .gitignore`,
      );
    const update: string[] = [];
    const drop: string[] = [];
    const skipped: string[] = [];
    let bytes = 0;
    const consider = (path: string, isTracked: boolean) => {
      // A folder listed on its own holds its own .git: it is not ours to snapshot.
      if (path.endsWith("/")) return;
      const st = lstatSync(join(this.opts.workspace, path), { throwIfNoEntry: false });
      if (!st) {
        if (isTracked) update.push(path); // deleted: --remove drops it
        return;
      }
      if (st.isSymbolicLink() || (st.isFile() && st.size <= MAX_SNAPSHOT_FILE_BYTES)) {
        update.push(path);
        bytes += st.size;
        return;
      }
      if (st.isFile()) skipped.push(path);
      if (isTracked) drop.push(path);
    };
    for (const p of tracked) consider(p, true);
    for (const p of untracked) consider(p, false);
    if (bytes > MAX_SNAPSHOT_BYTES)
      throw new Error(
        `${Math.round(bytes / 1e6)} MB of changed files to snapshot (over ${MAX_SNAPSHOT_BYTES / 1e6} MB)`,
      );
    if (update.length || drop.length) this.lastTree = undefined;
    if (update.length) {
      // Many files (a first snapshot) go into one pack: writing thousands of loose objects costs
      // seconds of system time. A few files stay loose, so turns do not pile up small packs.
      const bulk = update.length >= BULK_FILES ? ["-c", "core.bigFileThreshold=1"] : [];
      await this.git.run([...bulk, "update-index", "--add", "--remove", "-z", "--stdin"], nul(update));
    }
    if (drop.length) await this.git.run(["update-index", "--force-remove", "-z", "--stdin"], nul(drop));
    // Nothing updated: the index still holds the last tree written.
    this.lastTree ??= await this.git.text(["write-tree"]);
    return { tree: this.lastTree, skipped: skipped.sort() };
  }

  private async commit(snap: Snapshot, meta: TurnMeta, parent?: string): Promise<string> {
    const listed = { ...meta, skipped: meta.skipped.slice(0, MAX_SKIPPED_LISTED) };
    return this.git.text(
      ["commit-tree", snap.tree, ...(parent ? ["-p", parent] : [])],
      JSON.stringify(listed),
    );
  }

  private async readCommit(sha: string): Promise<Commit> {
    const text = await this.git.text(["cat-file", "commit", sha]);
    const split = text.indexOf("\n\n");
    const header = text.slice(0, split);
    const tree = /^tree (\w+)/m.exec(header)?.[1];
    const parent = /^parent (\w+)/m.exec(header)?.[1];
    if (!tree) throw new Error(`checkpoint ${sha} is not a commit`);
    const meta = JSON.parse(text.slice(split + 2)) as TurnMeta;
    return { tree, ...(parent ? { parent } : {}), meta };
  }

  /** The files that differ between two snapshots (folders with their own .git left out). */
  private async changes(from: string, to: string): Promise<Change[]> {
    const fields = splitNul(await this.git.run(["diff-tree", "-r", "-z", "--no-renames", from, to]));
    const out: Change[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const [before = "", after = ""] = fields[i]!.slice(1).split(" ");
      if (before === "160000" || after === "160000") continue;
      out.push({ before, after, path: fields[i + 1]! });
    }
    return out;
  }

  /** Puts `changes` back as they were in `start`. */
  private async restore(start: Commit, changes: Change[]): Promise<UndoResult> {
    const ws = this.opts.workspace;
    const kept: UndoResult["kept"] = [];
    const paths: string[] = [];
    const since = start.meta.time - CLOCK_SLACK_MS;
    const skipped = new Set(start.meta.skipped);
    // Files the turn created go first: a folder may have to come back where one of them is.
    for (const c of changes.filter((c) => c.before === "000000")) {
      const abs = join(ws, c.path);
      if (skipped.has(c.path)) {
        kept.push({ path: c.path, why: "it was too large to checkpoint before the request" });
        continue;
      }
      const st = lstatSync(abs, { throwIfNoEntry: false });
      if (st && (st.birthtimeMs || st.mtimeMs) < since) {
        // It was there before the turn but not in the snapshot (ignored then): not ours to delete.
        kept.push({ path: c.path, why: "it existed before the request but was not checkpointed" });
        continue;
      }
      await rm(abs, { force: true });
      await removeEmptyFolders(dirname(abs), ws, since);
      paths.push(c.path);
    }
    const back = changes.filter((c) => c.before !== "000000").map((c) => c.path);
    if (back.length) {
      // A scratch index holding the start snapshot; checkout-index writes its files back.
      const scratch = { GIT_INDEX_FILE: join(this.gitDir, `restore-${process.pid}.index`) };
      try {
        await this.git.run(["read-tree", start.tree], undefined, scratch);
        await this.git.run(["checkout-index", "-f", "-z", "--stdin"], nul(back), scratch);
      } finally {
        rmSync(scratch.GIT_INDEX_FILE, { force: true });
      }
      paths.push(...back);
    }
    return { label: start.meta.label, paths: paths.sort(), kept };
  }
}

/** Other sessions of the workspace may be reading these files: rewrite them only when needed. */
function writeIfChanged(path: string, text: string): void {
  let now: string | undefined;
  try {
    now = readFileSync(path, "utf8");
  } catch {
    now = undefined;
  }
  if (now !== text) writeFileSync(path, text, { mode: 0o600 });
}

function nul(paths: string[]): string {
  return `${paths.join("\0")}\0`;
}

/** A new session starts from the newest index of the workspace: its stat cache spares rehashing. */
function seedIndex(indexes: string, index: string): void {
  let newest: { path: string; mtime: number } | undefined;
  for (const name of readdirSync(indexes)) {
    if (name.endsWith(".lock")) continue;
    const path = join(indexes, name);
    const mtime = statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (!newest || mtime > newest.mtime) newest = { path, mtime };
  }
  if (newest) copyFileSync(newest.path, index);
}

/** Removes the empty folders above a deleted file that were made after `since`, up to `root`. */
async function removeEmptyFolders(dir: string, root: string, since: number): Promise<void> {
  while (dir !== root && dir.startsWith(root + sep)) {
    const st = lstatSync(dir, { throwIfNoEntry: false });
    if (!st?.isDirectory() || (st.birthtimeMs || st.mtimeMs) < since) return;
    try {
      await rmdir(dir);
    } catch {
      return; // not empty
    }
    dir = dirname(dir);
  }
}
