// Per-turn checkpoints of the files a turn changes, kept by Hands itself (no git needed):
// before a file is first written in a turn, its content (or its absence) is saved; /undo
// puts the last turn's files back.
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, relative } from "node:path";

interface Saved {
  abs: string;
  /** undefined: the file did not exist. */
  content: Buffer | undefined;
}

/** Files larger than this are not checkpointed (their undo is refused instead). */
const MAX_BYTES = 20 * 1024 * 1024;

export class Checkpoints {
  private turns: { label: string; files: Map<string, Saved> }[] = [];
  /** Each file's content when the session first touched it, for /diff. */
  private readonly originals = new Map<string, Buffer | undefined>();

  constructor(private readonly workspace: string) {}

  /** Starts a new checkpoint (one per user request). */
  begin(label: string): void {
    this.turns.push({ label, files: new Map() });
  }

  /** Saves `abs` as it is now, unless the current turn already saved it. */
  async record(abs: string): Promise<void> {
    const turn = this.turns[this.turns.length - 1];
    if (!turn || turn.files.has(abs)) return;
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

  /** Turns that changed files, newest last. */
  get depth(): number {
    return this.turns.filter((t) => t.files.size > 0).length;
  }

  /** Restores the files of the newest turn that changed any; returns their workspace paths. */
  async undo(): Promise<{ label: string; paths: string[] } | undefined> {
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
      return { label: turn.label, paths: paths.sort() };
    }
    return undefined;
  }

  /** Every file the session changed, with its original and current text. */
  async changes(): Promise<{ path: string; before: string; after: string }[]> {
    const out: { path: string; before: string; after: string }[] = [];
    for (const [abs, original] of this.originals) {
      let now: string;
      try {
        now = await readFile(abs, "utf8");
      } catch {
        now = "";
      }
      const before = original?.toString("utf8") ?? "";
      if (before !== now) out.push({ path: relative(this.workspace, abs), before, after: now });
    }
    return out.sort((a, b) => a.path.localeCompare(b.path));
  }
}
