// The data folder (traces, sessions, outputs, audit logs, checkpoints, memory) holds prompts,
// code and command output: it is private to the user, 0700 with 0600 files. Every writer
// creates its files that way; this repairs a folder made before they did, at start-up.
//
// Cost: the first time, one walk of the whole folder (then a stamp file says it was done);
// after that the folder itself and its direct children only — a few lstat calls per run.
// Deeper files keep whatever mode they have then, behind a 0700 folder nobody else can enter.
// A folder that does not look like Hands' own (entries Hands never makes, and no stamp: say
// HANDS_DATA_DIR=/tmp or ~) is not changed, only warned about.
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync, realpathSync } from "node:fs";
import { join } from "node:path";

const STAMP = ".private-modes";

/** Names Hands puts at the top of its data folder (code-cache.key and v8-cache: the bin's, packages/cli/bin/hands.js; dashboard: its one-time link files). */
const OURS =
  /^(traces|sessions|outputs|checkpoints|history|audit\.jsonl|sandbox-audit\.jsonl|evals\.jsonl|code-cache\.key|v8-cache|dashboard|memory(\.[\w.-]+)?\.db(-wal|-shm|-journal|\.maintained)?|\.private-modes)$/;

export interface RepairResult {
  /** Paths whose mode was changed. */
  changed: string[];
  /** Why the folder was left alone, when it was. */
  skipped?: string;
}

/** Makes `dir` private (creating it 0700 when missing) and repairs the modes of what is in it. */
export function secureDataDir(dir: string): RepairResult {
  const changed: string[] = [];
  let root: string;
  try {
    root = realpathSync(dir);
  } catch {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    closeSync(openSync(join(dir, STAMP), "a", 0o600));
    return { changed };
  }
  const st = lstatSync(root);
  if (!st.isDirectory()) return { changed, skipped: `${dir} is not a folder` };
  if (typeof process.getuid === "function" && st.uid !== process.getuid())
    return { changed, skipped: `${dir} belongs to another user (uid ${st.uid})` };
  const names = readdirSync(root);
  const stamped = names.includes(STAMP);
  if (!stamped) {
    const foreign = names.filter((n) => !OURS.test(n));
    if (foreign.length)
      return {
        changed,
        skipped: `${dir} holds files Hands did not make (${foreign.slice(0, 3).join(", ")}${foreign.length > 3 ? ", …" : ""}); make it private yourself (chmod 700)`,
      };
  }
  fix(root, st.mode, true, changed);
  for (const name of names) {
    const path = join(root, name);
    // Not the first time: only what Hands makes at the top, never anything else put there.
    if (stamped && !OURS.test(name)) continue;
    if (stamped) fixEntry(path, changed);
    else walk(path, changed);
  }
  if (!stamped) closeSync(openSync(join(root, STAMP), "a", 0o600));
  return { changed };
}

function walk(path: string, changed: string[]): void {
  if (fixEntry(path, changed)) for (const name of readdirSync(path)) walk(join(path, name), changed);
}

/** Fixes one entry (never following a symlink); true when it is a folder. */
function fixEntry(path: string, changed: string[]): boolean {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st || st.isSymbolicLink()) return false;
  if (typeof process.getuid === "function" && st.uid !== process.getuid()) return false;
  if (!st.isDirectory() && !st.isFile()) return false;
  fix(path, st.mode, st.isDirectory(), changed);
  return st.isDirectory();
}

function fix(path: string, mode: number, isDir: boolean, changed: string[]): void {
  // Folders: 0700. Files: the owner's bits kept (a read-only git object stays 0400), others' cleared.
  const want = isDir ? 0o700 : mode & 0o700;
  if ((mode & 0o7777) === want) return;
  chmodSync(path, want);
  changed.push(path);
}
