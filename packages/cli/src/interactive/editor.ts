// Opens a text in the person's editor ($VISUAL, else $EDITOR, else vi), attached to the
// terminal, and returns what they saved. The session's line input steps aside meanwhile.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Input } from "./front.js";

export function editorCommand(env: NodeJS.ProcessEnv = process.env): string {
  return env.VISUAL?.trim() || env.EDITOR?.trim() || "vi";
}

export async function editText(
  text: string,
  input: Input,
  fileName: string,
): Promise<{ text: string } | { error: string }> {
  const editor = editorCommand();
  const dir = mkdtempSync(join(tmpdir(), "hands-edit-"));
  const file = join(dir, fileName);
  writeFileSync(file, text);
  input.suspend();
  try {
    // Through the shell, as git does: EDITOR may carry arguments ("code --wait", "emacs -nw").
    const code = await new Promise<number>((resolve) => {
      const child = spawn("sh", ["-c", `${editor} "$1"`, "hands-editor", file], { stdio: "inherit" });
      child.on("error", () => resolve(127));
      child.on("exit", (c, signal) => resolve(c ?? (signal ? 128 : 1)));
    });
    if (code === 127) return { error: `cannot run the editor "${editor}" (set $VISUAL or $EDITOR)` };
    if (code !== 0) return { error: `the editor "${editor}" exited with code ${code}` };
    return { text: readFileSync(file, "utf8") };
  } finally {
    input.resume();
    rmSync(dir, { recursive: true, force: true });
  }
}
