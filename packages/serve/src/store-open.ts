// Which store a `hands serve` opens (its own file: the stores import the interface from
// store.ts, so opening them from there would be an import cycle).
import { join } from "node:path";
import { redact, type Store } from "./store.js";

/**
 * The store a `hands serve` uses: PostgreSQL when a postgres:// URL is given (several nodes),
 * else SQLite in the data folder (one node). Loaded lazily: one node never loads `pg`.
 */
export async function openStore(o: { dataDir: string; database?: string | undefined }): Promise<Store> {
  const url = o.database;
  if (url && /^postgres(ql)?:\/\//.test(url)) {
    const { PostgresStore } = await import("./store-postgres.js");
    return PostgresStore.connect(url);
  }
  if (url) throw new Error(`--database must be a postgres:// URL (SQLite is the default): ${redact(url)}`);
  const { SqliteStore } = await import("./store-sqlite.js");
  return new SqliteStore(join(o.dataDir, "serve.db"));
}
