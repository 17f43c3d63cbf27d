// The data folder is private: an old world-readable one is repaired at start-up, and every file
// a real run writes there (traces, sessions, outputs, audit logs, checkpoints, memory.db and
// its WAL files) is 0600 in 0700 folders.
import assert from "node:assert/strict";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, test } from "node:test";
import { startScriptedServer } from "@hands/llm";
import { SqliteStore } from "@hands/memory";
import { secureDataDir } from "@hands/sdk/root";
import { cleanEnv, runHands } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-private-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

const mode = (p: string) => lstatSync(p).mode & 0o7777;

/** Every folder and file under `dir` whose mode lets anyone but the owner in. */
function loose(dir: string): string[] {
  const out: string[] = [];
  const visit = (p: string) => {
    const st = lstatSync(p);
    if (st.isSymbolicLink()) return;
    if ((st.isDirectory() && (st.mode & 0o777) !== 0o700) || (st.mode & 0o077) !== 0)
      out.push(`${relative(dir, p) || "."} ${(st.mode & 0o7777).toString(8)}`);
    if (st.isDirectory()) for (const n of readdirSync(p)) visit(join(p, n));
  };
  visit(dir);
  return out;
}

test("an existing 0755/0644 data folder is repaired: all of it the first time, then the top and its children", () => {
  const data = join(scratch, "old");
  const outside = join(scratch, "outside.txt");
  writeFileSync(outside, "not ours", { mode: 0o644 });
  for (const d of ["traces", "sessions", "checkpoints/objects/ab"])
    mkdirSync(join(data, d), { recursive: true });
  for (const f of [
    "traces/r1.jsonl",
    "sessions/s1.jsonl",
    "audit.jsonl",
    "memory.db",
    "memory.db-wal",
    "memory.db-shm",
  ])
    writeFileSync(join(data, f), "x", { mode: 0o644 });
  writeFileSync(join(data, "checkpoints/objects/ab/cdef"), "blob", { mode: 0o444 });
  symlinkSync(outside, join(data, "history"));
  for (const d of ["", "traces", "sessions", "checkpoints", "checkpoints/objects", "checkpoints/objects/ab"])
    chmodSync(join(data, d), 0o755);
  assert.ok(loose(data).length >= 10);

  const first = secureDataDir(data);
  assert.equal(first.skipped, undefined);
  assert.deepEqual(loose(data), []);
  assert.equal(mode(join(data, "memory.db-wal")), 0o600);
  assert.equal(mode(join(data, "checkpoints/objects/ab/cdef")), 0o400, "a read-only file stays read-only");
  assert.equal(mode(outside), 0o644, "a symlink is not followed");
  assert.equal(mode(join(data, ".private-modes")), 0o600);

  // Later runs look at the top only: a loose deep file stays (behind 0700 folders), a loose child is fixed.
  chmodSync(join(data, "traces/r1.jsonl"), 0o644);
  chmodSync(join(data, "audit.jsonl"), 0o644);
  chmodSync(data, 0o755);
  writeFileSync(join(data, "notes.txt"), "the user's", { mode: 0o644 });
  const second = secureDataDir(data);
  assert.deepEqual(second.changed.map((p) => relative(data, p)).sort(), ["", "audit.jsonl"]);
  assert.equal(mode(join(data, "traces/r1.jsonl")), 0o644);
  assert.equal(mode(join(data, "notes.txt")), 0o644, "what Hands did not make is left alone");
});

test("a missing folder is made 0700; a folder that is not Hands' own is not changed", () => {
  const fresh = join(scratch, "fresh", "hands");
  secureDataDir(fresh);
  assert.equal(mode(fresh), 0o700);

  // Say HANDS_DATA_DIR points at a shared folder (or the home folder).
  const shared = join(scratch, "shared");
  mkdirSync(shared, { mode: 0o755 });
  chmodSync(shared, 0o755);
  writeFileSync(join(shared, ".bashrc"), "x", { mode: 0o644 });
  writeFileSync(join(shared, "traces"), "x", { mode: 0o644 });
  const r = secureDataDir(shared);
  assert.match(r.skipped ?? "", /holds files Hands did not make \(\.bashrc\)/);
  assert.equal(mode(shared), 0o755);
  assert.equal(mode(join(shared, "traces")), 0o644);
});

test("memory.db and its -wal and -shm files are 0600 from the start", () => {
  const dir = join(scratch, "mem");
  const store = new SqliteStore({ path: join(dir, "memory.db"), dimensions: 8 });
  try {
    for (const f of ["memory.db", "memory.db-wal", "memory.db-shm"]) {
      assert.ok(existsSync(join(dir, f)), f);
      assert.equal(mode(join(dir, f)), 0o600, f);
    }
    assert.equal(mode(dir), 0o700);
  } finally {
    store.close();
  }
});

test("a real session writes nothing anyone else can read; an old folder is repaired at start", async () => {
  const home = join(scratch, "run");
  const ws = join(home, "ws");
  const data = join(home, "data");
  mkdirSync(ws, { recursive: true });
  // Left by an older Hands: world-readable.
  mkdirSync(join(data, "traces"), { recursive: true });
  writeFileSync(join(data, "traces", "old.jsonl"), "{}\n", { mode: 0o644 });
  chmodSync(data, 0o755);
  chmodSync(join(data, "traces"), 0o755);
  const server = await startScriptedServer([
    { content: "", toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "a" } }] },
    // Long output: saved in full under <data>/outputs.
    { content: "", toolCalls: [{ name: "run_command", arguments: { command: "seq 1 40000" } }] },
    { content: "done" },
  ]);
  try {
    const env = cleanEnv(home, { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "k" });
    const r = await runHands(["-i", "--memory", "--model", "m"], env, ws, "write a and count\ny\ny\n");
    assert.equal(r.code, 0, r.stderr);
    for (const p of [
      "traces",
      "sessions",
      "outputs",
      "checkpoints",
      "audit.jsonl",
      "sandbox-audit.jsonl",
      "memory.db",
    ])
      assert.ok(existsSync(join(data, p)), `${p} was written`);
    assert.deepEqual(loose(data), []);
    assert.equal(statSync(join(data, "traces", "old.jsonl")).mode & 0o777, 0o600);
  } finally {
    await server.close();
  }
});
