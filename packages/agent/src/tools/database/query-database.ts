// query_database (read-only) and write_database (approved writes, for databases whose settings
// allow them): one statement on an SQLite file in the workspace or a PostgreSQL database
// named in trusted settings; the rows come back as a capped table.
import { errorResult, exceptionResult } from "../fs/errors.js";
import { PathError } from "../paths.js";
import {
  DB_DEFAULT_MAX_ROWS,
  DB_DEFAULT_TIMEOUT_S,
  DB_MAX_ROWS,
  DB_MAX_TIMEOUT_S,
  queryDatabaseSpec,
  writeDatabaseSpec,
} from "../specs.js";
import type { Tool, ToolContext, ToolResult } from "../types.js";
import {
  type DatabaseToolOptions,
  isPostgresUrl,
  queryDescription,
  redactUrl,
  writeDescription,
} from "./config.js";
import { SqliteError, SqliteRunner } from "./sqlite-runner.js";
import { sqliteTarget, TargetError } from "./sqlite-target.js";
import { formatTable, type QueryTable } from "./table.js";

export type { DatabaseToolOptions } from "./config.js";

export interface DatabaseArgs {
  database: string;
  sql?: string;
  mode?: "query" | "schema";
  table?: string;
  max_rows?: number;
  timeout?: number;
}

/** Both tools of a session share one SQLite process. */
export function createDatabaseTools(options: DatabaseToolOptions): {
  query: Tool<DatabaseArgs>;
  write: Tool<DatabaseArgs>;
  close(): void;
} {
  const runner = new SqliteRunner();
  return {
    query: {
      ...queryDatabaseSpec,
      description: queryDescription(options),
      execute: (args, ctx) => run(args, ctx, options, runner, false),
    },
    write: {
      ...writeDatabaseSpec,
      description: writeDescription(options),
      execute: (args, ctx) => run(args, ctx, options, runner, true),
    },
    close: () => runner.close(),
  };
}

async function run(
  args: DatabaseArgs,
  ctx: ToolContext,
  options: DatabaseToolOptions,
  runner: SqliteRunner,
  write: boolean,
): Promise<ToolResult> {
  const mode = write ? "query" : (args.mode ?? "query");
  if (mode === "query" && !args.sql?.trim())
    return errorResult('give the SQL statement in "sql" (or mode "schema" to see the tables)');
  const maxRows = Math.min(args.max_rows ?? DB_DEFAULT_MAX_ROWS, DB_MAX_ROWS);
  const timeoutMs = Math.min(args.timeout ?? DB_DEFAULT_TIMEOUT_S, DB_MAX_TIMEOUT_S) * 1000;
  const entry = options.databases.find((d) => d.name === args.database);
  if (!entry && isPostgresUrl(args.database))
    return errorResult(
      `only databases named in the settings can be reached (${options.databases.map((d) => d.name).join(", ") || "none are"}); a URL in the call is not used`,
    );
  if (write && !entry?.writes)
    return errorResult(
      `${args.database} does not allow writes: a database is writable only when its settings say "writes": true (writable: ${
        options.databases
          .filter((d) => d.writes)
          .map((d) => d.name)
          .join(", ") || "none"
      })`,
    );
  const label = entry ? entry.name : args.database;
  const data: Record<string, unknown> = { database: label, mode, write };
  try {
    let table: QueryTable;
    let where: string;
    if (entry?.kind === "postgres") {
      const { runPostgres, postgresSchemaSql } = await import("./postgres-run.js");
      where = `PostgreSQL ${redactUrl(entry.url as string)}`;
      const sql = mode === "schema" ? postgresSchemaSql(args.table) : (args.sql as string);
      table = await runPostgres({ url: entry.url as string, sql, maxRows, write, timeoutMs }, ctx.signal);
      if (mode === "schema" && args.table && table.rows.length === 0)
        return errorResult(`no table or view named ${args.table} in ${label}`, data);
    } else {
      const file = await sqliteTarget(ctx, entry?.path ?? args.database);
      where = `SQLite ${entry?.path ?? args.database}`;
      table = await runner.run(
        {
          op: mode,
          path: file.path,
          identity: { dev: file.dev, ino: file.ino },
          ...(args.sql ? { sql: args.sql } : {}),
          ...(args.table ? { table: args.table } : {}),
          maxRows,
          write,
        },
        timeoutMs,
        ctx.signal,
      );
    }
    Object.assign(data, {
      columns: table.columns,
      rows: table.rows.length,
      more: table.more,
      ms: table.ms,
      ...(table.changed !== undefined ? { changed: table.changed } : {}),
    });
    return {
      output: `${label}: ${where}${write ? "" : ", read-only"}\n${formatTable(table, maxRows)}`,
      data,
    };
  } catch (e) {
    if (e instanceof TargetError || e instanceof PathError) return errorResult(e.message, data);
    // SqliteError and PostgresError (loaded with pg, so not named here) carry a kind.
    if (e instanceof SqliteError || (e instanceof Error && "kind" in e)) {
      const kind = (e as { kind: string }).kind;
      const readOnlyHint =
        !write && /readonly database|read-only transaction|query_only/i.test((e as Error).message)
          ? " (query_database is read-only" + (entry?.writes ? "; use write_database to change it)" : ")")
          : "";
      return errorResult(`${label}: ${(e as Error).message}${readOnlyHint}`, { ...data, kind });
    }
    return exceptionResult(e, label);
  }
}
