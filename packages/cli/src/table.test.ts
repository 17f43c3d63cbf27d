import assert from "node:assert/strict";
import { test } from "node:test";
import type { SessionSummary } from "@hands/agent";
import { formatSessions } from "./sessions-command.js";

function session(id: string, steps: number, costUsd: number, firstRequest: string): SessionSummary {
  return {
    id,
    workspace: "/w",
    created: 0,
    updated: Date.UTC(2026, 0, 2, 3, 4),
    steps,
    costUsd,
    tokens: 0,
    firstRequest,
    path: `/s/${id}.jsonl`,
  } as SessionSummary;
}

test("/sessions columns line up whatever the widths of ids, step counts and costs", () => {
  const text = formatSessions([
    session("20260102-030400-abcdef", 3, 0.0012, "fix the parser"),
    session("20260102-030400-abcdef-resumed-copy", 1234, 12.5, "写一个测试"),
    session("x", 0, 0, ""),
  ]);
  const lines = text.split("\n");
  assert.equal(lines.length, 4);
  // Each header starts where its column starts; right-aligned numbers end where their header ends.
  const header = lines[0]!;
  const at = (h: string) => header.indexOf(h);
  for (const line of lines.slice(1)) {
    assert.match(line.slice(at("last used")), /^2026-01-02 03:04 /);
    assert.match(line.slice(0, at("steps") + "steps".length), /\d$/);
    assert.match(line.slice(0, at("cost") + "cost".length), /(\$\d+\.\d+|–)$/);
    assert.equal(line[at("first request") - 1], " ");
    assert.notEqual(line[at("first request")], " ");
  }
  assert.match(lines[1]!, / \$0\.0012 {2}fix the parser$/);
  assert.match(lines[2]!, /1234 +\$12\.50 {2}写一个测试$/);
  // No known price (or nothing spent): –, never "$0.0000".
  assert.match(lines[3]!, /^x +2026-01-02 03:04 +0 +– {2}\(no request\)$/);
});
