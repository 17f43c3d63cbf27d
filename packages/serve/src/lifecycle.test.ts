// Lifecycle: timeouts reaped on time, state that outlives the service (a restart pauses what was
// running, removes what expired meanwhile and folders nobody knows), the audit log and metrics.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { after, describe, it } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { Sandbox } from "e2b";
import { raw, startTestServe } from "./test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

async function until(f: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await f()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return f();
}

describe("lifecycle", { skip, timeout: 120_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), "hs-"));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it("reaps a sandbox when its timeout passes, and pauses one created with autoPause", async () => {
    const s = await startTestServe();
    try {
      // 3 s: time enough for the two creates and the write on a machine busy with other work.
      const short = await Sandbox.create({ timeoutMs: 3000 });
      const paused = await Sandbox.create({ timeoutMs: 3000, lifecycle: { onTimeout: "pause" } });
      await paused.files.write("survives.txt", "yes");
      assert.equal(await short.isRunning(), true);
      assert.ok(await until(async () => !(await short.isRunning()), 6000), "reaped within 3 s of its end");
      await assert.rejects(Sandbox.getInfo(short.sandboxId), /not found/i);
      assert.ok(
        await until(() => !existsSync(s.service.workspaceOf(short.sandboxId)), 2000),
        "its files are gone",
      );
      assert.ok(await until(async () => (await Sandbox.getInfo(paused.sandboxId)).state === "paused", 4000));
      const back = await Sandbox.connect(paused.sandboxId);
      assert.equal(await back.files.read("survives.txt"), "yes");
      await back.kill();
      const reaps = (await s.store.auditLog(100)).filter((r) => r.event === "reap");
      assert.deepEqual(reaps.map((r) => r.sandbox).sort(), [short.sandboxId, paused.sandboxId].sort());
      const metrics = (await raw(`${s.apiUrl}/metrics`)).text;
      assert.match(metrics, /hands_serve_reaps_total\{reason="timeout"\} 1/);
      assert.match(metrics, /hands_serve_reaps_total\{reason="timeout-pause"\} 1/);
    } finally {
      await s.stop();
    }
  });

  it("removes paused sandboxes after the retention time", async () => {
    const s = await startTestServe({ pausedRetentionMs: 500 });
    try {
      const p = await Sandbox.create();
      await p.pause();
      assert.equal((await Sandbox.getInfo(p.sandboxId)).state, "paused");
      assert.ok(
        await until(async () => (await s.store.sandbox(p.sandboxId))?.state === "killed", 3000),
        "reaped after 500 ms paused",
      );
      assert.equal((await s.store.sandbox(p.sandboxId))?.endReason, "paused too long");
      await assert.rejects(Sandbox.connect(p.sandboxId), /not found/i);
    } finally {
      await s.stop();
    }
  });

  it("after a restart: running sandboxes come back paused with their files, expired ones and orphans are removed", async () => {
    const first = await startTestServe({ dataDir });
    // This run never reaps: the sandbox below expires while the service is "down".
    first.service.reap = async () => [];
    const keep = await Sandbox.create({ timeoutMs: 600_000 });
    await keep.files.write("work/state.txt", "before restart");
    const expire = await Sandbox.create({ timeoutMs: 1000 });
    const orphan = join(dataDir, "sandboxes", "orphan0000000000000");
    mkdirSync(orphan);
    writeFileSync(join(orphan, "junk"), "x");
    // The service goes away without cleaning up (as in a crash, its sandboxes die with it).
    await first.close();
    await new Promise((r) => setTimeout(r, 1100));
    const second = await startTestServe({ dataDir });
    try {
      process.env.E2B_API_KEY = first.key;
      const info = await Sandbox.getInfo(keep.sandboxId);
      assert.equal(info.state, "paused");
      await assert.rejects(Sandbox.getInfo(expire.sandboxId), /not found/i);
      assert.equal(existsSync(orphan), false, "a folder no sandbox owns is removed");
      // (The folder's name is a keyed hash of the id, the same after the restart.)
      assert.deepEqual(readdirSync(join(dataDir, "sandboxes")), [
        basename(second.service.workspaceOf(keep.sandboxId)),
      ]);
      const back = await Sandbox.connect(keep.sandboxId);
      assert.equal(await back.files.read("work/state.txt"), "before restart");
      assert.equal((await back.commands.run("cat work/state.txt")).stdout, "before restart");
      await back.kill();
    } finally {
      await second.stop();
    }
  });

  it("audits creates, commands with exit codes and durations, file operations and kills, per tenant", async () => {
    const s = await startTestServe();
    try {
      const sb = await Sandbox.create();
      await sb.commands.run("echo audited; exit 0");
      await sb.commands.run("exit 4").catch(() => {});
      await sb.files.write("a.txt", "x");
      await sb.files.read("a.txt");
      await sb.kill();
      const log = (await s.store.auditLog(100)).filter((r) => r.sandbox === sb.sandboxId);
      const tenant = (await s.store.tenantByName("tenant-a"))?.id;
      assert.ok(log.every((r) => r.tenant === tenant));
      assert.deepEqual(
        log.map((r) => r.event),
        ["create", "exec", "exec", "file", "file", "kill"],
      );
      const execs = log.filter((r) => r.event === "exec").map((r) => r.detail as Record<string, unknown>);
      assert.equal(execs[0]?.command, "/bin/bash -l -c echo audited; exit 0");
      assert.equal(execs[0]?.exitCode, 0);
      assert.equal(execs[1]?.exitCode, 4);
      assert.equal(typeof execs[1]?.durationMs, "number");
      const files = log.filter((r) => r.event === "file").map((r) => r.detail as Record<string, unknown>);
      assert.deepEqual(
        files.map((f) => [f.op, f.path, f.bytes]),
        [
          ["write", "/home/user/a.txt", 1],
          ["read", "a.txt", 1],
        ],
      );
      const metrics = (await raw(`${s.apiUrl}/metrics`)).text;
      assert.match(metrics, /hands_serve_sandboxes\{state="killed"\} 1/);
      assert.match(metrics, /hands_serve_create_seconds_count 1/);
      assert.match(metrics, /hands_serve_exec_seconds_count 2/);
      assert.match(metrics, /hands_serve_queue_length 0/);
    } finally {
      await s.stop();
    }
  });
});
