// Requests typed in a workspace, kept in the private data folder (one file per workspace, one
// JSON string a line), for Up/Down and Ctrl-R.
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const KEEP = 500;

export class PromptHistory {
  /** Oldest first. */
  readonly entries: string[];
  private readonly file: string;

  constructor(dataDir: string, workspace: string) {
    const key = createHash("sha256").update(workspace).digest("hex").slice(0, 16);
    this.file = join(dataDir, "history", `${key}.jsonl`);
    this.entries = load(this.file);
  }

  add(text: string): void {
    const t = text.trim();
    if (!t || this.entries.at(-1) === t) return;
    this.entries.push(t);
    try {
      mkdirSync(join(this.file, ".."), { recursive: true, mode: 0o700 });
      appendFileSync(this.file, `${JSON.stringify(t)}\n`, { mode: 0o600 });
    } catch {
      // History is a convenience; never fail a request over it.
    }
  }

  /** The newest entry before index `before` (exclusive) that contains `query`, with its index. */
  search(query: string, before = this.entries.length): { index: number; text: string } | undefined {
    const q = query.toLowerCase();
    for (let i = Math.min(before, this.entries.length) - 1; i >= 0; i--) {
      const t = this.entries[i]!;
      if (t.toLowerCase().includes(q)) return { index: i, text: t };
    }
    return undefined;
  }
}

function load(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const line of text.split("\n").slice(-KEEP - 1)) {
    if (!line) continue;
    try {
      const v = JSON.parse(line);
      if (typeof v === "string") out.push(v);
    } catch {
      // a torn line
    }
  }
  return out;
}
