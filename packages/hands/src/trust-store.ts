// Which folders the user trusts, kept in the user's own config folder
// (~/.config/hands/trusted-folders.json, 0600). A folder is named by its real path (symlinks
// resolved) and remembered with its inode and birth time, so a folder moved or renamed is no
// longer trusted, and neither is a different folder later put at a trusted path (a fresh clone
// after `rm -rf`).
// Trust is exact: a trusted folder does not cover its subfolders, since a sandboxed command in
// a trusted project can write a subfolder's .hands/ as easily as anything else.
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  mkdirSync,
  openSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { readSettingsFile, UnsafeFileError } from "@hands/agent";
import { isInside } from "@hands/sandbox/base";
import { SettingsError } from "./errors.js";
import { userConfigPath } from "./paths.js";

export interface TrustedFolder {
  path: string;
  ino: number;
  /** Birth time (ms) where the file system records one: an inode number can be reused. */
  born?: number;
  trustedAt: string;
}

export type TrustState =
  | { trusted: true }
  | { trusted: false; why: "unknown" | "replaced" | "store-unsafe"; detail?: string };

export function trustStorePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(userConfigPath(env)), "trusted-folders.json");
}

/** The real path of a folder (symlinks resolved), or a SettingsError naming it as `what`. */
export function realFolder(dir: string, what = "path"): string {
  let real: string;
  try {
    real = realpathSync(resolve(dir));
  } catch {
    throw new SettingsError(`${what} does not exist: ${dir}`);
  }
  if (!statSync(real).isDirectory()) throw new SettingsError(`${what} is not a folder: ${dir}`);
  return real;
}

/**
 * The trusted folders. A store that another user could have written (not ours, or group- or
 * world-writable), or one inside `workspace` (where a sandboxed command could write it), is
 * never read: `unsafe` says why.
 */
export function readTrustStore(
  env: NodeJS.ProcessEnv = process.env,
  workspace?: string,
): { folders: TrustedFolder[]; unsafe?: string } {
  const path = trustStorePath(env);
  let text: string | undefined;
  try {
    text = readSettingsFile(path, {
      noFollow: true,
      check: (st) => {
        if (workspace && isInside(workspace, realpathSync(path)))
          return `${path} is inside the workspace, so the workspace could write it`;
        if (typeof process.getuid === "function" && st.uid !== process.getuid())
          return `${path} belongs to another user (uid ${st.uid})`;
        if (st.mode & 0o022) return `${path} is writable by other users`;
        return undefined;
      },
    });
  } catch (err) {
    if (err instanceof UnsafeFileError) return { folders: [], unsafe: err.message };
    throw err;
  }
  return { folders: text === undefined ? [] : parseStore(text, path) };
}

function parseStore(text: string, path: string): TrustedFolder[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new SettingsError(`cannot read ${path}: ${(err as Error).message}`);
  }
  const folders = (value as { folders?: unknown })?.folders;
  if (!Array.isArray(folders)) throw new SettingsError(`cannot read ${path}: expected {"folders": [...]}`);
  return folders.filter(
    (f): f is TrustedFolder =>
      typeof f?.path === "string" &&
      isAbsolute(f.path) &&
      Number.isInteger(f.ino) &&
      typeof f.trustedAt === "string",
  );
}

/** Whether `workspace` (a real path) is trusted, and if not, why. */
export function trustState(workspace: string, env: NodeJS.ProcessEnv = process.env): TrustState {
  const store = readTrustStore(env, workspace);
  if (store.unsafe) return { trusted: false, why: "store-unsafe", detail: store.unsafe };
  const entry = store.folders.find((f) => f.path === workspace);
  if (!entry) return { trusted: false, why: "unknown" };
  const st = statSync(workspace);
  if (st.ino !== entry.ino || (entry.born && st.birthtimeMs && Math.floor(st.birthtimeMs) !== entry.born))
    return {
      trusted: false,
      why: "replaced",
      detail: `${workspace} was trusted on ${entry.trustedAt.slice(0, 10)}, but the folder there now is a different one`,
    };
  return { trusted: true };
}

/** Trusts a folder (its real path); returns that path. */
export function trustFolder(dir: string, env: NodeJS.ProcessEnv = process.env): string {
  const path = realFolder(dir);
  const store = readTrustStore(env, path);
  if (store.unsafe) throw new SettingsError(`not changing the trusted folders: ${store.unsafe}`);
  const folders = store.folders.filter((f) => f.path !== path);
  const st = statSync(path);
  folders.push({
    path,
    ino: st.ino,
    ...(st.birthtimeMs ? { born: Math.floor(st.birthtimeMs) } : {}),
    trustedAt: new Date().toISOString(),
  });
  writeStore(env, folders);
  return path;
}

/** Forgets a folder: its path, or undefined when it was not trusted. A folder gone is matched by its name. */
export function untrustFolder(dir: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  let path: string;
  try {
    path = realFolder(dir);
  } catch {
    path = resolve(dir);
  }
  const store = readTrustStore(env);
  if (store.unsafe) throw new SettingsError(`not changing the trusted folders: ${store.unsafe}`);
  const folders = store.folders.filter((f) => f.path !== path);
  if (folders.length === store.folders.length) return undefined;
  writeStore(env, folders);
  return path;
}

/** Writes the store 0600 through a fresh temporary file (O_EXCL) renamed over it. */
function writeStore(env: NodeJS.ProcessEnv, folders: TrustedFolder[]): void {
  const path = trustStorePath(env);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  const fd = openSync(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    writeFileSync(fd, `${JSON.stringify({ folders }, null, 2)}\n`);
  } catch (err) {
    closeSync(fd);
    unlinkSync(tmp);
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, path);
}
