// The memory map's views agree with the chunks themselves, read from a read-only store while
// the writer keeps the file open, and the replay of the log ends where the store is now.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { Memory } from "./memory.js";
import { memoryCell, memoryMap, memoryMapAt, memoryMoveLog, memoryMoves } from "./memory-map.js";
import { SqliteStore } from "./sqlite-store.js";

const dir = mkdtempSync(join(tmpdir(), "hands-memory-map-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("cells count every chunk once; a cell's page, the moves and the replay agree with the store", async () => {
  const path = join(dir, "m.db");
  const m = new Memory({ path, scope: "run-a", policy: { workingBudget: 300, shortTermCapacity: 10 } });
  for (let i = 0; i < 60; i++)
    await m.add({
      type: i % 3 ? "tool_result" : "thought",
      content: `output ${i}: ${"word ".repeat(i % 7)}done`,
    });
  const other = new Memory({ path, scope: "run-b" });
  await other.add({ type: "user_input", content: "a request in another run" });
  other.close();

  // The writer still has the file open (WAL) while the reader looks.
  const ro = new SqliteStore({ path, dimensions: 256, readonly: true });
  const map = memoryMap(ro, { scope: "run-a", buckets: 10 });
  const all = ro.list({ scope: "run-a", limit: 10_000, content: false });
  assert.equal(map.chunks, all.length);
  assert.equal(map.chunks, 60);
  assert.deepEqual(map.scopes, [
    { scope: "run-a", chunks: 60 },
    { scope: "run-b", chunks: 1 },
  ]);
  assert.ok(new Set(map.cells.map((c) => c.layer)).size >= 2, "the policy spread chunks over layers");
  for (const cell of map.cells) {
    const expected = all.filter(
      (c) => c.layer === cell.layer && Math.min(9, Math.floor(c.importance * 10)) === cell.bucket,
    );
    assert.equal(cell.chunks, expected.length, `${cell.layer}/${cell.bucket}`);
    assert.equal(
      cell.tokens,
      expected.reduce((n, c) => n + c.tokens, 0),
    );
    const page = memoryCell(ro, { scope: "run-a", layer: cell.layer, bucket: cell.bucket, limit: 5 });
    assert.equal(page.total, expected.length);
    assert.equal(page.chunks.length, Math.min(5, expected.length));
    assert.ok(page.chunks.every((c) => c.layer === cell.layer && c.preview.startsWith("output")));
  }

  const moves = memoryMoves(ro, { bins: 5 });
  const logged = ro.events();
  // About five bins, each aligned to the bin size from the first event.
  const times = [...new Set(moves.bins.map((b) => b.time))];
  assert.ok(times.length <= 6, `${times.length} bins`);
  assert.ok(times.every((t) => (t - logged[0]!.time) % moves.binMs === 0));
  assert.equal(
    moves.bins.reduce((n, b) => n + b.count, 0),
    logged.length,
  );
  const newest = memoryMoveLog(ro, { limit: 3 });
  assert.deepEqual(
    newest.map((e) => e.seq),
    logged
      .slice(-3)
      .map((e) => e.seq)
      .reverse(),
  );

  // Replaying the whole log gives today's map; replaying to the first event gives one chunk.
  const replayed = memoryMapAt(ro, ro.lastSeq(), { scope: "run-a" });
  const key = (c: { layer: string; bucket: number; chunks: number; tokens: number }) =>
    `${c.layer}/${c.bucket}:${c.chunks}/${c.tokens}`;
  assert.deepEqual(replayed.cells.map(key).sort(), map.cells.map(key).sort());
  const first = memoryMapAt(ro, logged[0]!.seq);
  assert.equal(
    first.cells.reduce((n, c) => n + c.chunks, 0),
    1,
  );
  assert.throws(() => ro.append([{ kind: "deleted", id: all[0]!.id, time: 1, reason: "x" }]), /readonly/);
  ro.close();
  m.close();
});
