// One contract, both stores: SQLite (one node) and PostgreSQL (several; a real server from
// scripts/postgres.sh). Quotas are checked under concurrent creates from two connection pools —
// two nodes, as far as the database can tell.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { SandboxRow, Store } from "./store.js";
import { PostgresStore } from "./store-postgres.js";
import { SqliteStore } from "./store-sqlite.js";
import { testDatabase } from "./test-support.js";

interface Harness {
  /** The store, and a second handle on the same state (another node's). */
  open(): Promise<[Store, Store]>;
  close(): Promise<void>;
}

function sqlite(): Harness {
  const dir = mkdtempSync(join(tmpdir(), "hs-store-"));
  const stores: Store[] = [];
  return {
    async open() {
      const path = join(dir, "serve.db");
      const pair: [Store, Store] = [new SqliteStore(path), new SqliteStore(path)];
      stores.push(...pair);
      return pair;
    },
    async close() {
      for (const s of stores) await s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgres(): Harness {
  let db: Awaited<ReturnType<typeof testDatabase>> | undefined;
  const stores: Store[] = [];
  return {
    async open() {
      db = await testDatabase();
      const pair: [Store, Store] = [await PostgresStore.connect(db.url), await PostgresStore.connect(db.url)];
      stores.push(...pair);
      return pair;
    },
    async close() {
      for (const s of stores) await s.close();
      await db?.drop();
    },
  };
}

const LIMITS = { maxSandboxes: 5, maxCpus: 100, maxMemoryMB: 100_000, maxLifetimeSec: 3600 };
let seq = 0;

function row(tenantId: string, o: Partial<SandboxRow> = {}): SandboxRow {
  seq++;
  return {
    id: `sb${String(seq).padStart(4, "0")}${randomBytes(4).toString("hex")}`,
    tenantId,
    templateId: "base",
    backend: "bwrap",
    state: "running",
    metadata: { n: String(seq), "quote'\"": "x\u00e9" },
    envs: { A: "1" },
    internet: false,
    cpus: 1,
    memoryMB: 512,
    startedAt: 1_700_000_000_000 + seq,
    endAt: 1_700_000_600_000,
    autoPause: false,
    node: "n1",
    token: randomBytes(24).toString("base64url"),
    endedAt: null,
    endReason: null,
    ...o,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const [kind, make] of [
  ["sqlite", sqlite],
  ["postgres", postgres],
] as const) {
  describe(`store contract: ${kind}`, { timeout: 60_000 }, () => {
    const h = make();
    let a: Store;
    let b: Store;
    before(async () => {
      [a, b] = await h.open();
    });
    after(() => h.close());

    it("keeps tenants and keys; a revoke happens once", async () => {
      const t = await a.upsertTenant("t-keys", "keys", LIMITS);
      assert.equal(t.maxSandboxes, 5);
      const t2 = await b.upsertTenant("t-keys", "keys", { ...LIMITS, maxCpus: 2.5 });
      assert.equal(t2.maxCpus, 2.5);
      assert.equal(t2.createdAt, t.createdAt, "an upsert keeps the creation time");
      assert.equal((await a.tenantByName("keys"))?.id, "t-keys");
      assert.equal(await a.tenant("nobody"), undefined);
      const salt = randomBytes(16);
      const hash = randomBytes(32);
      await a.insertKey({ id: "k1", tenantId: "t-keys", name: "ci", salt, hash, createdAt: 5 });
      const k = await b.key("k1");
      assert.ok(k && Buffer.isBuffer(k.salt) && k.salt.equals(salt) && k.hash.equals(hash));
      assert.equal(k.revokedAt, null);
      assert.deepEqual(
        (await b.listKeys()).map((x) => [x.id, x.tenant, x.name]),
        [["k1", "keys", "ci"]],
      );
      assert.equal(await a.revokeKey("k1"), true);
      assert.equal(await b.revokeKey("k1"), false);
      assert.equal(typeof (await a.key("k1"))?.revokedAt, "number");
    });

    it("bumps the auth generation with every revoke and limits change, seen by the other handle", async () => {
      const heard: number[] = [];
      let listening: (g: number) => void = () => {};
      const ready = new Promise<number>((r) => {
        listening = r;
      });
      const watch = await b.watchAuth?.({
        onListening: (g) => listening(g),
        onChange: (g) => heard.push(g),
        onLost: () => {},
      });
      try {
        if (watch) await ready;
        const g0 = await b.authGeneration();
        await a.upsertTenant("t-gen", "gen", LIMITS);
        const g1 = await b.authGeneration();
        assert.ok(g1 > g0, "a tenant's limits bump it");
        await a.insertKey({
          id: "k-gen",
          tenantId: "t-gen",
          name: "x",
          salt: randomBytes(16),
          hash: randomBytes(32),
          createdAt: 1,
        });
        assert.equal(await b.authGeneration(), g1, "a new key changes nobody's standing");
        assert.equal(await a.revokeKey("k-gen"), true);
        const g2 = await b.authGeneration();
        assert.ok(g2 > g1, "a revoke bumps it");
        assert.equal(await a.revokeKey("k-gen"), false);
        assert.equal(await b.authGeneration(), g2, "a revoke that changes nothing does not");
        if (watch) {
          // PostgreSQL: each committed bump is announced to the listening handle.
          for (let i = 0; i < 100 && !heard.includes(g2); i++) await sleep(10);
          assert.deepEqual(heard, [g1, g2]);
        } else assert.equal(kind, "sqlite", "only SQLite (one node) has no announcements");
      } finally {
        await watch?.close();
      }
    });

    it("stores sandboxes as given and pages them newest first", async () => {
      await a.upsertTenant("t-list", "list", { ...LIMITS, maxSandboxes: 100 });
      const rows = Array.from({ length: 7 }, () => row("t-list"));
      for (const r of rows) assert.equal(await a.insertSandboxWithinQuota(r), undefined);
      const first = rows[0] as SandboxRow;
      assert.deepEqual(await b.sandbox(first.id), first);
      assert.deepEqual(await b.sandboxByToken(first.token), first);
      assert.equal(await b.sandboxByToken("no-such-token-at-all"), undefined);
      const page1 = await b.listSandboxes("t-list", ["running"], undefined, 3);
      assert.deepEqual(
        page1.map((r) => r.id),
        rows
          .slice(-3)
          .reverse()
          .map((r) => r.id),
      );
      const last = page1[2] as SandboxRow;
      const page2 = await b.listSandboxes(
        "t-list",
        ["running"],
        { startedAt: last.startedAt, id: last.id },
        10,
      );
      assert.equal(page2.length, 4);
      assert.equal(page2[0]?.id, rows[3]?.id);
      await a.setState(first.id, "paused", "requested");
      await a.setEndAt(first.id, 42);
      const p = await b.sandbox(first.id);
      assert.equal(p?.state, "paused");
      assert.equal(p?.endAt, 42);
      assert.equal(p?.endedAt, null);
      await a.setState(rows[1]?.id as string, "killed", "requested");
      const k = await b.sandbox(rows[1]?.id as string);
      assert.equal(k?.endReason, "requested");
      assert.equal(typeof k?.endedAt, "number");
      assert.deepEqual((await b.listSandboxes("t-list", ["paused", "killed"])).map((r) => r.state).sort(), [
        "killed",
        "paused",
      ]);
      assert.equal(
        (await b.sandboxesOnNode("n1", ["running"])).filter((r) => r.tenantId === "t-list").length,
        5,
      );
      assert.deepEqual(await b.usage("t-list"), { sandboxes: 5, cpus: 5, memoryMB: 2560 });
      const counts = await b.countByState();
      assert.ok((counts.running ?? 0) >= 5 && counts.killed === 1 && counts.paused === 1);
    });

    it("keeps each tenant's limits exact under concurrent creates from two nodes", async () => {
      await a.upsertTenant("t-quota", "quota", { ...LIMITS, maxSandboxes: 5 });
      const tries = Array.from({ length: 24 }, (_, i) =>
        (i % 2 ? a : b).insertSandboxWithinQuota(row("t-quota")),
      );
      const results = await Promise.all(tries);
      assert.equal(results.filter((r) => r === undefined).length, 5, JSON.stringify(results));
      for (const r of results.filter((x) => x !== undefined))
        assert.match(r as string, /maximum number of concurrent sandboxes \(5\)/);
      assert.equal((await a.usage("t-quota")).sandboxes, 5);
      // CPU and memory are counted the same way.
      await a.upsertTenant("t-cpu", "cpu", { ...LIMITS, maxCpus: 3 });
      const cpu = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 ? a : b).insertSandboxWithinQuota(row("t-cpu", { cpus: 2 })),
        ),
      );
      assert.equal(cpu.filter((r) => r === undefined).length, 1);
      assert.match(cpu.find((r) => r !== undefined) as string, /CPU limit \(2 of 3 in use\)/);
      assert.match((await a.insertSandboxWithinQuota(row("t-gone"))) as string, /tenant no longer exists/);
    });

    it("resumes a paused sandbox only within the quota", async () => {
      await a.upsertTenant("t-resume", "resume", { ...LIMITS, maxSandboxes: 1 });
      const p = row("t-resume");
      assert.equal(await a.insertSandboxWithinQuota(p), undefined);
      await a.setState(p.id, "paused", "requested");
      const other = row("t-resume");
      assert.equal(await b.insertSandboxWithinQuota(other), undefined, "a paused sandbox takes no slot");
      assert.match((await a.resumeWithinQuota(p.id, 99, "n2")) as string, /maximum number/);
      await b.setState(other.id, "killed");
      const [r1, r2] = await Promise.all([
        a.resumeWithinQuota(p.id, 99, "n2"),
        b.resumeWithinQuota(p.id, 98, "n3"),
      ]);
      assert.equal([r1, r2].filter((r) => r === undefined).length, 1, "one resume wins");
      // The loser finds it running already: not paused, or (the winner holds the one slot) over quota.
      assert.match((r1 ?? r2) as string, /not paused|maximum number/);
      const back = await a.sandbox(p.id);
      assert.equal(back?.state, "running");
      assert.ok(back?.node === "n2" || back?.node === "n3");
      assert.match((await a.resumeWithinQuota("nope", 1, "n2")) as string, /not found/);
    });

    it("keeps the audit log in order, filtered by sandbox", async () => {
      await a.audit({ tenant: "t", sandbox: "s-audit", event: "create", detail: { template: "base" } });
      await b.audit({ tenant: "t", event: "note" });
      await a.audit({ tenant: "t", sandbox: "s-audit", event: "kill" });
      const log = await b.auditLog(10, "s-audit");
      assert.deepEqual(
        log.map((r) => [r.event, r.detail]),
        [
          ["create", { template: "base" }],
          ["kill", null],
        ],
      );
      const all = await a.auditLog(2);
      assert.deepEqual(
        all.map((r) => r.event),
        ["note", "kill"],
      );
    });

    it("registers nodes, refuses a second live instance, marks silent ones dead and their sandboxes lost", async () => {
      const n = (name: string, instance: string) => ({
        name,
        instance,
        apiUrl: `http://127.0.0.1:1/${name}`,
        sandboxUrl: `http://127.0.0.1:2/${name}`,
      });
      await a.registerNode(n("alive", "i1"), 10_000);
      await a.registerNode(n("alive", "i1"), 10_000); // the same process again: fine
      await assert.rejects(b.registerNode(n("alive", "i2"), 10_000), /already running/);
      await b.registerNode(n("doomed", "d1"), 10_000);
      await a.upsertTenant("t-nodes", "nodes", { ...LIMITS, maxSandboxes: 100 });
      const running = row("t-nodes", { node: "doomed" });
      const paused = row("t-nodes", { node: "doomed" });
      const killed = row("t-nodes", { node: "doomed" });
      const elsewhere = row("t-nodes", { node: "alive" });
      for (const r of [running, paused, killed, elsewhere]) await a.insertSandboxWithinQuota(r);
      await a.setState(paused.id, "paused");
      await a.setState(killed.id, "killed");
      await sleep(400);
      assert.equal(await a.heartbeat("alive", "i1"), true);
      assert.equal(await a.heartbeat("alive", "stolen"), false);
      const [d1, d2] = await Promise.all([a.markDeadNodes(300), b.markDeadNodes(300)]);
      const dead = [...d1, ...d2];
      assert.equal(dead.length, 1, "exactly one node marks it");
      assert.equal(dead[0]?.node, "doomed");
      assert.deepEqual(dead[0]?.sandboxes.sort(), [running.id, paused.id].sort());
      for (const id of [running.id, paused.id]) {
        const r = await b.sandbox(id);
        assert.equal(r?.state, "lost");
        assert.match(r?.endReason ?? "", /node 'doomed' stopped answering/);
      }
      assert.equal((await b.sandbox(killed.id))?.state, "killed");
      assert.equal((await b.sandbox(elsewhere.id))?.state, "running");
      assert.deepEqual(
        (await a.auditLog(20))
          .filter((e) => e.event === "lost")
          .map((e) => e.sandbox)
          .sort(),
        [running.id, paused.id].sort(),
      );
      const nodes = await b.nodes();
      assert.deepEqual(
        nodes.map((x) => [x.name, x.state]),
        [
          ["alive", "up"],
          ["doomed", "dead"],
        ],
      );
      assert.equal(nodes[0]?.sandboxUrl, "http://127.0.0.1:2/alive");
      // A dead name may be taken again; a silent one too, once it is stale.
      await b.registerNode(n("doomed", "d2"), 10_000);
      await sleep(300);
      await b.registerNode(n("alive", "i3"), 200);
      assert.equal(await a.heartbeat("alive", "i1"), false, "the old instance learns it was superseded");
    });

    it("a node that leaves cleanly pauses its running sandboxes", async () => {
      await a.registerNode(
        { name: "leaver", instance: "l1", apiUrl: "http://x:1", sandboxUrl: "http://x:2" },
        1000,
      );
      await a.upsertTenant("t-leave", "leave", LIMITS);
      const r = row("t-leave", { node: "leaver" });
      await a.insertSandboxWithinQuota(r);
      await b.leaveNode("leaver", "other-instance");
      assert.equal((await a.sandbox(r.id))?.state, "running", "only its own instance can leave");
      await b.leaveNode("leaver", "l1");
      assert.equal((await a.sandbox(r.id))?.state, "paused");
      assert.equal((await a.nodes()).find((x) => x.name === "leaver")?.state, "left");
      await sleep(50);
      const dead = await a.markDeadNodes(10);
      assert.equal(
        dead.find((d) => d.node === "leaver"),
        undefined,
        "a node that left is not dead",
      );
    });

    it("tells which nodes that are up have not confirmed an auth generation", async () => {
      if (!a.authLaggards || !b.ackAuth) {
        assert.equal(kind, "sqlite");
        return;
      }
      const g = await a.authGeneration();
      await a.registerNode(
        { name: "ack-1", instance: "i1", apiUrl: "http://x", sandboxUrl: "http://y" },
        5000,
      );
      await a.registerNode(
        { name: "ack-2", instance: "i2", apiUrl: "http://x", sandboxUrl: "http://y" },
        5000,
      );
      assert.deepEqual(await a.authLaggards(g), [], "a node registers at the current generation");
      await a.upsertTenant("t-ack", "ack", LIMITS);
      const g2 = await a.authGeneration();
      assert.deepEqual(
        (await a.authLaggards(g2)).filter((n) => n.startsWith("ack-")),
        ["ack-1", "ack-2"],
      );
      await b.ackAuth("ack-1", g2);
      await b.ackAuth("ack-2", g);
      assert.deepEqual(
        (await a.authLaggards(g2)).filter((n) => n.startsWith("ack-")),
        ["ack-2"],
      );
      await a.leaveNode("ack-2", "i2");
      assert.deepEqual(
        (await a.authLaggards(g2)).filter((n) => n.startsWith("ack-")),
        [],
        "only nodes that are up",
      );
      await a.leaveNode("ack-1", "i1");
    });
  });
}
