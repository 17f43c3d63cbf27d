// The memory file is read through a memory map only once it outgrows the page cache: a small
// store's pages would otherwise count as resident memory for no gain; a large one keeps the
// map's cheaper reads. The switch happens at open or at the next compact(), and changes no data.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { Memory } from "./memory.js";
import { SqliteStore } from "./sqlite-store.js";

const dir = mkdtempSync(join(tmpdir(), "hands-map-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const mmapSize = (s: SqliteStore) => s.db.pragma("mmap_size", { simple: true }) as number;

test("a small file is not mapped; past the threshold it is, at compact() and at the next open", async () => {
  const path = join(dir, "m.db");
  const store = new SqliteStore({ path, dimensions: 256, mapAboveBytes: 1024 * 1024 });
  assert.equal(mmapSize(store), 0);
  const memory = new Memory({ store, scope: "s" });
  const text = (i: number) => `chunk ${i}: ${"lorem ipsum dolor sit amet ".repeat(40)}`;
  await memory.addMany(
    Array.from({ length: 20 }, (_, i) => ({ type: "tool_result" as const, content: text(i) })),
  );
  memory.compact();
  assert.equal(mmapSize(store), 0, "still small");
  await memory.addMany(
    Array.from({ length: 400 }, (_, i) => ({ type: "tool_result" as const, content: text(100 + i) })),
  );
  memory.compact();
  assert.equal(mmapSize(store), 1073741824);
  // The same chunks are read either way.
  const found = await memory.retrieve("chunk 150", { budget: 2000 });
  assert.ok(found.items.some((i) => i.chunk.content.startsWith("chunk 150:")));
  memory.close();
  const again = new SqliteStore({ path, dimensions: 256, mapAboveBytes: 1024 * 1024 });
  assert.equal(mmapSize(again), 1073741824, "a large file is mapped from the start");
  assert.equal(again.count({ scope: "s" }), 420);
  again.close();
});
