// Reads a workspace file for showing or attaching. The workspace is hostile: no symlink is
// followed at the last step, a FIFO is never waited on, and a swap after a check is caught by
// checking the opened file itself.
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";

/** The file's text, or null: missing, not a regular file, larger than `maxBytes`, or binary. */
export function fileText(abs: string, maxBytes = 1_000_000): string | null {
  let fd: number | undefined;
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return null;
    const text = readFileSync(fd, "utf8");
    return text.includes("\0") ? null : text;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
