// Attack: filling the host's disk through the workspace (three 512 MiB files went in), the
// unsized /dev/shm, and a memory bomb reported as a mystery signal. Here at a small scale: a
// 48 MiB quota and 3 x 32 MiB files.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { explicitlySkipped, makeSandbox, requireBackend, TEST_LIMITS, tempWorkspace } from "../testing.js";
import type { SandboxKind } from "../types.js";
import { diskUsage } from "../workspace-quota.js";

const QUOTA = 48 * 1024 * 1024;

for (const kind of ["bwrap", "docker"] as SandboxKind[]) {
  describe(`security: workspace limits (${kind})`, { skip: explicitlySkipped(kind) }, () => {
    test("a command writing past the workspace quota is stopped and told why; deleting goes on", async () => {
      await requireBackend(kind);
      const ws = await tempWorkspace();
      const sb = await makeSandbox(kind, ws.dir, { limits: TEST_LIMITS, workspaceQuotaBytes: QUOTA });
      try {
        const r = await sb.exec(
          "for i in 1 2 3 4 5 6; do head -c 32M /dev/zero > f$i; sync f$i; sleep 0.2; done; echo wrote-all",
          { timeoutMs: 60_000 },
        );
        assert.doesNotMatch(r.stdout, /wrote-all/, JSON.stringify(r));
        assert.equal(r.quotaExceeded, true, JSON.stringify(r));
        assert.match(r.stderr, /workspace quota exceeded \(limit 48 MiB/);
        assert.ok((await diskUsage(ws.dir)) < QUOTA + 3 * 32 * 1024 * 1024, "far past the quota");
        const rm = await sb.exec("rm -f f*; echo cleaned");
        assert.equal(rm.stdout, "cleaned\n");
        const small = await sb.exec("head -c 1M /dev/zero > small && echo ok");
        assert.equal(small.stdout, "ok\n");
      } finally {
        await sb.destroy();
        await ws.cleanup();
      }
    });

    test("/dev/shm is capped at 64 MiB", async () => {
      await requireBackend(kind);
      const ws = await tempWorkspace();
      const sb = await makeSandbox(kind, ws.dir, {
        limits: { ...TEST_LIMITS, memoryBytes: 512 * 1024 * 1024 },
      });
      try {
        const r = await sb.exec(
          "head -c 100M /dev/zero > /dev/shm/fill; echo rc=$?; df -k /dev/shm | tail -1",
        );
        assert.match(r.stderr, /No space left/, JSON.stringify(r));
        const size = Number(r.stdout.trim().split("\n").pop()?.split(/\s+/)[1]);
        assert.ok(size > 0 && size <= 64 * 1024, `shm size ${size} KiB`);
      } finally {
        await sb.destroy();
        await ws.cleanup();
      }
    });
  });
}
