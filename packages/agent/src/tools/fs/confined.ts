// Opening workspace paths without trusting a name twice. resolveInWorkspace checks where a
// path leads, but a process in the sandbox can swap a folder for a symlink to outside right
// after that check. So the file tools never use the checked path again by name: they open the
// trusted root, then each component relative to the folder before it (through
// /proc/self/fd/N/name, which the kernel resolves from the descriptor like openat) with
// O_NOFOLLOW, and do everything else through the descriptors they got. A symlink met on the way
// is refused, so nothing outside the roots is ever opened. O_NONBLOCK and an lstat before the
// last open mean a FIFO, socket or device is never waited on (or opened at all, if it was there
// when looked at); fstat of the descriptor is what decides what was opened. Linux only (/proc).
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  read,
  readlinkSync,
  realpathSync,
  type Stats,
} from "node:fs";
import { relative, sep } from "node:path";
import { promisify } from "node:util";
import { isInsideRoot, PathError } from "../paths.js";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;
const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const DIR_FLAGS = READ_FLAGS | O_DIRECTORY;
const readAsync = promisify(read);

/** The path through which the kernel reaches what `fd` has open (or `name` inside that folder). */
export function viaFd(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

/** What a file that is not a regular file is, for messages ("a named pipe (FIFO)"). */
export function kindOf(st: Stats): string {
  if (st.isDirectory()) return "a folder";
  if (st.isFIFO()) return "a named pipe (FIFO)";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  if (st.isSymbolicLink()) return "a symbolic link";
  return "not a regular file";
}

/** A FIFO, socket or device: never opened by the file tools. */
export class SpecialFileError extends PathError {
  override name = "SpecialFileError";
  constructor(
    readonly kind: string,
    readonly path: string,
  ) {
    super(`${path} is ${kind}, not a regular file; the file tools only read regular files and folders.`);
  }
}

export interface Opened {
  fd: number;
  /** fstat of the descriptor: what was really opened. */
  stats: Stats;
}

function swapped(path: string): PathError {
  return new PathError(
    `${path} changed while it was being opened (a folder or file on the way is now a symbolic link); nothing was read or written. Try again.`,
  );
}

/** Closes a descriptor the file tools opened for reading (a failing close loses nothing). Call once per fd: numbers are reused. */
function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // nothing was written through it
  }
}

/** Opens a root (a real path Hands chose) and checks it is still where it was. */
function openRoot(root: string): number {
  const fd = openSync(root, DIR_FLAGS & ~O_NOFOLLOW);
  if (readlinkSync(viaFd(fd)) !== root) {
    closeQuietly(fd);
    throw new PathError(`the folder ${root} moved while it was in use.`);
  }
  return fd;
}

/** Opens a folder `name` inside the open folder `dirFd`, refusing a symlink. */
function openDirAt(dirFd: number, name: string, shown: string): number {
  try {
    return openSync(viaFd(dirFd, name), DIR_FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // O_DIRECTORY|O_NOFOLLOW on a symlink fails with ENOTDIR (or ELOOP): say which it was.
    if ((code === "ENOTDIR" || code === "ELOOP") && lstatSync(viaFd(dirFd, name)).isSymbolicLink())
      throw swapped(shown);
    throw e;
  }
}

/**
 * Opens `name` inside the open folder `dirFd` without following a symlink or blocking: a
 * regular file or a folder; anything else is refused (SpecialFileError) before it is opened.
 * `shown` names it in errors.
 */
export function openAt(dirFd: number, name: string, shown: string): Opened {
  const at = viaFd(dirFd, name);
  const before = lstatSync(at);
  if (before.isSymbolicLink()) throw swapped(shown);
  if (!before.isFile() && !before.isDirectory()) throw new SpecialFileError(kindOf(before), shown);
  let fd: number;
  try {
    fd = openSync(at, READ_FLAGS);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ELOOP") throw swapped(shown);
    if ((e as NodeJS.ErrnoException).code === "ENXIO") throw new SpecialFileError("a socket", shown);
    throw e;
  }
  const stats = fstatSync(fd);
  if (!stats.isFile() && !stats.isDirectory()) {
    closeQuietly(fd);
    throw new SpecialFileError(kindOf(stats), shown);
  }
  return { fd, stats };
}

function rootOf(roots: readonly string[], abs: string): string {
  const root = roots.find((r) => isInsideRoot(r, abs));
  if (root === undefined) throw new PathError(`path is outside the workspace: ${abs}`);
  return root;
}

function partsBelow(root: string, abs: string): string[] {
  return relative(root, abs).split(sep).filter(Boolean);
}

/** The path for messages: relative below the first root (the workspace), else absolute. */
function shownBelow(roots: readonly string[], root: string, parts: string[], abs: string): string {
  return root === roots[0] ? parts.join("/") || "." : abs;
}

/**
 * Opens the real path `abs` (inside one of `roots`) from its root, one component at a time,
 * never following a symlink (see the top of this file). The caller closes `fd`.
 * Throws ENOENT / ENOTDIR like fs does, PathError when a component is a symlink (a swap),
 * SpecialFileError for a FIFO, socket or device.
 */
export function openInside(roots: readonly string[], abs: string): Opened {
  const root = rootOf(roots, abs);
  const parts = partsBelow(root, abs);
  const shown = shownBelow(roots, root, parts, abs);
  let fd = openRoot(root);
  try {
    for (let i = 0; i < parts.length - 1; i++) {
      const next = openDirAt(fd, parts[i]!, shown);
      closeSync(fd);
      fd = next;
    }
    const last = parts[parts.length - 1];
    if (last === undefined) return { fd, stats: fstatSync(fd) };
    const opened = openAt(fd, last, shown);
    closeSync(fd);
    return opened;
  } catch (e) {
    closeQuietly(fd);
    throw e;
  }
}

/**
 * Opens the folder that holds the real path `abs` (below `root`), creating the missing
 * folders on the way when `create`; the same walk as openInside. Returns the folder's
 * descriptor (the caller closes it) and the last component's name, to be used only through
 * viaFd(dirFd, name).
 */
export function openParentInside(
  root: string,
  abs: string,
  create: boolean,
): { dirFd: number; name: string } {
  const parts = partsBelow(rootOf([root], abs), abs);
  const shown = parts.join("/");
  const name = parts.pop();
  if (name === undefined) throw new PathError("path is the workspace root folder, not a file.");
  let fd = openRoot(root);
  try {
    for (const part of parts) {
      let next: number;
      try {
        next = openDirAt(fd, part, shown);
      } catch (e) {
        if (!create || (e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
        try {
          mkdirSync(viaFd(fd, part));
        } catch (m) {
          if ((m as NodeJS.ErrnoException).code !== "EEXIST") throw m;
        }
        next = openDirAt(fd, part, shown);
      }
      closeSync(fd);
      fd = next;
    }
    return { dirFd: fd, name };
  } catch (e) {
    closeQuietly(fd);
    throw e;
  }
}

/**
 * Opens an entry found in the open folder `dirFd`: like openAt, but a symlink is followed when
 * it leads inside one of `roots` (to the real path, opened the safe way from its root).
 */
export function openListed(roots: readonly string[], dirFd: number, name: string, shown: string): Opened {
  const at = viaFd(dirFd, name);
  if (!lstatSync(at).isSymbolicLink()) return openAt(dirFd, name, shown);
  const real = realpathSync.native(at);
  if (!roots.some((r) => isInsideRoot(r, real)))
    throw new PathError(`${shown} is a symbolic link to ${real}, outside the workspace.`);
  return openInside(roots, real);
}

/** The text of a small file opened with `open` (at most `max` bytes), or undefined when it cannot be read. */
export async function readSmallText(open: () => Opened, max: number): Promise<string | undefined> {
  let opened: Opened;
  try {
    opened = open();
  } catch {
    return undefined;
  }
  try {
    return opened.stats.isFile() ? (await readFd(opened.fd, max)).toString("utf8") : undefined;
  } catch {
    return undefined;
  } finally {
    closeQuietly(opened.fd);
  }
}

export { closeQuietly };

/**
 * Reads the open file from its start, at most `max` bytes (even if it grows meanwhile), off
 * the event loop. Stops early when `signal` aborts (throws its reason).
 */
export async function readFd(fd: number, max: number, signal?: AbortSignal): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of chunksOf(fd, { max, signal })) {
    chunks.push(chunk);
    total += chunk.length;
  }
  return Buffer.concat(chunks, total);
}

/** The open file's bytes from its start, in chunks, at most `max` in all. */
export async function* chunksOf(
  fd: number,
  options: { max?: number; chunkBytes?: number; signal?: AbortSignal | undefined } = {},
): AsyncGenerator<Buffer> {
  const max = options.max ?? Number.POSITIVE_INFINITY;
  const size = options.chunkBytes ?? 256 * 1024;
  let pos = 0;
  while (pos < max) {
    options.signal?.throwIfAborted();
    const want = Math.min(size, max - pos);
    const buf = Buffer.allocUnsafe(want);
    const { bytesRead } = await readAsync(fd, buf, 0, want, pos);
    if (bytesRead === 0) return;
    pos += bytesRead;
    yield bytesRead === want ? buf : buf.subarray(0, bytesRead);
  }
}
