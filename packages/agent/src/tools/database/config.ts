// The databases a session may query, from trusted settings (`databases` in the user's config,
// or the project's once the folder is trusted; --database on the command line): each a name
// for a PostgreSQL URL or an SQLite file in the workspace. Writes are off unless the entry says
// `"writes": true`.
import { queryDatabaseSpec, writeDatabaseSpec } from "../specs.js";

export interface DatabaseEntry {
  name: string;
  kind: "postgres" | "sqlite";
  /** PostgreSQL: the connection URL (with its credentials). */
  url?: string;
  /** SQLite: the path as given (relative to the workspace). */
  path?: string;
  writes: boolean;
}

export interface DatabaseToolOptions {
  /** The databases the settings name. */
  databases: readonly DatabaseEntry[];
  /** SQLite files found in the workspace (named in the description). */
  sqliteFiles?: readonly string[];
}

const NAME = /^[A-Za-z_][\w-]{0,63}$/;

/** True for a postgres:// or postgresql:// URL. */
export function isPostgresUrl(text: string): boolean {
  return /^postgres(ql)?:\/\//i.test(text);
}

/**
 * `databases` as settings give it — `{ name: "postgres://…" | "file.db" | { url | path, writes } }`
 * — checked; throws an Error naming the entry and what is wrong with it.
 */
export function parseDatabases(value: unknown, where = "databases"): DatabaseEntry[] {
  if (value === undefined || value === null) return [];
  if (typeof value !== "object" || Array.isArray(value))
    throw new Error(`${where} must be a JSON object of name → database`);
  const out: DatabaseEntry[] = [];
  for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
    const at = `${where}.${name}`;
    if (!NAME.test(name)) throw new Error(`${at}: a database name is letters, digits, _ and - (at most 64)`);
    const spec = typeof raw === "string" ? { [isPostgresUrl(raw) ? "url" : "path"]: raw } : raw;
    if (typeof spec !== "object" || spec === null || Array.isArray(spec))
      throw new Error(
        `${at} must be a postgres:// URL, an SQLite file path, or { "url" | "path", "writes" }`,
      );
    const { url, path, writes, ...rest } = spec as Record<string, unknown>;
    const unknownKeys = Object.keys(rest);
    if (unknownKeys.length) throw new Error(`${at}: unknown key ${unknownKeys[0]} (use url, path, writes)`);
    if (writes !== undefined && typeof writes !== "boolean")
      throw new Error(`${at}.writes must be true or false`);
    if ((url === undefined) === (path === undefined))
      throw new Error(`${at}: give either "url" (PostgreSQL) or "path" (SQLite)`);
    if (url !== undefined) {
      if (typeof url !== "string" || !isPostgresUrl(url))
        throw new Error(`${at}.url must be a postgres:// or postgresql:// URL`);
      try {
        new URL(url);
      } catch {
        throw new Error(`${at}.url is not a valid URL`);
      }
      out.push({ name, kind: "postgres", url, writes: writes === true });
    } else {
      if (typeof path !== "string" || !path.trim() || path.includes("\0"))
        throw new Error(`${at}.path must be a file path`);
      out.push({ name, kind: "sqlite", path, writes: writes === true });
    }
  }
  return out;
}

/** A URL as it may be shown: without its password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.href;
  } catch {
    return "(an unparsable URL)";
  }
}

/** query_database's description, with the databases this session can reach. */
export function queryDescription(options: DatabaseToolOptions): string {
  const named = options.databases.map(
    (d) => `${d.name} (${d.kind === "postgres" ? "PostgreSQL" : `SQLite ${d.path}`})`,
  );
  const files = (options.sqliteFiles ?? []).slice(0, 5);
  const more = (options.sqliteFiles?.length ?? 0) > files.length ? ", …" : "";
  return [
    queryDatabaseSpec.description,
    named.length ? `Databases: ${named.join(", ")}.` : "",
    files.length ? `SQLite files in the workspace: ${files.join(", ")}${more}.` : "",
  ]
    .filter(Boolean)
    .join(" ");
}

/** write_database's description, naming the writable databases. */
export function writeDescription(options: DatabaseToolOptions): string {
  const writable = options.databases.filter((d) => d.writes).map((d) => d.name);
  return `${writeDatabaseSpec.description} Writable: ${writable.join(", ")}.`;
}
