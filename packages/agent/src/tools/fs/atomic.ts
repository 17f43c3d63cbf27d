// Atomic file writes: write a temp file in the same folder, then rename it over the target, so
// a crash never leaves a half-written file behind.
import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  let mode: number | undefined;
  try {
    mode = (await stat(path)).mode & 0o7777;
  } catch {
    mode = undefined;
  }
  const tmp = join(dir, `.${basename(path)}.${randomBytes(4).toString("hex")}.hands-tmp`);
  const fh = await open(tmp, "wx", mode ?? 0o666);
  try {
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    if (mode !== undefined) await chmod(tmp, mode);
    await rename(tmp, path);
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw e;
  }
}
