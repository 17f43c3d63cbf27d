// Reading a file's previous content for diffs and undo (capped).
import { readFile, stat } from "node:fs/promises";

/** Content kept in tool data for before/after (larger files keep only a flag). */
export const SNAPSHOT_MAX_BYTES = 1024 * 1024;

export interface Snapshot {
  exists: boolean;
  isFile: boolean;
  size: number;
  /** Undefined when the file is missing or larger than SNAPSHOT_MAX_BYTES. */
  text?: string;
}

export async function snapshot(path: string): Promise<Snapshot> {
  let st: Awaited<ReturnType<typeof stat>>;
  try {
    st = await stat(path);
  } catch {
    return { exists: false, isFile: false, size: 0 };
  }
  if (!st.isFile()) return { exists: true, isFile: false, size: st.size };
  if (st.size > SNAPSHOT_MAX_BYTES) return { exists: true, isFile: true, size: st.size };
  return { exists: true, isFile: true, size: st.size, text: await readFile(path, "utf8") };
}

/** The text itself when small enough for tool data, else undefined. */
export function capForData(text: string): string | undefined {
  return Buffer.byteLength(text) <= SNAPSHOT_MAX_BYTES ? text : undefined;
}
