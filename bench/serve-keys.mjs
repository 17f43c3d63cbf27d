#!/usr/bin/env node
// What an API key check costs on a request of `hands serve`, per store (SQLite; PostgreSQL — the
// private test server of scripts/postgres.sh, or --database URL): Keys.verify on a cached key,
// µs per call and store reads per call; then the management API's round trip for a request
// whose work after the key check is one row read (GET /sandboxes/<unknown id>, a 404), p50/p99.
// `--before DIR` (a packages/serve/dist folder of an older build) measures that build's Keys and
// server beside this one, interleaved, on the same store.
// `node bench/serve-keys.mjs [--calls 20000] [--requests 2000] [--before DIR] [--database URL] [--json]`
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import pg from "pg";

const argv = process.argv.slice(2);
const opt = (name, d) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : d;
};
const CALLS = Number(opt("calls", 20000));
const REQUESTS = Number(opt("requests", 2000));
const ROUNDS = 5;
const BEFORE = opt("before");
const JSON_OUT = argv.includes("--json");
const PG_URL = opt(
  "database",
  process.env.HANDS_TEST_DATABASE_URL ?? "postgres://hands@127.0.0.1:55432/postgres",
);

const here = new URL("../packages/serve/dist/", import.meta.url);
const load = async (dir) => ({
  Keys: (await import(new URL("keys.js", dir).href)).Keys,
  startServe: (await import(new URL("server.js", dir).href)).startServe,
});
const builds = { now: await load(here) };
if (BEFORE) builds.before = await load(pathToFileURL(`${resolve(BEFORE)}/`));
const { SqliteStore } = await import(new URL("store-sqlite.js", here).href);
const { PostgresStore } = await import(new URL("store-postgres.js", here).href);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** Counts the store reads a key check can make. */
function counting(store) {
  const counts = { key: 0, tenant: 0, authGeneration: 0 };
  for (const m of Object.keys(counts)) {
    const f = store[m]?.bind(store);
    if (!f) continue;
    store[m] = (...a) => {
      counts[m]++;
      return f(...a);
    };
  }
  return counts;
}

async function freshDatabase() {
  const name = `hs_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Keys.verify of a cached key: µs per call (median of rounds) and store reads per call. */
async function verifyCost(kind) {
  const out = {};
  const dir = mkdtempSync(join(tmpdir(), "hs-bench-keys-"));
  const db = kind === "postgres" ? await freshDatabase() : undefined;
  const open = () => (db ? PostgresStore.connect(db.url) : new SqliteStore(join(dir, "serve.db")));
  try {
    const setup = await open();
    const { key } = await new builds.now.Keys(setup).create("bench");
    await setup.close();
    const runs = {};
    for (const [name, b] of Object.entries(builds)) {
      const store = await open();
      const keys = new b.Keys(store, { node: "bench" });
      await keys.start?.();
      if (!(await keys.verify(key))) throw new Error(`${name}: the key does not verify`);
      const counts = counting(store);
      runs[name] = { store, keys, counts, times: [] };
    }
    for (let r = 0; r < ROUNDS; r++)
      for (const run of Object.values(runs)) {
        const t0 = performance.now();
        for (let i = 0; i < CALLS / ROUNDS; i++) await run.keys.verify(key);
        run.times.push(((performance.now() - t0) * 1000) / (CALLS / ROUNDS));
      }
    for (const [name, run] of Object.entries(runs)) {
      const reads = Object.fromEntries(Object.entries(run.counts).map(([k, v]) => [k, v / CALLS]));
      out[name] = { usPerCall: pct(run.times, 50), readsPerCall: reads };
      await run.keys.close?.();
      await run.store.close();
    }
  } finally {
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** A management API request through a real node: p50/p99 ms, interleaved between builds. */
async function requestCost(kind) {
  const out = {};
  const nodes = {};
  const cleanup = [];
  try {
    for (const [name, b] of Object.entries(builds)) {
      const dataDir = mkdtempSync(join(tmpdir(), "hs-bench-keys-"));
      cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
      const db = kind === "postgres" ? await freshDatabase() : undefined;
      if (db) cleanup.push(() => db.drop());
      const s = await b.startServe({
        dataDir,
        warm: {},
        ...(db ? { database: db.url, node: `bench-${name}` } : {}),
      });
      cleanup.unshift(() => s.close());
      const { key } = await s.keys.create("bench");
      nodes[name] = { s, key, times: [] };
    }
    for (let r = 0; r < ROUNDS; r++)
      for (const n of Object.values(nodes))
        for (let i = 0; i < REQUESTS / ROUNDS; i++) {
          const t0 = performance.now();
          const res = await fetch(`${n.s.apiUrl}/sandboxes/nosuchsandbox0000000`, {
            headers: { "x-api-key": n.key },
          });
          await res.arrayBuffer();
          if (res.status !== 404) throw new Error(`unexpected ${res.status}`);
          n.times.push(performance.now() - t0);
        }
    for (const [name, n] of Object.entries(nodes))
      out[name] = { p50ms: pct(n.times, 50), p99ms: pct(n.times, 99) };
  } finally {
    for (const f of cleanup) await f();
  }
  return out;
}

const result = {};
for (const kind of ["sqlite", "postgres"]) {
  result[kind] = { verify: await verifyCost(kind), request: await requestCost(kind) };
}
if (JSON_OUT) console.log(JSON.stringify(result, null, 2));
else
  for (const [kind, r] of Object.entries(result)) {
    for (const [name, v] of Object.entries(r.verify))
      console.log(
        `${kind} ${name}: verify of a cached key ${v.usPerCall.toFixed(2)} µs; store reads per call ${JSON.stringify(v.readsPerCall)}`,
      );
    for (const [name, v] of Object.entries(r.request))
      console.log(
        `${kind} ${name}: GET /sandboxes/<unknown> p50 ${v.p50ms.toFixed(3)} ms, p99 ${v.p99ms.toFixed(3)} ms`,
      );
  }
process.exit(0);
