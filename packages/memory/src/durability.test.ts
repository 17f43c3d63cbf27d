// Durability: a process killed (SIGKILL) in the middle of writes loses nothing it committed
// and leaves no corruption; and, over random sessions, a compressed chunk's originals can
// always be recalled. The benchmark runs the same checks with many more cases.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { checkRandomSession, killMidWrites } from "./durability.js";
import { SqliteStore } from "./sqlite-store.js";

const dir = mkdtempSync(join(tmpdir(), "hands-memory-dur-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("SIGKILL in the middle of writes: no corruption, nothing committed lost", async () => {
  const path = join(dir, "kill.db");
  const committed = await killMidWrites(path, 300);
  assert.ok(committed.length >= 300);
  const store = new SqliteStore({ path, dimensions: 256 });
  assert.equal(
    (store.db.pragma("integrity_check") as { integrity_check: string }[])[0]?.integrity_check,
    "ok",
  );
  const found = new Set(store.getMany(committed).map((c) => c.id));
  assert.deepEqual(
    committed.filter((id) => !found.has(id)),
    [],
  );
  // The store still works after recovery.
  assert.ok(store.searchText("payload", {}, 5).length > 0);
  store.close();
});

test("property: over random sessions, every compressed chunk's originals are recallable", async () => {
  let summaries = 0;
  for (let seed = 1; seed <= 12; seed++) summaries += (await checkRandomSession(dir, seed)).summaries;
  assert.ok(summaries > 10, `the sessions did compress (${summaries} summaries)`);
});
