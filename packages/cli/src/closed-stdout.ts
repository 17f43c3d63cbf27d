// When the reader of stdout goes away (`hands memory export | head`), writing to it fails with
// EPIPE — an 'error' event that, with no listener, ends node with a stack trace. What was
// left to write has no reader: it is dropped, and the command ends as it would have.
import type { Writable } from "node:stream";

const GONE = new Set(["EPIPE", "ERR_STREAM_DESTROYED", "ECONNRESET"]);

/** Drops writes to `stream` once its reader is gone; any other error still surfaces. */
export function ignoreClosedStdout(stream: Writable): void {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (GONE.has(err.code ?? "")) return;
    // Not a closed reader: as it was without this listener.
    process.nextTick(() => {
      throw err;
    });
  });
}
