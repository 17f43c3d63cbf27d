// The files Hands itself hands to its sandboxes (bwrap's synthetic /etc files, the seccomp
// program, execute-only copies of the session shell and its relay): one private folder per
// process, made with mkdtemp (a random name no other user can predict or pre-plant) and every
// file created with O_EXCL|O_NOFOLLOW, so nothing is ever written through a planted symlink.
import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  fchmodSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

/** Prefix of the per-process folders (the reaper removes those of dead processes). */
export const RUNTIME_DIR_PREFIX = "hands-rt-";

let dir: string | undefined;

/**
 * This process's private folder. 0711: the sandbox user (another uid when Hands runs as root)
 * may pass through it to the files bubblewrap binds, but cannot list it or create anything.
 */
export function runtimeDir(): string {
  if (dir) return dir;
  const d = mkdtempSync(join(sharedBase(), `${RUNTIME_DIR_PREFIX}${process.pid}-`));
  chmodSync(d, 0o711);
  dir = d;
  process.once("exit", () => {
    try {
      rmSync(d, { recursive: true, force: true });
    } catch {
      // best effort; the reaper removes folders of dead processes
    }
  });
  return d;
}

/** True when every folder from `/` down to `dir` may be passed through by any user. */
function searchableByAll(dir: string): boolean {
  for (let d = resolve(dir); ; d = dirname(d)) {
    try {
      if ((statSync(d).mode & 0o001) === 0) return false;
    } catch {
      return false;
    }
    if (d === dirname(d)) return true;
  }
}

/**
 * Where the private folder goes: the temp folder, unless a user along its path could not get
 * through (a private TMPDIR, while the sandbox runs as another uid): then /tmp.
 */
function sharedBase(): string {
  const t = tmpdir();
  if (searchableByAll(t) || !searchableByAll("/tmp")) return t;
  return "/tmp";
}

/** Creates `name` in the private folder (never follows or replaces anything) with `data`. */
export function writePrivateFile(name: string, data: string | Uint8Array, mode = 0o444): string {
  const path = join(runtimeDir(), name);
  const fd = openSync(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    const buf = typeof data === "string" ? Buffer.from(data) : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
  return path;
}

/**
 * An execute-only copy of a host program. A process started from a file its user cannot read
 * is not dumpable: no other process of that user may ptrace it, read its memory or open its
 * /proc/PID/fd — which is what keeps the session shell's pipes out of the sandbox's reach.
 */
export function executeOnlyCopy(name: string, source: string): string {
  const path = join(runtimeDir(), name);
  copyFileSync(source, path, constants.COPYFILE_EXCL);
  chmodSync(path, 0o111);
  return path;
}
