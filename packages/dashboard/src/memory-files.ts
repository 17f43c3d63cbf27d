// The memory files of the data folder (memory.db, memory.<embedding model>.db), each opened
// read-only through the memory package's own store: the dashboard never writes memory, and a
// run writing the file meanwhile (WAL) is not disturbed.
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { SqliteStore, storedDimensions } from "@hands/memory";
import type { MemoryFile } from "./api-types.js";

const MEMORY_FILE = /^memory(\.[\w.-]+)?\.db$/;

export class MemoryFiles {
  private readonly open = new Map<string, SqliteStore>();
  constructor(readonly dataDir: string) {}

  list(): MemoryFile[] {
    let names: string[];
    try {
      names = readdirSync(this.dataDir).filter((n) => MEMORY_FILE.test(n));
    } catch {
      return [];
    }
    const out: MemoryFile[] = [];
    for (const name of names) {
      try {
        const st = lstatSync(join(this.dataDir, name));
        if (st.isFile()) out.push({ name, bytes: st.size });
      } catch {}
    }
    return out.sort((a, b) =>
      a.name === "memory.db" ? -1 : b.name === "memory.db" ? 1 : a.name.localeCompare(b.name),
    );
  }

  /** The store of `name` (default: the first file), opened read-only once. */
  store(name?: string): { name: string; store: SqliteStore } {
    const files = this.list();
    const file =
      name === undefined || name === "" ? files[0]?.name : files.find((f) => f.name === name)?.name;
    if (!file)
      throw new MemoryFileError(
        name
          ? `no memory file ${name}`
          : `no memory file in ${this.dataDir} yet (a run with memory on makes one)`,
        404,
      );
    let store = this.open.get(file);
    if (!store) {
      const path = join(this.dataDir, file);
      try {
        store = new SqliteStore({ path, dimensions: storedDimensions(path) ?? 256, readonly: true });
      } catch (err) {
        throw new MemoryFileError(`cannot open ${file} read-only: ${(err as Error).message}`, 503);
      }
      this.open.set(file, store);
    }
    return { name: file, store };
  }

  /** Runs a read; a file being written (busy, locked) or damaged gives a clear error, and is reopened next time. */
  read<T>(name: string | undefined, fn: (store: SqliteStore, file: string) => T): T {
    const { name: file, store } = this.store(name);
    try {
      return fn(store, file);
    } catch (err) {
      // Only SQLite's own failures mean the file is in trouble; anything else is the caller's.
      if (!String((err as { code?: unknown }).code ?? "").startsWith("SQLITE_")) throw err;
      const message = (err as Error).message;
      this.open.delete(file);
      try {
        store.close();
      } catch {}
      const busy = /busy|locked/i.test(message);
      throw new MemoryFileError(
        busy
          ? `${file} is being written by another process (${message}); try again in a moment`
          : `${file} could not be read: ${message} (written by another version of Hands, or damaged?)`,
        503,
      );
    }
  }

  private readonly results = new Map<string, { version: number; value: unknown }>();

  /**
   * Like read, but a result is kept until the file changes (SQLite's data_version moves when
   * another connection commits): a map of 100,000 chunks is aggregated once per change, not per view.
   */
  cached<T>(name: string | undefined, key: string, fn: (store: SqliteStore, file: string) => T): T {
    return this.read(name, (store, file) => {
      const version = store.db.pragma("data_version", { simple: true }) as number;
      const k = `${file}\u0000${key}`;
      const hit = this.results.get(k);
      if (hit && hit.version === version) return hit.value as T;
      const value = fn(store, file);
      if (this.results.size > 200) this.results.clear();
      this.results.set(k, { version, value });
      return value;
    });
  }

  close(): void {
    for (const s of this.open.values()) s.close();
    this.open.clear();
  }
}

export class MemoryFileError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}
