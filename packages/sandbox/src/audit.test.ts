// The audit log reads back what it wrote, in order; torn or foreign lines are counted, and a
// FIFO in its place is not waited on.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { AuditLog, readAuditLog } from "./audit.js";

const dir = mkdtempSync(join(tmpdir(), "hands-audit-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("readAuditLog returns the written events in order and counts what it cannot read", () => {
  const path = join(dir, "audit.jsonl");
  const log = new AuditLog(path);
  log.write({ event: "create", session: "s1", kind: "bwrap", workspace: "/w" });
  log.write({ event: "exec", session: "s1", command: "ls", exitCode: 0, timedOut: false, durationMs: 3 });
  appendFileSync(path, "[1]\n");
  log.write({ event: "destroy", session: "s1", reason: "requested" });
  appendFileSync(path, '{"time":"2026');
  const r = readAuditLog(path);
  assert.deepEqual(
    r.records.map((e) => e.event),
    ["create", "exec", "destroy"],
  );
  assert.ok(r.records.every((e) => !Number.isNaN(Date.parse(e.time))));
  assert.equal(r.unreadable, 2);
  // Only the tail of a large log: the first, partial line is dropped.
  const tail = readAuditLog(path, 120);
  assert.deepEqual(
    tail.records.map((e) => e.event),
    ["destroy"],
  );
  assert.deepEqual(readAuditLog(join(dir, "missing.jsonl")), { records: [], unreadable: 0 });
  const fifo = join(dir, "fifo.jsonl");
  execFileSync("mkfifo", [fifo]);
  assert.deepEqual(readAuditLog(fifo), { records: [], unreadable: 0 });
});
