// Reading a file's previous content for diffs and undo (capped), through an open folder.
import { closeQuietly, openAt, readFd, SpecialFileError } from "./confined.js";

/** Content kept in tool data for before/after (larger files keep only a flag). */
export const SNAPSHOT_MAX_BYTES = 1024 * 1024;

export interface Snapshot {
  exists: boolean;
  isFile: boolean;
  size: number;
  /** Undefined when the file is missing or larger than SNAPSHOT_MAX_BYTES. */
  text?: string;
}

/** What `name` inside the open folder `dirFd` holds now (`shown` names it in errors). */
export async function snapshotAt(dirFd: number, name: string, shown: string): Promise<Snapshot> {
  let opened: ReturnType<typeof openAt>;
  try {
    opened = openAt(dirFd, name, shown);
  } catch (e) {
    if (e instanceof SpecialFileError) return { exists: true, isFile: false, size: 0 };
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { exists: false, isFile: false, size: 0 };
    throw e;
  }
  const { fd, stats } = opened;
  try {
    if (!stats.isFile()) return { exists: true, isFile: false, size: stats.size };
    if (stats.size > SNAPSHOT_MAX_BYTES) return { exists: true, isFile: true, size: stats.size };
    const text = (await readFd(fd, SNAPSHOT_MAX_BYTES)).toString("utf8");
    return { exists: true, isFile: true, size: stats.size, text };
  } finally {
    closeQuietly(fd);
  }
}

/** The text itself when small enough for tool data, else undefined. */
export function capForData(text: string): string | undefined {
  return Buffer.byteLength(text) <= SNAPSHOT_MAX_BYTES ? text : undefined;
}
