// Verified API keys are cached with their tenant's limits; a revoked key or a lowered limit must
// still take effect at once — on one node (SQLite; the CLI writes the same file from outside the
// service), and on every node sharing PostgreSQL (revoke on node A, refused on node B). And the
// cache must keep the database off a cached key's path: counted, not assumed.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import pg from "pg";
import { runServeCommand } from "../command.js";
import { type RunningServe, startServe } from "../server.js";
import type { Store } from "../store.js";
import { AUTH_LISTENER } from "../store-postgres.js";
import { raw, startTestServe, type TestServe, testDatabase } from "../test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

/** Runs `hands serve …` as the CLI does (a store of its own), and returns its output. */
async function cli(args: string[]): Promise<string> {
  let out = "";
  const code = await runServeCommand(args, (s) => {
    out += s;
  });
  assert.equal(code, 0, out);
  return out;
}

const list = (apiUrl: string, key: string) =>
  raw(`${apiUrl}/v2/sandboxes`, { headers: { "x-api-key": key } });

function create(apiUrl: string, key: string, body: Record<string, unknown>) {
  return raw(`${apiUrl}/v2/sandboxes`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function kill(apiUrl: string, key: string, id: string): Promise<void> {
  const r = await raw(`${apiUrl}/sandboxes/${id}`, { method: "DELETE", headers: { "x-api-key": key } });
  assert.equal(r.status, 204, r.text);
}

/** Counts the store reads a key check can make. */
function countKeyReads(store: Store): { counts: Record<string, number>; restore(): void } {
  const counts: Record<string, number> = { key: 0, tenant: 0, authGeneration: 0 };
  const s = store as unknown as Record<string, (...a: unknown[]) => unknown>;
  const originals = Object.fromEntries(Object.keys(counts).map((m) => [m, s[m]]));
  for (const m of Object.keys(counts)) {
    const f = originals[m] as (...a: unknown[]) => unknown;
    s[m] = (...a: unknown[]) => {
      counts[m] = (counts[m] as number) + 1;
      return f.apply(store, a);
    };
  }
  return {
    counts,
    restore: () => {
      for (const m of Object.keys(counts)) s[m] = originals[m] as (...a: unknown[]) => unknown;
    },
  };
}

describe("key cache, one node (SQLite)", { skip, timeout: 120_000 }, () => {
  let s: TestServe;
  before(async () => {
    s = await startTestServe();
  });
  after(async () => {
    await s?.stop();
  });

  it("refuses a key revoked by the CLI on the very next request", async () => {
    const { key, id } = await s.keys.create("tenant-r");
    for (let i = 0; i < 3; i++) assert.equal((await list(s.apiUrl, key)).status, 200);
    assert.match(await cli(["keys", "revoke", id, "--data", s.dataDir]), new RegExp(`revoked ${id}`));
    const r = await list(s.apiUrl, key);
    assert.equal(r.status, 401, r.text);
  });

  it("applies a lowered lifetime and sandbox limit at once", async () => {
    const { key } = await s.keys.create("tenant-q", "default", { maxLifetimeSec: 3600, maxSandboxes: 5 });
    const first = await create(s.apiUrl, key, { timeout: 600 });
    assert.equal(first.status, 201, first.text);
    const id = (first.json() as { sandboxID: string }).sandboxID;
    // Lowered the way an operator can: a new key with new limits, or `tenants set`.
    await cli(["keys", "create", "tenant-q", "--max-lifetime", "60", "--data", s.dataDir]);
    const long = await create(s.apiUrl, key, { timeout: 600 });
    assert.equal(long.status, 400, long.text);
    assert.match(long.text, /greater than 60 seconds/);
    assert.match(
      await cli([
        "tenants",
        "set",
        "tenant-q",
        "--max-sandboxes",
        "1",
        "--max-lifetime",
        "30",
        "--data",
        s.dataDir,
      ]),
      /tenant tenant-q: 1 sandboxes/,
    );
    const over = await create(s.apiUrl, key, { timeout: 10 });
    assert.equal(over.status, 429, over.text);
    const t = await raw(`${s.apiUrl}/sandboxes/${id}/timeout`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ timeout: 45 }),
    });
    assert.equal(t.status, 400, `a running sandbox's new timeout obeys the new lifetime: ${t.text}`);
    await kill(s.apiUrl, key, id);
  });

  it("reads one local row per request for a cached key: no key or tenant read, no scrypt", async () => {
    const { key } = await s.keys.create("tenant-hot");
    assert.equal((await list(s.apiUrl, key)).status, 200);
    const c = countKeyReads(s.store);
    try {
      for (let i = 0; i < 20; i++) assert.equal((await list(s.apiUrl, key)).status, 200);
    } finally {
      c.restore();
    }
    assert.deepEqual(c.counts, { key: 0, tenant: 0, authGeneration: 20 });
  });
});

describe("key cache, two nodes sharing PostgreSQL", { skip, timeout: 120_000 }, () => {
  let db: Awaited<ReturnType<typeof testDatabase>>;
  let a: RunningServe;
  let b: RunningServe;
  const dirs: string[] = [];
  before(async () => {
    db = await testDatabase();
    const node = async (name: string) => {
      const dataDir = mkdtempSync(join(tmpdir(), `hs-kc-${name}-`));
      dirs.push(dataDir);
      return startServe({ dataDir, database: db.url, node: name, warm: {}, reapIntervalMs: 200 });
    };
    [a, b] = await Promise.all([node("a"), node("b")]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await db?.drop();
  });

  it("refuses on node B, at once, a key revoked through node A's database by the CLI", async () => {
    const { key, id } = await a.keys.create("tenant-r");
    for (const n of [a, b]) for (let i = 0; i < 3; i++) assert.equal((await list(n.apiUrl, key)).status, 200);
    const out = await cli(["keys", "revoke", id, "--database", db.url]);
    assert.match(out, new RegExp(`revoked ${id}`));
    assert.doesNotMatch(out, /did not confirm/);
    assert.equal((await list(b.apiUrl, key)).status, 401);
    assert.equal((await list(a.apiUrl, key)).status, 401);
  });

  it("refuses on node B a key revoked by node A's own Keys", async () => {
    const { key, id } = await a.keys.create("tenant-r2");
    assert.equal((await list(b.apiUrl, key)).status, 200);
    assert.equal(await a.keys.revoke(id), true);
    assert.deepEqual(a.keys.unconfirmed, []);
    assert.equal((await list(b.apiUrl, key)).status, 401);
  });

  it("applies a lowered lifetime on node B at once", async () => {
    const { key } = await a.keys.create("tenant-q", "default", { maxLifetimeSec: 3600 });
    const first = await create(b.apiUrl, key, { timeout: 600 });
    assert.equal(first.status, 201, first.text);
    await kill(b.apiUrl, key, (first.json() as { sandboxID: string }).sandboxID);
    await cli(["keys", "create", "tenant-q", "--max-lifetime", "60", "--database", db.url]);
    const long = await create(b.apiUrl, key, { timeout: 600 });
    assert.equal(long.status, 400, long.text);
    assert.match(long.text, /greater than 60 seconds/);
    await cli(["tenants", "set", "tenant-q", "--max-lifetime", "30", "--database", db.url]);
    const longer = await create(b.apiUrl, key, { timeout: 45 });
    assert.equal(longer.status, 400, longer.text);
    assert.match(longer.text, /greater than 30 seconds/);
  });

  it("serves a cached key without a database read, and reads every time while it cannot hear changes", async () => {
    const { key, id } = await a.keys.create("tenant-hot");
    assert.equal((await list(b.apiUrl, key)).status, 200);
    const c = countKeyReads(b.store);
    try {
      const started = Date.now();
      for (let i = 0; i < 20; i++) assert.equal((await list(b.apiUrl, key)).status, 200);
      const { authGeneration: rechecks, ...perRequest } = c.counts;
      assert.deepEqual(perRequest, { key: 0, tenant: 0 }, "a cached key costs no query");
      // The only reads: the node's own recheck of the generation, every 2 s off the request path.
      assert.ok(
        (rechecks as number) <= 1 + (Date.now() - started) / 2000,
        `${rechecks} generation reads in ${Date.now() - started} ms`,
      );
      // Cut every node's listening connection: until they listen again, each check reads the store.
      const admin = new pg.Client({ connectionString: db.url });
      await admin.connect();
      try {
        const cut = await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
          [AUTH_LISTENER],
        );
        assert.equal(cut.rowCount, 2, "one listener per node");
      } finally {
        await admin.end();
      }
      await new Promise((r) => setTimeout(r, 100));
      const before = c.counts.key as number;
      // A revoke while B does not hear it: B reads the key and refuses it anyway.
      const other = await a.keys.create("tenant-hot");
      assert.equal((await list(b.apiUrl, other.key)).status, 200);
      assert.equal(await a.keys.revoke(other.id), true);
      assert.equal((await list(b.apiUrl, other.key)).status, 401);
      assert.ok((c.counts.key as number) > before, "B read the key from the database");
      // Listening again (within a few seconds), B caches again.
      const end = Date.now() + 10_000;
      for (;;) {
        await list(b.apiUrl, key);
        const k = c.counts.key as number;
        await list(b.apiUrl, key);
        if (c.counts.key === k) break;
        assert.ok(Date.now() < end, "B listens again");
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(await a.keys.revoke(id), true);
      assert.deepEqual(a.keys.unconfirmed, [], "both nodes confirm again");
      assert.equal((await list(b.apiUrl, key)).status, 401);
    } finally {
      c.restore();
    }
  });
});
