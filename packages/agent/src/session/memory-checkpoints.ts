// The fallback checkpoints when git is not installed: before a file tool first writes a file in
// a turn, its content (or its absence) is kept in memory; /undo puts the last turn's files back.
// Files changed by commands are not seen, and nothing outlives the process.
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, relative } from "node:path";
import { unifiedDiff } from "../policy/diff.js";
import type { TurnCheckpoints, UndoResult } from "./checkpoints.js";

interface Saved {
  abs: string;
  /** undefined: the file did not exist. */
  content: Buffer | undefined;
}

/** Files larger than this are not checkpointed (and so not undone). */
const MAX_BYTES = 20 * 1024 * 1024;

export class MemoryCheckpoints implements TurnCheckpoints {
  readonly kind = "memory";
  private turns: { label: string; files: Map<string, Saved> }[] = [];
  /** Each file's content when the session first touched it, for /diff. */
  private readonly originals = new Map<string, Buffer | undefined>();

  constructor(private readonly workspace: string) {}

  begin(label: string): void {
    this.turns.push({ label, files: new Map() });
  }

  /** Saves `abs` as it is now, unless the current turn already saved it. */
  async beforeChange(abs?: string): Promise<void> {
    const turn = this.turns[this.turns.length - 1];
    if (!abs || !turn || turn.files.has(abs)) return;
    let content: Buffer | undefined;
    try {
      const st = await stat(abs);
      if (!st.isFile() || st.size > MAX_BYTES) return;
      content = await readFile(abs);
    } catch {
      content = undefined;
    }
    turn.files.set(abs, { abs, content });
    if (!this.originals.has(abs)) this.originals.set(abs, content);
  }

  async end(): Promise<void> {}

  async undo(): Promise<UndoResult | undefined> {
    while (this.turns.length > 0) {
      const turn = this.turns.pop()!;
      if (turn.files.size === 0) continue;
      const paths: string[] = [];
      for (const saved of turn.files.values()) {
        if (saved.content === undefined) await rm(saved.abs, { force: true });
        else {
          await mkdir(dirname(saved.abs), { recursive: true });
          await writeFile(saved.abs, saved.content);
        }
        paths.push(relative(this.workspace, saved.abs));
      }
      return { label: turn.label, paths: paths.sort(), kept: [] };
    }
    return undefined;
  }

  async diff(): Promise<string> {
    const diffs: string[] = [];
    const paths = [...this.originals.keys()].sort();
    for (const abs of paths) {
      const now = await readFile(abs, "utf8").catch(() => "");
      const before = this.originals.get(abs)?.toString("utf8") ?? "";
      if (before !== now) diffs.push(unifiedDiff(before, now, relative(this.workspace, abs)));
    }
    return diffs.join("\n");
  }

  async close(): Promise<void> {}
}
