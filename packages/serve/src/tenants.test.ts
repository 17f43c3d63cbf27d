// Identity and quotas through the official SDK: tenants cannot see, list, exec into or kill each
// other's sandboxes; bad and revoked keys are refused; per-tenant limits and the node's queue.
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { AuthenticationError, Sandbox } from "e2b";
import { FairQueue } from "./queue.js";
import type { SqliteStore } from "./store-sqlite.js";
import { raw, startTestServe, type TestServe } from "./test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

describe("tenants and quotas", { skip, timeout: 120_000 }, () => {
  let s: TestServe;
  let keyB: string;
  before(async () => {
    s = await startTestServe({ capacity: 3, maxQueue: 2, queueTimeoutMs: 1500 });
    keyB = (await s.keys.create("tenant-b")).key;
  });
  after(async () => {
    await s?.stop();
  });

  it("keeps each tenant's sandboxes invisible to the others (404 / not running)", async () => {
    const a = await Sandbox.create({ metadata: { owner: "a" } });
    try {
      const asB = s.opts(keyB);
      assert.deepEqual(await Sandbox.list({ ...asB }).nextItems(), []);
      await assert.rejects(Sandbox.getInfo(a.sandboxId, asB), /not found/i);
      assert.equal(await Sandbox.kill(a.sandboxId, asB), false, "B's kill finds nothing");
      await assert.rejects(Sandbox.setTimeout(a.sandboxId, 10_000, asB), /not found/i);
      await assert.rejects(Sandbox.pause(a.sandboxId, asB), /not found/i);
      await assert.rejects(Sandbox.connect(a.sandboxId, asB), /not found/i);
      // Data plane: B knows the id but not the access token the API gave A.
      const h = {
        "e2b-sandbox-id": a.sandboxId,
        "e2b-sandbox-port": "49983",
        "content-type": "application/json",
      };
      const noToken = await raw(`${s.sandboxUrl}/process.Process/List`, {
        method: "POST",
        headers: h,
        body: "{}",
      });
      assert.equal(noToken.status, 401);
      const wrong = await raw(`${s.sandboxUrl}/process.Process/List`, {
        method: "POST",
        headers: { ...h, "x-access-token": "x".repeat(32) },
        body: "{}",
      });
      assert.equal(wrong.status, 403);
      assert.equal(await a.isRunning(), true, "A's sandbox is untouched");
      assert.equal((await a.commands.run("echo still-mine")).stdout, "still-mine\n");
    } finally {
      await a.kill();
    }
  });

  it("refuses missing, malformed, unknown and revoked keys with 401", async () => {
    for (const key of [undefined, "nope", `e2b_${"0".repeat(40)}`]) {
      const r = await raw(`${s.apiUrl}/v2/sandboxes`, { headers: key ? { "x-api-key": key } : {} });
      assert.equal(r.status, 401);
      assert.deepEqual(r.json(), { code: 401, message: "Invalid API key" });
    }
    const c = await s.keys.create("tenant-c");
    assert.equal((await raw(`${s.apiUrl}/v2/sandboxes`, { headers: { "x-api-key": c.key } })).status, 200);
    assert.equal(await s.keys.revoke(c.id), true);
    await assert.rejects(
      Sandbox.list(s.opts(c.key)).nextItems(),
      (e: unknown) => e instanceof AuthenticationError,
    );
  });

  it("stores only scrypt hashes of keys", () => {
    const rows = (s.store as SqliteStore).db.prepare("SELECT * FROM api_keys").all() as Array<
      Record<string, unknown>
    >;
    assert.ok(rows.length >= 2);
    const dump = JSON.stringify(
      rows.map((r) => Object.values(r).map((v) => (Buffer.isBuffer(v) ? v.toString("hex") : v))),
    );
    assert.ok(!dump.includes(s.key.slice(4)), "the key itself is nowhere in the table");
    assert.equal(
      statSync(join(s.dataDir, "serve.db")).mode & 0o777,
      0o600,
      "the database is the owner's only",
    );
  });

  it("enforces the tenant's concurrent-sandbox, CPU, memory and lifetime limits", async () => {
    const t = await s.keys.create("tenant-small", "k", { maxSandboxes: 1, maxLifetimeSec: 60 });
    const o = s.opts(t.key);
    const one = await Sandbox.create(o);
    try {
      await assert.rejects(Sandbox.create(o), /maximum number of concurrent sandboxes \(1\)/);
      await assert.rejects(
        Sandbox.create({ ...o, timeoutMs: 120_000 }),
        /timeout cannot be greater than 60 seconds/,
      );
    } finally {
      await one.kill();
    }
    const cpu = await s.keys.create("tenant-cpu", "k", { maxCpus: 0.5 });
    await assert.rejects(Sandbox.create(s.opts(cpu.key)), /CPU limit/);
    const mem = await s.keys.create("tenant-mem", "k", { maxMemoryMB: 100 });
    await assert.rejects(Sandbox.create(s.opts(mem.key)), /memory limit/);
  });

  it("queues creates when the node is full, then fails them clearly on timeout or a full queue", async () => {
    const running = await Promise.all([1, 2, 3].map(() => Sandbox.create()));
    try {
      // A create that waits gets the slot a kill frees.
      const waiting = Sandbox.create();
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(s.service.queue.waiting, 1);
      await running.pop()?.kill();
      const got = await waiting;
      running.push(got);
      assert.equal(await got.isRunning(), true);
      // Nobody leaves: the wait times out with 503 and a reason.
      const t0 = Date.now();
      await assert.rejects(Sandbox.create(), /waited 1500 ms in the queue/);
      assert.ok(Date.now() - t0 >= 1400);
      // Queue of 2 full: the third waiter is refused at once.
      const w1 = Sandbox.create().catch((e: Error) => e);
      const w2 = Sandbox.create().catch((e: Error) => e);
      await new Promise((r) => setTimeout(r, 100));
      const r = await raw(`${s.apiUrl}/v2/sandboxes`, {
        method: "POST",
        headers: { "x-api-key": s.key, "content-type": "application/json" },
        body: "{}",
      });
      assert.equal(r.status, 503);
      assert.equal((r.json() as { error_code: string }).error_code, "sandbox_capacity_unavailable");
      assert.match((r.json() as { message: string }).message, /creates are already waiting/);
      for (const w of await Promise.all([w1, w2])) assert.match(String(w), /in the queue/);
    } finally {
      await Promise.all(running.map((x) => x.kill()));
    }
    assert.equal(s.service.queue.used, 0, "every slot came back");
  });
});

describe("FairQueue", () => {
  it("serves tenants in turn, not in arrival order", async () => {
    const q = new FairQueue(1, 10, 5000);
    await q.acquire("a");
    const order: string[] = [];
    const waits = [
      q.acquire("a").then(() => order.push("a1")),
      q.acquire("a").then(() => order.push("a2")),
      q.acquire("a").then(() => order.push("a3")),
      q.acquire("b").then(() => order.push("b1")),
    ];
    for (let i = 0; i < 4; i++) {
      q.release();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(waits);
    assert.deepEqual(order, ["a1", "b1", "a2", "a3"]);
  });

  it("gives a cancelled waiter's place to the next", async () => {
    const q = new FairQueue(1, 10, 5000);
    await q.acquire("a");
    const ac = new AbortController();
    const cancelled = q.acquire("a", ac.signal).catch((e: Error) => e.message);
    const next = q.acquire("b");
    ac.abort();
    assert.match(String(await cancelled), /cancelled/);
    q.release();
    await next;
    assert.equal(q.used, 1);
    assert.equal(q.waiting, 0);
  });
});
