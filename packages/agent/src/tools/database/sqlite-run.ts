// Runs one statement on an SQLite file, in the process that sqlite-child.ts runs (better-sqlite3
// is synchronous: a long query would stall the agent, and only a killed process stops a step
// that never returns). Read-only means the file is opened read-only AND `PRAGMA query_only`
// is on — the engine refuses the write, no keyword list guesses at it. Statements that reach
// other files (ATTACH, VACUUM INTO) are refused by what SQLite compiled them to (EXPLAIN).
import { fstatSync, readdirSync, readlinkSync } from "node:fs";
import Database from "better-sqlite3";
import { cellText, type QueryTable } from "./table.js";

export interface SqliteRequest {
  op: "query" | "schema";
  /** The file's real path, checked to lie in the workspace (sqlite-target.ts). */
  path: string;
  /** The file as sqlite-target.ts checked it: what SQLite opens must be the same file. */
  identity?: { dev: number; ino: number };
  sql?: string;
  table?: string;
  maxRows: number;
  write: boolean;
}

export class SqliteRefusal extends Error {}

function open(req: SqliteRequest): Database.Database {
  const db = new Database(req.path, { readonly: !req.write, fileMustExist: true });
  try {
    if (req.identity) checkOpened(db, req);
  } catch (e) {
    db.close();
    throw e;
  }
  if (!req.write) db.pragma("query_only = ON");
  return db;
}

/**
 * The file SQLite opened under this name (found among the process's descriptors, Linux'
 * /proc/self/fd) is the file the target check saw, and it and its open companions have one
 * link each: a name swapped for a hard link or a symlink between that check and this open is
 * refused, whatever the timing.
 */
function checkOpened(db: Database.Database, req: SqliteRequest): void {
  // The schema is read on first use: make SQLite open (and lock) the file now.
  db.prepare("SELECT 1 FROM sqlite_master LIMIT 1").get();
  const names = [req.path, ...["-wal", "-shm", "-journal"].map((s) => `${req.path}${s}`)];
  let seen = false;
  for (const fd of readdirSync("/proc/self/fd")) {
    let target: string;
    let st: import("node:fs").Stats;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
      st = fstatSync(Number(fd));
    } catch {
      continue;
    }
    if (!names.includes(target) || !st.isFile()) continue;
    if (st.nlink !== 1)
      throw new SqliteRefusal(
        `${target} has ${st.nlink} hard links now (it changed after it was checked); the database is not opened`,
      );
    if (target === req.path && st.dev === req.identity!.dev && st.ino === req.identity!.ino) seen = true;
  }
  if (!seen)
    throw new SqliteRefusal(
      `${req.path} changed after it was checked (SQLite opened another file); the database is not opened`,
    );
}

/** Refuses a statement whose program attaches a file or vacuums into one. */
function refuseOtherFiles(db: Database.Database, sql: string): void {
  for (const op of db.prepare(`EXPLAIN ${sql}`).iterate() as Iterable<{ opcode: string; p4: unknown }>) {
    const p4 = String(op.p4 ?? "");
    if (op.opcode === "Vacuum" && /INTO/i.test(sql))
      throw new SqliteRefusal("VACUUM INTO writes another file; it is not allowed");
    if (/^(sqlite_attach|sqlite_detach)\(/.test(p4))
      throw new SqliteRefusal(
        "ATTACH/DETACH would open files outside the database given; query that file directly",
      );
  }
}

export function runSqlite(req: SqliteRequest): QueryTable {
  const started = performance.now();
  const db = open(req);
  try {
    if (req.op === "schema") return sqliteSchema(db, req, started);
    const sql = req.sql ?? "";
    const stmt = db.prepare(sql);
    refuseOtherFiles(db, sql);
    if (!stmt.reader) {
      const info = stmt.run();
      return {
        columns: [],
        rows: [],
        more: false,
        changed: info.changes,
        ms: Math.round(performance.now() - started),
      };
    }
    stmt.raw(true);
    const columns = stmt.columns().map((c) => c.name);
    const rows: string[][] = [];
    let more = false;
    // iterate() steps the statement one row at a time: a query of ten million rows reads
    // maxRows + 1 of them and stops.
    for (const row of stmt.iterate() as Iterable<unknown[]>) {
      if (rows.length === req.maxRows) {
        more = true;
        break;
      }
      rows.push(row.map(cellText));
    }
    return { columns, rows, more, ms: Math.round(performance.now() - started) };
  } finally {
    db.close();
  }
}

function sqliteSchema(db: Database.Database, req: SqliteRequest, started: number): QueryTable {
  const objects = db
    .prepare(
      "SELECT name, type FROM sqlite_schema WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' " +
        (req.table ? "AND name = ? " : "") +
        "ORDER BY name",
    )
    .all(...(req.table ? [req.table] : [])) as { name: string; type: string }[];
  if (req.table && objects.length === 0) throw new SqliteRefusal(`no table or view named ${req.table}`);
  const rows: string[][] = [];
  let more = false;
  for (const o of objects) {
    if (rows.length >= req.maxRows) {
      more = true;
      break;
    }
    const cols = db.prepare('SELECT name, type, "notnull", pk FROM pragma_table_xinfo(?)').all(o.name) as {
      name: string;
      type: string;
      notnull: number;
      pk: number;
    }[];
    const indexes = db
      .prepare(
        "SELECT il.name AS name, il.\"unique\" AS uniq, group_concat(ii.name, ', ') AS cols FROM pragma_index_list(?) il " +
          "JOIN pragma_index_info(il.name) ii GROUP BY il.name ORDER BY il.name",
      )
      .all(o.name) as { name: string; uniq: number; cols: string }[];
    rows.push([
      cellText(o.name),
      o.type,
      cellText(
        cols
          .map((c) => `${c.name} ${c.type || "ANY"}${c.pk ? " PK" : ""}${c.notnull ? " NOT NULL" : ""}`)
          .join(", "),
      ),
      cellText(indexes.map((i) => `${i.name}${i.uniq ? " UNIQUE" : ""} (${i.cols})`).join("; ") || "-"),
    ]);
  }
  return {
    columns: ["table", "type", "columns", "indexes"],
    rows,
    more,
    ms: Math.round(performance.now() - started),
  };
}
