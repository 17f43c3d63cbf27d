// The quota's watch on its own: the session's growth is found even while another process on the
// same filesystem frees more than the session writes (CI's parallel tests do).
import assert from "node:assert/strict";
import { mkdir, mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { WorkspaceQuota } from "./workspace-quota.js";

const MiB = 1024 * 1024;

/** A file of `bytes` real blocks (zeros written, then synced: statfs sees them at once). */
async function fill(path: string, bytes: number): Promise<void> {
  const f = await open(path, "w");
  const chunk = Buffer.alloc(4 * MiB, 1);
  for (let n = 0; n < bytes; n += chunk.length) await f.write(chunk);
  await f.sync();
  await f.close();
}

test("the session's writes are seen while space is freed beside them", { timeout: 60_000 }, async () => {
  const root = await mkdtemp(join(tmpdir(), "hands-quota-"));
  try {
    const ws = join(root, "ws");
    await mkdir(ws);
    const other = join(root, "other");
    await fill(other, 160 * MiB);
    const quota = new WorkspaceQuota(ws, 48 * MiB);
    await quota.growth();
    let exceeded: number | undefined;
    const stop = quota.watch((g) => {
      exceeded = g;
    });
    // Another process frees 160 MiB first, then the session writes 4 x 24 MiB, 250 ms apart.
    await rm(other);
    for (let i = 0; i < 4 && exceeded === undefined; i++) {
      await fill(join(ws, `f${i}`), 24 * MiB);
      await new Promise((r) => setTimeout(r, 250));
    }
    for (let i = 0; i < 20 && exceeded === undefined; i++) await new Promise((r) => setTimeout(r, 100));
    await stop();
    assert.ok(exceeded !== undefined, "the quota never fired");
    assert.ok(exceeded > 48 * MiB, `growth ${exceeded}`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
