// The workspace comparison run_task reports changes with: created, modified (same size
// rewritten too), deleted; ignored files and skipped folders left out; a capped walk claims
// no creation or deletion it cannot know.
import assert from "node:assert/strict";
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { changedFiles, fileStates } from "./file-states.js";

test("fileStates and changedFiles: what a run created, modified and deleted", async (t) => {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), "hands-states-")));
  t.after(() => rmSync(ws, { recursive: true, force: true }));
  const outside = realpathSync(mkdtempSync(join(tmpdir(), "hands-states-out-")));
  t.after(() => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(join(ws, ".gitignore"), "*.log\n");
  writeFileSync(join(ws, "same-size.txt"), "aaaa");
  writeFileSync(join(ws, "gone.txt"), "x");
  writeFileSync(join(ws, "kept.txt"), "k");
  mkdirSync(join(ws, "data"));
  writeFileSync(join(ws, "data", "session.jsonl"), "1");
  symlinkSync(outside, join(ws, "out-link"));
  const before = await fileStates(ws, { skip: [join(ws, "data")] });
  assert.equal(before.capped, false);
  assert.ok(!before.files.has("data/session.jsonl"), "a skipped folder is not compared");

  writeFileSync(join(ws, "same-size.txt"), "bbbb");
  unlinkSync(join(ws, "gone.txt"));
  writeFileSync(join(ws, "new.txt"), "n");
  writeFileSync(join(ws, "noise.log"), "ignored");
  writeFileSync(join(ws, "data", "session.jsonl"), "12");
  writeFileSync(join(outside, "through-link.txt"), "not the workspace's");
  const after = await fileStates(ws, { skip: [join(ws, "data")] });
  assert.deepEqual(changedFiles(before, after), [
    ["gone.txt", "deleted"],
    ["new.txt", "created"],
    ["same-size.txt", "modified"],
  ]);

  // Capped: one file looked at; nothing is called created or deleted past what was seen.
  const small = await fileStates(ws, { max: 1 });
  assert.equal(small.capped, true);
  assert.equal(small.files.size, 1);
  assert.deepEqual(changedFiles(small, after), []);
  assert.deepEqual(
    changedFiles(before, small).filter(([, c]) => c === "deleted"),
    [],
  );
});
