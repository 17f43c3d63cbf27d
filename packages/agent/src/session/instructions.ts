// Project instructions: AGENTS.md (or CLAUDE.md when a folder has no AGENTS.md) from the
// workspace root and each parent folder, outermost first, so the nearest file has the last word.
import { dirname, join } from "node:path";
import { readSettingsFile } from "../safe-read.js";

export interface InstructionFile {
  path: string;
  text: string;
}

const MAX_CHARS = 40_000;

export function findInstructionFiles(workspace: string): InstructionFile[] {
  const found: InstructionFile[] = [];
  let dir = workspace;
  for (;;) {
    for (const name of ["AGENTS.md", "CLAUDE.md"]) {
      const path = join(dir, name);
      // The workspace may hold a FIFO, a device or a huge file under this name: read it the
      // way planted settings files are read (never blocking, capped), and skip what is not text.
      let text: string | undefined;
      try {
        text = readSettingsFile(path, { maxBytes: 16 << 20 });
      } catch {
        continue;
      }
      if (text === undefined) continue;
      if (text.trim()) found.push({ path, text: text.trim() });
      break;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return found.reverse();
}

/** The text for the system prompt's instructions section, or undefined when there is none. */
export function projectInstructions(workspace: string): string | undefined {
  const files = findInstructionFiles(workspace);
  if (files.length === 0) return undefined;
  let text = files.map((f) => `Project instructions from ${f.path} (follow them):\n${f.text}`).join("\n\n");
  if (text.length > MAX_CHARS)
    text = `${text.slice(0, MAX_CHARS)}\n… (instructions cut at ${MAX_CHARS} characters)`;
  return text;
}
