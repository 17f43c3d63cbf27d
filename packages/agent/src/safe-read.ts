// Reads a small settings file that someone else may have planted: never blocks on a FIFO or a
// device, never follows a symlink at the last step when asked not to, and refuses huge files.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";

export class UnsafeFileError extends Error {}

/**
 * The text of a regular file, or undefined when it does not exist. `check` sees the opened
 * file's status and may refuse it by returning a reason. Throws UnsafeFileError otherwise.
 */
export function readSettingsFile(
  path: string,
  opts: { maxBytes?: number; noFollow?: boolean; check?: (st: Stats) => string | undefined } = {},
): string | undefined {
  const maxBytes = opts.maxBytes ?? 1 << 20;
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
    fd = openSync(
      path,
      constants.O_RDONLY | constants.O_NONBLOCK | (opts.noFollow ? constants.O_NOFOLLOW : 0),
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw new UnsafeFileError(`cannot open ${path} (${code ?? (err as Error).message})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UnsafeFileError(`${path} is not a regular file`);
    const refused = opts.check?.(st);
    if (refused) throw new UnsafeFileError(refused);
    if (st.size > maxBytes) throw new UnsafeFileError(`${path} is larger than ${maxBytes} bytes`);
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got).toString("utf8");
  } finally {
    closeSync(fd);
  }
}
