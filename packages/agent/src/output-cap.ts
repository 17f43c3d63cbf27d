// Caps what a tool sends back to the model: keep the head and the tail, say how much was cut,
// and save the full text to a file the model can page through with read_file.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const MAX_TOOL_OUTPUT_CHARS = 30_000;

export interface CappedOutput {
  text: string;
  truncated: boolean;
  fullOutputPath?: string;
}

export function capOutput(
  output: string,
  options: { maxChars?: number; saveDir?: string; name: string },
): CappedOutput {
  const maxChars = options.maxChars ?? MAX_TOOL_OUTPUT_CHARS;
  if (output.length <= maxChars) return { text: output, truncated: false };

  let fullOutputPath: string | undefined;
  if (options.saveDir) {
    try {
      mkdirSync(options.saveDir, { recursive: true, mode: 0o700 });
      fullOutputPath = join(options.saveDir, `${options.name.replace(/[^\w.-]/g, "_")}.txt`);
      writeFileSync(fullOutputPath, output, { mode: 0o600 });
    } catch {
      fullOutputPath = undefined; // saving is best effort; the capped text still goes out
    }
  }
  const where = fullOutputPath
    ? ` The full output (${output.length} chars) is saved at ${fullOutputPath}; read it with read_file (use offset/limit) or search it with grep.`
    : "";
  // Reserve room for the marker so the result stays within maxChars.
  const marker = (cut: number) => `\n\n[… ${cut} characters cut from the middle.${where}]\n\n`;
  const budget = Math.max(0, maxChars - marker(output.length).length);
  const head = Math.ceil(budget * 0.6);
  const tail = budget - head;
  const cut = output.length - head - tail;
  return {
    text: output.slice(0, head) + marker(cut) + (tail > 0 ? output.slice(output.length - tail) : ""),
    truncated: true,
    ...(fullOutputPath ? { fullOutputPath } : {}),
  };
}
