// query_database and write_database on real SQLite files and the suite's real PostgreSQL
// (127.0.0.1:55432, scripts/postgres.sh): capped tables, schema mode, writes refused by the
// database itself in read-only mode, queries that would return ten million rows, time limits,
// and a workspace that tries to lead the SQLite open elsewhere.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { makeTestContext, type TestContext } from "../test-context.js";
import type { ToolResult } from "../types.js";
import { type DatabaseEntry, parseDatabases } from "./config.js";
import { findSqliteFiles } from "./discover.js";
import { createDatabaseTools, type DatabaseArgs } from "./query-database.js";
import { runSqlite, SqliteRefusal } from "./sqlite-run.js";

function ok(r: ToolResult): string {
  assert.equal(r.isError, undefined, r.output);
  return r.output;
}
function failed(r: ToolResult, pattern: RegExp): void {
  assert.equal(r.isError, true, r.output);
  assert.match(r.output, /^ERROR: /);
  assert.match(r.output, pattern);
}

describe("query_database on SQLite", () => {
  let t: TestContext;
  let outside: TestContext;
  let tools: ReturnType<typeof createDatabaseTools>;
  const q = (args: DatabaseArgs) => tools.query.execute(args, t.ctx);

  before(() => {
    t = makeTestContext();
    outside = makeTestContext();
    const db = new Database(join(t.workspace, "app.db"));
    db.exec(`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, note BLOB);
      CREATE UNIQUE INDEX users_email ON users(email);
      CREATE TABLE n (x INTEGER);
      CREATE VIEW named AS SELECT name FROM users;`);
    const ins = db.prepare("INSERT INTO users (name, email, note) VALUES (?, ?, ?)");
    for (let i = 1; i <= 250; i++)
      ins.run(`user ${i}`, `u${i}@example.com`, i === 1 ? Buffer.alloc(9) : null);
    db.exec(
      "INSERT INTO n SELECT value FROM json_each('[' || (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3200) SELECT group_concat(i) FROM c) || ']')",
    );
    db.close();
    const secret = new Database(join(outside.workspace, "secret.db"));
    secret.exec("CREATE TABLE s (pw TEXT); INSERT INTO s VALUES ('hunter2')");
    secret.close();
    writeFileSync(join(t.workspace, "notes.db"), "just text, not a database\n".repeat(3));
    const writable: DatabaseEntry[] = parseDatabases({
      scratch: { path: "scratch.db", writes: true },
      app: "app.db",
    });
    new Database(join(t.workspace, "scratch.db")).exec("CREATE TABLE log (msg TEXT)");
    tools = createDatabaseTools({ databases: writable });
  });
  after(async () => {
    tools.close();
    await t.cleanup();
    await outside.cleanup();
  });

  it("shows rows as a capped table with the count, and says when more follow", async () => {
    const r = await q({
      database: "app.db",
      sql: "SELECT id, name, note FROM users ORDER BY id",
      max_rows: 3,
    });
    const out = ok(r);
    assert.match(
      out,
      /^app\.db: SQLite app\.db, read-only\n\| id \| name \| note \|\n\| --- \| --- \| --- \|\n\| 1 \| user 1 \| <blob 9 bytes> \|\n\| 2 \| user 2 \| NULL \|/,
    );
    assert.match(out, /3 rows shown; more rows follow \(stopped at the cap of 3/);
    assert.equal(r.data?.rows, 3);
    assert.equal(r.data?.more, true);
    assert.match(
      ok(await q({ database: "app", sql: "SELECT count(*) AS n FROM users" })),
      /\| 250 \|\n\(1 row;/,
    );
  });

  it("schema mode lists tables and views with columns and indexes", async () => {
    const out = ok(await q({ database: "app.db", mode: "schema" }));
    assert.match(
      out,
      /\| users \| table \| id INTEGER PK, name TEXT NOT NULL, email TEXT, note BLOB \| users_email UNIQUE \(email\) \|/,
    );
    assert.match(out, /\| named \| view \| name TEXT/);
    assert.match(
      ok(await q({ database: "app.db", mode: "schema", table: "n" })),
      /^app\.db[^\n]*\n[^\n]*\n[^\n]*\n\| n \| table \| x INTEGER \| - \|\n\(1 row/,
    );
    failed(await q({ database: "app.db", mode: "schema", table: "nope" }), /no table or view named nope/);
  });

  it("refuses writes in read-only mode (the database refuses them) and leaves the file as it was", async () => {
    const before = readFileSync(join(t.workspace, "app.db"));
    for (const sql of [
      "INSERT INTO users (name) VALUES ('mallory')",
      "DELETE FROM users",
      "DROP TABLE users",
      "UPDATE users SET name = 'x' RETURNING id",
      "CREATE TABLE t2 (a)",
    ])
      failed(await q({ database: "app.db", sql }), /readonly database|query_only|read-only/);
    // Turning query_only off is one statement; the file is still opened read-only.
    ok(await q({ database: "app.db", sql: "PRAGMA query_only = OFF" }));
    failed(await q({ database: "app.db", sql: "DELETE FROM users" }), /readonly database/);
    failed(await q({ database: "app.db", sql: "SELECT 1; DELETE FROM users" }), /more than one statement/);
    assert.deepEqual(readFileSync(join(t.workspace, "app.db")), before);
  });

  it("refuses statements that reach other files: ATTACH and VACUUM INTO", async () => {
    failed(
      await q({ database: "app.db", sql: `ATTACH '${join(outside.workspace, "secret.db")}' AS s` }),
      /ATTACH\/DETACH would open files outside/,
    );
    const copy = join(outside.workspace, "copy.db");
    failed(await q({ database: "app.db", sql: `VACUUM INTO '${copy}'` }), /VACUUM INTO writes another file/);
    assert.equal(existsSync(copy), false);
  });

  it("opens only regular SQLite files inside the workspace", async () => {
    symlinkSync(join(outside.workspace, "secret.db"), join(t.workspace, "link.db"));
    failed(await q({ database: "link.db", sql: "SELECT * FROM s" }), /outside the workspace/);
    failed(
      await q({ database: join(outside.workspace, "secret.db"), sql: "SELECT 1" }),
      /outside the workspace/,
    );
    failed(await q({ database: "../secret.db", sql: "SELECT 1" }), /outside the workspace/);
    // A sibling folder whose name starts with the workspace's is not inside it.
    mkdirSync(`${t.workspace}_evil`, { recursive: true });
    new Database(join(`${t.workspace}_evil`, "x.db")).close();
    failed(await q({ database: `${t.workspace}_evil/x.db`, sql: "SELECT 1" }), /outside the workspace/);
    execFileSync("mkfifo", [join(t.workspace, "fifo.db")]);
    failed(await q({ database: "fifo.db", sql: "SELECT 1" }), /not a regular file/);
    failed(await q({ database: "notes.db", sql: "SELECT 1" }), /not an SQLite database/);
    failed(await q({ database: "missing.db", sql: "SELECT 1" }), /no such file/);
    // A companion file that is a symlink could send SQLite's -shm writes anywhere.
    new Database(join(t.workspace, "wal.db")).exec("CREATE TABLE w (a)");
    symlinkSync(join(outside.workspace, "target"), join(t.workspace, "wal.db-shm"));
    failed(await q({ database: "wal.db", sql: "SELECT 1" }), /wal\.db-shm is not a regular file/);
    // A hard link is another name of the same file: one in the workspace could name a
    // database anywhere on the machine (same filesystem). Refused, and not offered.
    linkSync(join(outside.workspace, "secret.db"), join(t.workspace, "hard.db"));
    const r = await q({ database: "hard.db", sql: "SELECT * FROM s" });
    failed(r, /hard\.db has 2 hard links \(another name of it may be outside the workspace\)/);
    assert.doesNotMatch(r.output, /hunter2/);
    failed(await q({ database: "hard.db", mode: "schema" } as DatabaseArgs), /has 2 hard links/);
    // A hard-linked companion would get SQLite's writes to a file outside.
    new Database(join(t.workspace, "wal2.db")).exec("CREATE TABLE w (a)");
    writeFileSync(join(outside.workspace, "victim"), "keep me");
    linkSync(join(outside.workspace, "victim"), join(t.workspace, "wal2.db-journal"));
    failed(await q({ database: "wal2.db", sql: "SELECT 1" }), /wal2\.db-journal has 2 hard links/);
    assert.equal(readFileSync(join(outside.workspace, "victim"), "utf8"), "keep me");
    assert.deepEqual(findSqliteFiles(t.workspace).sort(), ["app.db", "scratch.db", "wal.db", "wal2.db"]);
  });

  it("the file SQLite opens must be the one that was checked (a swap after the check is refused)", () => {
    // The identity the check saw is another file's (as after a swap between check and open).
    const other = statSync(join(outside.workspace, "secret.db"));
    assert.throws(
      () =>
        runSqlite({
          op: "query",
          path: join(t.workspace, "app.db"),
          identity: { dev: other.dev, ino: other.ino },
          sql: "SELECT 1",
          maxRows: 1,
          write: false,
        }),
      (e: Error) => e instanceof SqliteRefusal && /changed after it was checked/.test(e.message),
    );
    const own = statSync(join(t.workspace, "app.db"));
    const table = runSqlite({
      op: "query",
      path: join(t.workspace, "app.db"),
      identity: { dev: own.dev, ino: own.ino },
      sql: "SELECT count(*) FROM users",
      maxRows: 1,
      write: false,
    });
    assert.deepEqual(table.rows, [["250"]]);
  });

  it("a query that would return ten million rows reads the cap and stops", async () => {
    const start = Date.now();
    const r = await q({ database: "app.db", sql: "SELECT a.x, b.x FROM n a, n b" });
    assert.match(ok(r), /100 rows shown; more rows follow/);
    assert.equal(r.data?.rows, 100);
    assert.ok(Date.now() - start < 3000, `took ${Date.now() - start} ms`);
  });

  it("a statement past its time limit is stopped, and the next one runs", async () => {
    const start = Date.now();
    failed(
      await q({
        database: "app.db",
        sql: "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT count(*) FROM c",
        timeout: 1,
      }),
      /ran past its time limit of 1 s/,
    );
    assert.ok(Date.now() - start < 3000);
    ok(await q({ database: "app.db", sql: "SELECT 1" }));
  });

  it("bad SQL, a missing statement and a URL in the call are errors", async () => {
    failed(await q({ database: "app.db", sql: "SELEC oops" }), /syntax error/);
    failed(await q({ database: "app.db" }), /give the SQL statement/);
    failed(
      await q({ database: "postgres://evil@10.0.0.1/db", sql: "SELECT 1" }),
      /only databases named in the settings/,
    );
  });

  it("write_database writes only where the settings allow it", async () => {
    const w = (args: DatabaseArgs) => tools.write.execute(args, t.ctx);
    assert.match(
      ok(await w({ database: "scratch", sql: "INSERT INTO log VALUES ('hi')" })),
      /OK: 1 row\(s\) changed/,
    );
    assert.match(ok(await q({ database: "scratch", sql: "SELECT msg FROM log" })), /\| hi \|/);
    failed(await w({ database: "app", sql: "DELETE FROM users" }), /app does not allow writes/);
    failed(await w({ database: "app.db", sql: "DELETE FROM users" }), /does not allow writes/);
  });
});

describe("databases in the settings", () => {
  it("parses names, URLs and paths, and says what is wrong", () => {
    assert.deepEqual(
      parseDatabases({ a: "postgres://u@h/db", b: "x.db", c: { path: "y.db", writes: true } }),
      [
        { name: "a", kind: "postgres", url: "postgres://u@h/db", writes: false },
        { name: "b", kind: "sqlite", path: "x.db", writes: false },
        { name: "c", kind: "sqlite", path: "y.db", writes: true },
      ],
    );
    assert.throws(() => parseDatabases([]), /must be a JSON object/);
    assert.throws(() => parseDatabases({ "bad name": "x.db" }), /a database name is/);
    assert.throws(() => parseDatabases({ a: { url: "mysql://x" } }), /postgres:\/\//);
    assert.throws(
      () => parseDatabases({ a: { path: "x.db", writes: "yes" } }),
      /writes must be true or false/,
    );
    assert.throws(() => parseDatabases({ a: { url: "postgres://h/d", path: "x" } }), /either "url"/);
    assert.throws(() => parseDatabases({ a: { path: "x", host: 1 } }), /unknown key host/);
  });
});

const ADMIN_URL = process.env.HANDS_TEST_DATABASE_URL ?? "postgres://hands@127.0.0.1:55432/postgres";

/** A fresh database on the suite's PostgreSQL (started by scripts/postgres.sh if it is not running). */
async function testDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = async () => {
    const c = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
    await c.connect();
    return c;
  };
  let c: pg.Client;
  try {
    c = await admin();
  } catch {
    const script = fileURLToPath(new URL("../../../../../scripts/postgres.sh", import.meta.url));
    spawnSync("bash", [script], { stdio: "ignore" });
    c = await admin();
  }
  const name = `hq_${randomBytes(5).toString("hex")}`;
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async drop() {
      const d = await admin();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
    },
  };
}

describe("query_database on PostgreSQL", () => {
  let t: TestContext;
  let db: { url: string; drop(): Promise<void> };
  let tools: ReturnType<typeof createDatabaseTools>;
  const q = (args: DatabaseArgs) => tools.query.execute(args, t.ctx);
  const count = async () => {
    const c = new pg.Client(db.url);
    await c.connect();
    const r = await c.query("SELECT count(*)::int AS n FROM items");
    await c.end();
    return r.rows[0].n as number;
  };

  before(async () => {
    t = makeTestContext();
    db = await testDatabase();
    const c = new pg.Client(db.url);
    await c.connect();
    await c.query(`CREATE TABLE items (id serial PRIMARY KEY, label text NOT NULL, price numeric(10,2), seen timestamptz);
      CREATE INDEX items_label ON items (label);
      INSERT INTO items (label, price, seen) SELECT 'item ' || g, g * 1.5, '2026-01-01T00:00:00Z' FROM generate_series(1, 500) g;
      CREATE TABLE n AS SELECT generate_series(1, 3200) AS x;`);
    await c.end();
    const withPassword = new URL(db.url);
    withPassword.password = "s3cret-pw";
    withPassword.port = "1";
    tools = createDatabaseTools({
      databases: parseDatabases({
        main: db.url,
        rw: { url: db.url, writes: true },
        down: withPassword.href,
      }),
    });
  });
  after(async () => {
    tools.close();
    await db?.drop();
    await t.cleanup();
  });

  it("shows rows as the server spells them, capped, with the count", async () => {
    const r = await q({
      database: "main",
      sql: "SELECT id, label, price, seen FROM items ORDER BY id",
      max_rows: 2,
    });
    const out = ok(r);
    assert.match(out, /^main: PostgreSQL postgres:\/\/hands@127\.0\.0\.1:55432\/hq_\w+, read-only\n/);
    assert.match(
      out,
      /\| id \| label \| price \| seen \|\n\| --- \| --- \| --- \| --- \|\n\| 1 \| item 1 \| 1\.50 \| 2026-01-01 00:00:00\+00 \|/,
    );
    assert.match(out, /2 rows shown; more rows follow/);
    assert.match(ok(await q({ database: "main", sql: "SELECT count(*) FROM items" })), /\| 500 \|\n\(1 row;/);
  });

  it("schema mode lists tables with columns and index definitions", async () => {
    const out = ok(await q({ database: "main", mode: "schema", table: "items" }));
    assert.match(
      out,
      /public\.items \| table \| id integer NOT NULL, label text NOT NULL, price numeric\(10,2\), seen timestamp with time zone \|/,
    );
    assert.match(out, /CREATE INDEX items_label ON public\.items USING btree \(label\)/);
    assert.match(ok(await q({ database: "main", mode: "schema" })), /public\.n \| table \| x integer/);
    failed(await q({ database: "main", mode: "schema", table: "nope" }), /no table or view named nope/);
  });

  it("a write in read-only mode is refused by the server, however it is spelt", async () => {
    failed(
      await q({ database: "main", sql: "INSERT INTO items (label) VALUES ('x')" }),
      /read-only transaction \[SQLSTATE 25006\]/,
    );
    failed(await q({ database: "main", sql: "DELETE FROM items RETURNING id" }), /read-only transaction/);
    failed(
      await q({ database: "main", sql: "WITH d AS (DELETE FROM items RETURNING id) SELECT count(*) FROM d" }),
      /read-only transaction/,
    );
    failed(
      await q({ database: "main", sql: "COMMIT; DELETE FROM items" }),
      /cannot insert multiple commands/,
    );
    failed(
      await q({ database: "main", sql: "SET TRANSACTION READ WRITE" }),
      /must be set before any query \[SQLSTATE 25001\]/,
    );
    failed(await q({ database: "main", sql: "CREATE TABLE evil (a int)" }), /read-only transaction/);
    assert.equal(await count(), 500);
  });

  it("a query that would return ten million rows sends only the first page", async () => {
    const start = Date.now();
    const rss = process.memoryUsage().rss;
    const r = await q({ database: "main", sql: "SELECT a.x, b.x FROM n a CROSS JOIN n b" });
    assert.match(ok(r), /100 rows shown; more rows follow/);
    assert.equal(r.data?.rows, 100);
    assert.ok(Date.now() - start < 5000, `took ${Date.now() - start} ms`);
    assert.ok(process.memoryUsage().rss - rss < 100 * 1024 * 1024);
  });

  it("the statement timeout cancels a long query", async () => {
    const start = Date.now();
    failed(
      await q({ database: "main", sql: "SELECT pg_sleep(20)", timeout: 1 }),
      /ran past its time limit of 1 s/,
    );
    assert.ok(Date.now() - start < 5000);
  });

  it("a server that cannot be reached is an error without the password", async () => {
    const r = await q({ database: "down", sql: "SELECT 1" });
    failed(r, /cannot connect to postgres:\/\/hands:\*\*\*@127\.0\.0\.1:1\//);
    assert.doesNotMatch(r.output, /s3cret-pw/);
    failed(
      await q({ database: "main", sql: "SELEC 1" }),
      /syntax error at or near "SELEC" \[SQLSTATE 42601\]/,
    );
  });

  it("write_database writes to a database whose settings allow it", async () => {
    assert.match(
      ok(
        await tools.write.execute(
          { database: "rw", sql: "INSERT INTO items (label) VALUES ('new'), ('newer')" },
          t.ctx,
        ),
      ),
      /OK: 2 row\(s\) changed/,
    );
    assert.equal(await count(), 502);
    failed(
      await tools.write.execute({ database: "main", sql: "DELETE FROM items" }, t.ctx),
      /main does not allow writes/,
    );
    assert.equal(await count(), 502);
  });
});
