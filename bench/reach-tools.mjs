#!/usr/bin/env node
// web_fetch and query_database, measured (issue 26 parts 1-2):
// - fetch overhead: web_fetch of a local HTML page and a JSON document vs a bare node fetch()
//   of the same URL (p50/p95 over --runs);
// - the caps holding: a 5 GB body and a gzip bomb (1 GiB from ~1 MB): bytes read, time;
// - query latency on 1 M rows, SQLite and PostgreSQL (the suite's, 127.0.0.1:55432): a count,
//   an indexed lookup, a capped full scan (100 rows of 1 M).
// Usage: npm run bench:reach -- [--runs N]   (build first: npm run build)
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import Database from "better-sqlite3";
import pg from "pg";
import { createDatabaseTools } from "../packages/agent/dist/tools/database/query-database.js";
import { createWebFetchTool } from "../packages/agent/dist/tools/web/web-fetch.js";

const runs = Number(process.argv[process.argv.indexOf("--runs") + 1]) || 30;
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x) => `${x.toFixed(1)} ms`;
async function time(fn, n = runs) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = await fn();
    if (r?.isError) throw new Error(r.output);
    out.push(performance.now() - t);
  }
  return out;
}

const ctx = {
  workspace: mkdtempSync(join(tmpdir(), "bench-reach-")),
  readRoots: [],
  signal: new AbortController().signal,
};
ctx.sandbox = async () => {
  throw new Error("no sandbox");
};
console.log(`load: ${readFileSync("/proc/loadavg", "utf8").trim()}  runs: ${runs}`);

// --- web_fetch ---
const page = `<html><head><title>Bench</title></head><body><article><h1>Title</h1>${"<p>A paragraph of text with a <a href='/x'>link</a> in it, long enough to be an article.</p>".repeat(40)}</article></body></html>`;
const json = JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i}` })) });
const member = gzipSync(Buffer.alloc(10 * 1024 ** 2, "z"), { level: 9 });
let hugeWritten = 0;
const server = createServer((req, res) => {
  if (req.url === "/page")
    return res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
  if (req.url === "/json") return res.writeHead(200, { "content-type": "application/json" }).end(json);
  if (req.url === "/huge") {
    const total = 5 * 1024 ** 3;
    const chunk = Buffer.alloc(64 * 1024, "a");
    hugeWritten = 0;
    res.writeHead(200, { "content-type": "text/plain", "content-length": String(total) });
    const pump = () => {
      while (hugeWritten < total) {
        hugeWritten += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", pump);
      }
      res.end();
    };
    return pump();
  }
  if (req.url === "/bomb") {
    res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
    let n = 0;
    const pump = () => {
      while (n < 100) {
        n++;
        if (!res.write(member)) return void res.once("drain", pump);
      }
      res.end();
    };
    return pump();
  }
  res.writeHead(404).end();
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${server.address().port}`;
const web = createWebFetchTool({ allow: [`127.0.0.1:${server.address().port}`] });
for (const path of ["/page", "/json"]) {
  const bare = await time(async () => (await fetch(base + path)).text());
  const tool = await time(() => web.execute({ url: base + path }, ctx));
  console.log(
    `web_fetch ${path}: p50 ${ms(pct(tool, 50))} p95 ${ms(pct(tool, 95))} | bare fetch p50 ${ms(pct(bare, 50))} p95 ${ms(pct(bare, 95))}`,
  );
}
for (const [path, cap] of [
  ["/huge", 5 * 1024 * 1024],
  ["/bomb", 5 * 1024 * 1024],
]) {
  const t = performance.now();
  const r = await web.execute({ url: base + path }, ctx);
  const took = performance.now() - t;
  await new Promise((res) => setTimeout(res, 100));
  console.log(
    `cap ${path}: kept ${r.data.bytes} bytes (cap ${cap}), wire ${r.data.wireBytes} bytes, truncated ${r.data.truncated}, ${ms(took)}${path === "/huge" ? `, server wrote ${hugeWritten} of 5368709120` : ""}`,
  );
}
server.closeAllConnections();
server.close();

// --- query_database on 1 M rows ---
const ROWS = 1_000_000;
const file = join(ctx.workspace, "bench.db");
{
  const t = performance.now();
  const db = new Database(file);
  db.exec(
    `CREATE TABLE items (id INTEGER PRIMARY KEY, sku TEXT, price REAL);
     WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${ROWS})
     INSERT INTO items SELECT i, 'sku-' || i, i * 0.01 FROM c;
     CREATE INDEX items_sku ON items (sku);`,
  );
  db.close();
  console.log(`sqlite: ${ROWS} rows loaded in ${ms(performance.now() - t)}`);
}
const admin = new pg.Client(
  process.env.HANDS_TEST_DATABASE_URL ?? "postgres://hands@127.0.0.1:55432/postgres",
);
await admin.connect();
const name = `bench_${randomBytes(4).toString("hex")}`;
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(process.env.HANDS_TEST_DATABASE_URL ?? "postgres://hands@127.0.0.1:55432/postgres");
url.pathname = `/${name}`;
{
  const t = performance.now();
  const c = new pg.Client(url.href);
  await c.connect();
  await c.query(
    `CREATE TABLE items (id int PRIMARY KEY, sku text, price numeric);
     INSERT INTO items SELECT i, 'sku-' || i, i * 0.01 FROM generate_series(1, ${ROWS}) i;
     CREATE INDEX items_sku ON items (sku); ANALYZE items;`,
  );
  await c.end();
  console.log(`postgres: ${ROWS} rows loaded in ${ms(performance.now() - t)}`);
}
const tools = createDatabaseTools({
  databases: [
    { name: "lite", kind: "sqlite", path: "bench.db", writes: false },
    { name: "pg", kind: "postgres", url: url.href, writes: false },
  ],
});
const queries = {
  count: "SELECT count(*) FROM items",
  "indexed lookup": "SELECT * FROM items WHERE sku = 'sku-777777'",
  "capped full scan": "SELECT * FROM items",
};
try {
  for (const db of ["lite", "pg"])
    for (const [label, sql] of Object.entries(queries)) {
      await tools.query.execute({ database: db, sql }, ctx); // warm (the SQLite process, the cache)
      const n = label === "count" ? Math.min(runs, 10) : runs;
      const xs = await time(() => tools.query.execute({ database: db, sql }, ctx), n);
      console.log(
        `${db === "lite" ? "sqlite" : "postgres"} ${label}: p50 ${ms(pct(xs, 50))} p95 ${ms(pct(xs, 95))} (n=${n})`,
      );
    }
} finally {
  tools.close();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
  rmSync(ctx.workspace, { recursive: true, force: true });
}
console.log(`load after: ${readFileSync("/proc/loadavg", "utf8").trim()}`);
