// The process SQLite statements run in (see sqlite-run.ts): one request at a time over IPC;
// the parent kills it when a statement runs past its time.
import { runSqlite, SqliteRefusal, type SqliteRequest } from "./sqlite-run.js";

process.on("message", (msg: { id: number; req: SqliteRequest }) => {
  try {
    process.send?.({ id: msg.id, ok: true, table: runSqlite(msg.req) });
  } catch (e) {
    process.send?.({
      id: msg.id,
      ok: false,
      error: (e as Error).message,
      refused: e instanceof SqliteRefusal,
    });
  }
});
process.on("disconnect", () => process.exit(0));
