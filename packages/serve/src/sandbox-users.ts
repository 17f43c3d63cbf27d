// Which host uid each sandbox runs as, and who may pass through the service's folders.
//
// As root, every sandbox gets a uid of its own (never root, never shared with another sandbox
// or account): its folder is 0700 and owned by that uid, so neither another tenant's sandbox
// nor any other local user can read it, and per-uid kernel limits (inotify instances, user
// namespaces, …) are not shared between tenants. All those uids share one group, the only one
// (besides root) that may pass through the data folders (0710): bubblewrap, running as the
// sandbox's uid, must get through them to mount its folder. The uid is the owner of the
// sandbox's folder, so a paused sandbox resumes as the same uid.
import { randomBytes, randomInt } from "node:crypto";
import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";

/** The group of every sandbox's uid; the sandbox uids follow it. */
export const SANDBOX_GID = 1_900_000_000;
/** How many sandbox uids there are (SANDBOX_GID + 1 …): far below 2^31, clear of subuid ranges. */
export const SANDBOX_UID_COUNT = 2 ** 24;

export interface SandboxUser {
  uid: number;
  gid: number;
}

export class SandboxUsers {
  /** uids of the folders in the sandboxes folder (read once, then kept up to date). */
  private inUse: Set<number> | undefined;

  /**
   * @param sandboxesDir where the sandboxes' folders are
   * @param fixed one uid for every sandbox (an operator's choice), instead of one each
   */
  constructor(
    private readonly sandboxesDir: string,
    private readonly fixed?: number,
  ) {}

  /** undefined when the service does not run as root: sandboxes then run as the service's user. */
  static forService(sandboxesDir: string, fixed?: number): SandboxUsers | undefined {
    return process.getuid?.() === 0 ? new SandboxUsers(sandboxesDir, fixed) : undefined;
  }

  /** The group that may pass through the data folders. */
  get gid(): number {
    return this.fixed ?? SANDBOX_GID;
  }

  /** The user of the sandbox whose folder is `name`: its folder's owner, else a new uid. */
  userOf(name: string): SandboxUser {
    const st = lstatSync(join(this.sandboxesDir, name), { throwIfNoEntry: false });
    if (st?.isDirectory() && st.uid !== 0) return { uid: st.uid, gid: this.gid };
    if (this.fixed !== undefined) return { uid: this.fixed, gid: this.fixed };
    const used = this.used();
    for (;;) {
      const uid = SANDBOX_GID + 1 + randomInt(SANDBOX_UID_COUNT);
      if (used.has(uid)) continue;
      used.add(uid);
      return { uid, gid: this.gid };
    }
  }

  /** The folder `name` is gone: its uid may be given out again. */
  release(uid: number): void {
    if (uid !== this.fixed) this.inUse?.delete(uid);
  }

  private used(): Set<number> {
    if (this.inUse) return this.inUse;
    const s = new Set<number>();
    for (const n of readdirSync(this.sandboxesDir)) {
      const st = lstatSync(join(this.sandboxesDir, n), { throwIfNoEntry: false });
      if (st) s.add(st.uid);
    }
    this.inUse = s;
    return s;
  }
}

/**
 * The data folder and its sandboxes folder: private to the service's user, and — as root — open
 * to the sandboxes' group for passing through only (no listing, no reading).
 */
export function prepareDataFolders(dataDir: string, gid: number | undefined): void {
  const sandboxes = join(dataDir, "sandboxes");
  mkdirSync(sandboxes, { recursive: true, mode: 0o700 });
  for (const d of [dataDir, sandboxes]) {
    if (gid !== undefined) chownSync(d, 0, gid);
    chmodSync(d, gid !== undefined ? 0o710 : 0o700);
  }
}

/**
 * The service's key for naming sandbox folders (`<data>/folder-key`, 32 bytes, 0600, made on the
 * first start): names stay the same across restarts and cannot be computed from an id without it.
 */
export function folderKey(dataDir: string): Buffer {
  const path = join(dataDir, "folder-key");
  const flags = constants.O_RDWR | constants.O_NOFOLLOW;
  let fd: number;
  let made = false;
  try {
    fd = openSync(path, flags | constants.O_CREAT | constants.O_EXCL, 0o600);
    made = true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    fd = openSync(path, flags);
  }
  try {
    if (made) {
      writeSync(fd, randomBytes(32));
      return readKey(fd, path);
    }
    const st = fstatSync(fd);
    if (!st.isFile() || st.uid !== process.getuid?.() || (st.mode & 0o077) !== 0)
      throw new Error(
        `${path} is not this user's private file (0600); remove it (paused sandboxes' files are then dropped at the next start)`,
      );
    return readKey(fd, path);
  } finally {
    closeSync(fd);
  }
}

function readKey(fd: number, path: string): Buffer {
  const key = Buffer.alloc(32);
  if (readSync(fd, key, 0, 32, 0) !== 32) throw new Error(`${path} is not a 32-byte key: remove it`);
  return key;
}
