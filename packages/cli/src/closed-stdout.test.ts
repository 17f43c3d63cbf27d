// `hands memory export | head`, `hands memory show ID | head`: the reader of stdout goes away
// early (a real pipe, closed after the first bytes); the command ends quietly, no EPIPE trace.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { BIN, cleanEnv } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-cli-epipe-")));
after(() => rmSync(scratch, { recursive: true, force: true }));
const db = join(scratch, "memory.db");
let chunkId = "";

before(async () => {
  const { Memory } = await import("@hands/memory");
  const memory = new Memory({ path: db });
  // Far more than a pipe holds (64 KiB), so writing goes on after the reader has left.
  for (let i = 0; i < 8; i++) {
    const c = await memory.add({
      type: "tool_result",
      content: `line ${i} ${"x".repeat(120)}\n`.repeat(800),
    });
    chunkId = c.id;
  }
  memory.close();
});

/** Runs `hands args…`, reads the first bytes of its stdout, then closes the pipe. */
function readThenClose(
  args: string[],
): Promise<{ code: number | null; signal: string | null; stderr: string; first: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: cleanEnv(scratch),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let first = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.stdout.once("data", (d: Buffer) => {
      first = d.toString("utf8", 0, 40);
      child.stdout.destroy();
    });
    child.on("close", (code, signal) => resolve({ code, signal, stderr, first }));
  });
}

for (const [name, args] of [
  ["memory export", () => ["memory", "export", "--db", db]],
  ["memory show ID", () => ["memory", "show", chunkId, "--db", db]],
  ["memory ls", () => ["memory", "ls", "--limit", "1000", "--db", db]],
  ["--help", () => ["--help"]],
] as const) {
  test(`hands ${name} | head: exits quietly when the reader goes away`, async () => {
    const r = await readThenClose(args());
    assert.ok(r.first.length > 0, "it wrote before the pipe closed");
    assert.equal(r.signal, null);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /EPIPE|Error|at /);
    assert.equal(r.stderr, "");
  });
}
