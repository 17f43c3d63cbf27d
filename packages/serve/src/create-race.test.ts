// A create and the reaper at the same time: the sandbox's row is in the store before its runtime
// has started, so a timeout that passes during a slow start must not reap it (which removed the
// files under the starting agent: "sandbox agent exited before it started"). The reaper runs at
// the worst moment — right after the insert, before the start — on both stores.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { describe, it } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { Sandbox } from "e2b";
import type { SandboxRow } from "./store.js";
import { startTestServe, type TestServe, testDatabase } from "./test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

/** Runs a reap pass, with the clock past the new sandbox's end, between its insert and its start. */
function reapBetweenInsertAndStart(s: TestServe): { reaped: string[][] } {
  const seen = { reaped: [] as string[][] };
  const insert = s.store.insertSandboxWithinQuota.bind(s.store);
  s.store.insertSandboxWithinQuota = async (row: SandboxRow) => {
    const refusal = await insert(row);
    if (!refusal) seen.reaped.push(await s.service.reap(row.endAt + 1000));
    return refusal;
  };
  return seen;
}

async function check(s: TestServe): Promise<void> {
  const tenant = await s.store.tenantByName("tenant-a");
  assert.ok(tenant);
  const seen = reapBetweenInsertAndStart(s);
  // Long enough that a loaded machine cannot pass it before the checks below (they reap with explicit clocks).
  const timeoutS = 30;
  const row = await s.service.create(tenant, { timeout: timeoutS });
  const created = Date.now();
  assert.deepEqual(seen.reaped, [[]], "the reaper skipped the sandbox while it was being created");
  const stored = await s.store.sandbox(row.id);
  assert.equal(stored?.state, "running");
  assert.ok(existsSync(s.service.workspaceOf(row.id)), "its files are there");
  assert.equal(s.service.runtime(row.id)?.alive, true);
  // The timeout counts from the moment it runs, in the store (the reaper's truth) and the reply.
  assert.equal(stored?.endAt, row.endAt);
  assert.ok(row.endAt >= created + timeoutS * 1000 - 50, `endAt ${row.endAt - created} ms after create`);
  const sb = await Sandbox.connect(row.id, s.opts());
  assert.equal((await sb.commands.run("echo alive")).stdout, "alive\n");
  // And it is still reaped once its time is up.
  assert.deepEqual(await s.service.reap(Date.now()), []);
  assert.deepEqual(await s.service.reap(row.endAt + 1), [row.id]);
  assert.equal((await s.store.sandbox(row.id))?.state, "killed");
  assert.equal(existsSync(s.service.workspaceOf(row.id)), false);
  assert.equal(s.service.queue.used, 0, "its slot was released once");
}

describe("create vs reaper", { skip, timeout: 60_000 }, () => {
  it("sqlite: a timeout passing during the start does not reap the sandbox mid-create", async () => {
    // The interval reaper stays out of it: the test runs the pass itself, at the worst moment.
    const s = await startTestServe({ reapIntervalMs: 3_600_000 });
    try {
      await check(s);
    } finally {
      await s.stop();
    }
  });

  it("postgres: the same with the shared store", async () => {
    const db = await testDatabase();
    const s = await startTestServe({ reapIntervalMs: 3_600_000, database: db.url, node: "n1" });
    try {
      await check(s);
    } finally {
      await s.stop();
      await db.drop();
    }
  });
});
