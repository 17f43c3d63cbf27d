// Atomic file writes: write a temp file in the same folder, then rename it over the target, so
// a crash never leaves a half-written file behind. Everything happens inside a folder opened
// as a descriptor (confined.ts), so a folder swapped for a symlink cannot redirect the write.
import { randomBytes } from "node:crypto";
import { constants, lstatSync } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { viaFd } from "./confined.js";

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

/**
 * Writes `data` to `name` inside the open folder `dirFd`. The temp file is created with
 * O_EXCL|O_NOFOLLOW; the rename replaces whatever `name` is at that moment (a symlink planted
 * there is replaced, never followed). An existing file's permission bits are kept, without
 * setuid/setgid: Hands' writes never make a privileged program.
 */
export async function writeFileAtomicAt(
  dirFd: number,
  name: string,
  data: string | Uint8Array,
): Promise<void> {
  let mode: number | undefined;
  try {
    const st = lstatSync(viaFd(dirFd, name));
    if (st.isFile()) mode = st.mode & 0o777;
  } catch {
    mode = undefined;
  }
  // The temp name stays within NAME_MAX (255 bytes) even for a long target name.
  const tmp = `.${name.slice(0, 100)}.${randomBytes(4).toString("hex")}.hands-tmp`;
  const fh = await open(viaFd(dirFd, tmp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode ?? 0o666);
  try {
    try {
      await fh.writeFile(data);
      await fh.sync();
      if (mode !== undefined) await fh.chmod(mode);
    } finally {
      await fh.close();
    }
    await rename(viaFd(dirFd, tmp), viaFd(dirFd, name));
  } catch (e) {
    await unlink(viaFd(dirFd, tmp)).catch(() => {});
    throw e;
  }
}
