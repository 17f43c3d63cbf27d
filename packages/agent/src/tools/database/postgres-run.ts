// One statement on a PostgreSQL database, through the `pg` driver. Read-only is PostgreSQL's
// own: the connection starts with default_transaction_read_only=on and the statement runs in a
// BEGIN READ ONLY transaction, so the server refuses any write (including one a function
// makes). Rows come through a cursor (pg-cursor: a portal read maxRows + 1 rows at a time) —
// a query of ten million rows sends the first page, never the rest — and the extended protocol
// takes one statement, so `COMMIT; …` cannot leave the read-only transaction.
import pg from "pg";
import Cursor from "pg-cursor";
import { redactUrl } from "./config.js";
import { cellText, type QueryTable } from "./table.js";

export class PostgresError extends Error {
  constructor(
    message: string,
    readonly kind: "connect" | "sql" | "timeout" | "aborted",
  ) {
    super(message);
  }
}

export interface PostgresRequest {
  url: string;
  sql: string;
  maxRows: number;
  write: boolean;
  timeoutMs: number;
}

// Values as the server sends them (text), not turned into JS numbers or Dates that lose
// precision or time zones: the model reads the database's own spelling.
const asText = { getTypeParser: () => (v: string) => v } as unknown as pg.CustomTypesConfig;

async function connect(
  url: string,
  write: boolean,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: Math.min(timeoutMs, 10_000),
    statement_timeout: timeoutMs,
    application_name: "hands query_database",
    ...(write ? {} : { options: "-c default_transaction_read_only=on" }),
    types: asText,
  });
  client.on("error", () => {}); // a dropped connection is reported by the query that was running
  const onAbort = () => void client.end().catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    await client.connect();
  } catch (e) {
    await client.end().catch(() => {});
    if (signal.aborted) throw new PostgresError("the query was cancelled", "aborted");
    throw new PostgresError(`cannot connect to ${redactUrl(url)}: ${(e as Error).message}`, "connect");
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  return client;
}

function sqlError(e: unknown, signal: AbortSignal, timeoutMs: number): PostgresError {
  if (signal.aborted) return new PostgresError("the query was cancelled", "aborted");
  const err = e as { message?: string; code?: string; hint?: string; position?: string };
  if (err.code === "57014")
    return new PostgresError(
      `the query ran past its time limit of ${timeoutMs / 1000} s and was cancelled`,
      "timeout",
    );
  const hint =
    err.code === "25006"
      ? " (this database is read-only for query_database)"
      : err.hint
        ? ` (hint: ${err.hint})`
        : "";
  return new PostgresError(
    `${err.message ?? String(e)}${err.code ? ` [SQLSTATE ${err.code}]` : ""}${hint}`,
    "sql",
  );
}

function readPage(cursor: Cursor, n: number): Promise<{ rows: unknown[][]; fields: { name: string }[] }> {
  return new Promise((resolve, reject) => {
    cursor.read(n, (err, rows, result) =>
      err ? reject(err) : resolve({ rows: rows as unknown[][], fields: result?.fields ?? [] }),
    );
  });
}

export async function runPostgres(req: PostgresRequest, signal: AbortSignal): Promise<QueryTable> {
  const started = performance.now();
  const client = await connect(req.url, req.write, req.timeoutMs, signal);
  const onAbort = () => void client.end().catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    if (req.write) {
      // Approved writes run as sent, in one transaction.
      await client.query("BEGIN");
      const r = await client.query({ text: req.sql, rowMode: "array" } as pg.QueryArrayConfig);
      await client.query("COMMIT");
      const last = Array.isArray(r) ? (r.at(-1) as pg.QueryArrayResult) : r;
      if (!last.fields?.length)
        return {
          columns: [],
          rows: [],
          more: false,
          changed: last.rowCount ?? 0,
          ms: Math.round(performance.now() - started),
        };
      const rows = last.rows.slice(0, req.maxRows).map((row) => row.map(cellText));
      return {
        columns: last.fields.map((f) => f.name),
        rows,
        more: last.rows.length > req.maxRows,
        ms: Math.round(performance.now() - started),
      };
    }
    // A first query takes the transaction's snapshot: from then on `SET TRANSACTION READ WRITE`
    // is refused (before it, PostgreSQL would let the statement turn the transaction writable).
    await client.query("BEGIN READ ONLY; SELECT 1");
    const cursor = client.query(new Cursor(req.sql, [], { rowMode: "array", types: asText }));
    const page = await readPage(cursor, req.maxRows + 1);
    await cursor.close().catch(() => {});
    await client.query("ROLLBACK").catch(() => {});
    const more = page.rows.length > req.maxRows;
    return {
      columns: page.fields.map((f) => f.name),
      rows: page.rows.slice(0, req.maxRows).map((row) => row.map(cellText)),
      more,
      ms: Math.round(performance.now() - started),
    };
  } catch (e) {
    throw sqlError(e, signal, req.timeoutMs);
  } finally {
    signal.removeEventListener("abort", onAbort);
    await client.end().catch(() => {});
  }
}

/** Tables and views with their columns and indexes (user schemas; `table` narrows it to one). */
export function postgresSchemaSql(table: string | undefined): string {
  const where =
    "c.relkind IN ('r','v','m','p','f') AND n.nspname NOT IN ('pg_catalog','information_schema') AND n.nspname NOT LIKE 'pg_toast%'";
  const named = table
    ? ` AND (c.relname = ${literal(table)} OR n.nspname || '.' || c.relname = ${literal(table)})`
    : "";
  return `SELECT n.nspname || '.' || c.relname AS "table",
  CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'f' THEN 'foreign table' ELSE 'table' END AS type,
  (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END, ', ' ORDER BY a.attnum)
     FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
  COALESCE((SELECT string_agg(pg_get_indexdef(i.indexrelid), '; ' ORDER BY i.indexrelid) FROM pg_index i WHERE i.indrelid = c.oid), '-') AS indexes
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE ${where}${named}
ORDER BY 1`;
}

/** A string as an SQL literal. */
function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
