// Snapshot marks against a real memory file: each mark's counts are the scope's chunks then, the
// log replayed to a mark rebuilds exactly those counts (two independent paths: the chunks table
// at mark time, the event log afterwards), and replaying to a step shows the chunks of the steps
// up to it with the moves made by then — not the later ones.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { Memory } from "./memory.js";
import { memoryMapAt } from "./memory-map.js";
import {
  markSnapshot,
  saveSnapshotMarks,
  seqAfterStep,
  snapshotMarks,
  snapshotPoint,
  stepRange,
} from "./snapshot-marks.js";
import { SqliteStore } from "./sqlite-store.js";

const dir = mkdtempSync(join(tmpdir(), "hands-snapshot-marks-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const perLayer = (cells: { layer: string; chunks: number }[]) => {
  const out: Record<string, number> = { working: 0, short_term: 0, long_term: 0, archived: 0 };
  for (const c of cells) out[c.layer] = (out[c.layer] ?? 0) + c.chunks;
  return out;
};

test("marks list newest first with the counts of their time; replaying to one rebuilds them", async () => {
  const path = join(dir, "m.db");
  const m = new Memory({ path, scope: "s1", policy: { workingBudget: 200, shortTermCapacity: 6 } });
  const store = m.store as SqliteStore;
  const marks = [];
  for (let step = 1; step <= 12; step++) {
    m.step = step;
    await m.add({ type: "tool_result", content: `step ${step}: ${"output ".repeat(step * 3)}` });
    await m.add({ type: "thought", content: `thinking about step ${step}` });
    if (step % 4 === 0) marks.push(markSnapshot(store, { scope: "s1", reason: "compaction point", step }));
  }
  // Another scope in the same file: neither its chunks nor its marks count for s1.
  const other = new Memory({ path, scope: "s2" });
  await other.add({ type: "user_input", content: "elsewhere" });
  markSnapshot(other.store as SqliteStore, { scope: "s2", reason: "session end" });
  other.close();
  marks.push(markSnapshot(store, { scope: "s1", reason: "session end", step: 12 }));

  const ro = new SqliteStore({ path, dimensions: 256, readonly: true });
  const listed = snapshotMarks(ro, { scope: "s1" });
  assert.deepEqual(
    listed.map((x) => x.reason),
    ["session end", "compaction point", "compaction point", "compaction point"],
  );
  assert.deepEqual(listed, [...marks].reverse());
  assert.equal(snapshotMarks(ro).length, 5);
  assert.equal(listed[0]!.chunks, 24);
  assert.ok(listed[0]!.layers.working < 24, "the policy moved chunks out of working");
  for (const mark of listed) {
    const replayed = memoryMapAt(ro, mark.seq, { scope: "s1" });
    assert.deepEqual(perLayer(replayed.cells), mark.layers, `mark at step ${mark.step}`);
  }
  // Marks only grow: the first one's counts are smaller than the last one's.
  assert.equal(listed.at(-1)!.chunks, 8);
  assert.deepEqual(stepRange(ro, "s1"), { first: 1, last: 12 });
  ro.close();
  m.close();
});

test("replay to a step: the chunks up to it, the moves made by then, nothing later", async () => {
  const path = join(dir, "steps.db");
  const m = new Memory({ path, scope: "s" });
  const ids: string[][] = [];
  for (let step = 1; step <= 5; step++) {
    m.step = step;
    ids.push([
      (await m.add({ type: "tool_result", content: `result of step ${step}` })).id,
      (await m.add({ type: "thought", content: `a thought at step ${step}` })).id,
    ]);
    // At step 4, one of step 1's chunks is archived.
    if (step === 4) m.archive(ids[0]![0]!, "test: archived at step 4");
  }
  const store = m.store as SqliteStore;
  const at = (step: number) =>
    perLayer(memoryMapAt(store, seqAfterStep(store, "s", step), { scope: "s" }).cells);
  const total = (step: number) => Object.values(at(step)).reduce((n, x) => n + x, 0);
  assert.equal(total(2), 4);
  assert.equal(at(3).archived, 0, "the archive happened at step 4");
  assert.equal(total(3), 6);
  assert.equal(at(4).archived, 1);
  assert.equal(total(5), 10);
  assert.equal(seqAfterStep(store, "s", 5), store.lastSeq(), "the last step: the whole log");
  assert.equal(total(0), 0, "before the first step: nothing");
  m.close();
});

test("a file from before marks existed (opened read-only) has none, and says so without failing", () => {
  const path = join(dir, "old.db");
  const w = new SqliteStore({ path, dimensions: 256 });
  w.close();
  const ro = new SqliteStore({ path, dimensions: 256, readonly: true });
  assert.deepEqual(snapshotMarks(ro), []);
  assert.equal(stepRange(ro, "any"), undefined);
  ro.close();
});

test("a point taken mid-step and saved later keeps the seq and counts of when it was taken", async () => {
  const path = join(dir, "later.db");
  const m = new Memory({ path, scope: "p" });
  const store = m.store as SqliteStore;
  await m.add({ type: "tool_result", content: "before the point" });
  const point = snapshotPoint(store, { scope: "p", reason: "compaction point", step: 3 });
  // Nothing written: a file that had no marks has no table yet.
  assert.deepEqual(snapshotMarks(store), []);
  await m.add({ type: "tool_result", content: "after the point" });
  const [saved] = saveSnapshotMarks(store, [point]);
  assert.equal(saved!.chunks, 1);
  assert.equal(saved!.seq, point.seq);
  assert.ok(saved!.seq < store.lastSeq());
  assert.deepEqual(snapshotMarks(store, { scope: "p" }), [saved]);
  assert.deepEqual(saveSnapshotMarks(store, []), []);
  m.close();
});
