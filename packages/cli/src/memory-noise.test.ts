// What memory keeps must be worth keeping: a run the model never answered (a refused key) is no
// outcome; `hands memory show` shows this workspace's last context, never another's. Real bin,
// real SQLite file, the scripted model over HTTP.
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { startScriptedServer } from "@hands/llm";
import { type CliRun, cleanEnv, runHands } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-cli-memnoise-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

function hands(data: string, args: string[], cwd?: string): Promise<CliRun> {
  return runHands(args, cleanEnv(scratch, { HANDS_DATA_DIR: data }), cwd);
}

const run = (url: string, ws: string, task: string) => [
  "--base-url",
  url,
  "--api-key",
  "k",
  "--model",
  "m",
  "--cwd",
  ws,
  "--quiet",
  "--sandbox",
  "local",
  "--context-budget",
  "4000",
  task,
];

interface Exported {
  chunks: { scope: string; type: string; content: string; meta?: { kind?: string } }[];
}

test("a run the model never answered (401) stores no outcome; an answered one does", async () => {
  const data = mkdtempSync(join(scratch, "data-"));
  const ws = mkdtempSync(join(scratch, "ws-"));
  const server = await startScriptedServer([
    { status: 401 },
    { status: 401 },
    { status: 401 },
    { content: "hello there" },
  ]);
  try {
    for (let i = 0; i < 3; i++) {
      const r = await hands(data, run(server.url, ws, "hi"));
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /401/);
    }
    const ok = await hands(data, run(server.url, ws, "hi"));
    assert.equal(ok.code, 0, ok.stderr);
  } finally {
    await server.close();
  }
  const exp = await hands(data, ["memory", "export"], ws);
  assert.equal(exp.code, 0, exp.stderr);
  const outcomes = (JSON.parse(exp.stdout) as Exported).chunks.filter((c) => c.meta?.kind === "outcome");
  assert.deepEqual(
    outcomes.map((c) => c.content),
    ["Task: hi\nOutcome: done: hello there"],
    "only the answered run left an outcome",
  );
});

test("hands memory show: this workspace's last context, not another workspace's", async () => {
  const data = mkdtempSync(join(scratch, "data-"));
  const a = mkdtempSync(join(scratch, "ws-a-"));
  const b = mkdtempSync(join(scratch, "ws-b-"));
  const c = mkdtempSync(join(scratch, "ws-c-"));
  const server = await startScriptedServer([{ content: "answer in A" }, { content: "answer in B" }]);
  try {
    assert.equal((await hands(data, run(server.url, a, "task in A"))).code, 0);
    const showA = await hands(data, ["memory", "show"], a);
    assert.equal(showA.code, 0, showA.stderr);
    const scopeA = showA.stdout.match(/^last context: scope (\S+),/)?.[1];
    assert.ok(scopeA, showA.stdout);
    assert.equal((await hands(data, run(server.url, b, "task in B"))).code, 0);
  } finally {
    await server.close();
  }
  const again = await hands(data, ["memory", "show"], a);
  const inB = await hands(data, ["memory", "show"], b);
  const scopeA = again.stdout.match(/^last context: scope (\S+),/)?.[1];
  const scopeB = inB.stdout.match(/^last context: scope (\S+),/)?.[1];
  assert.ok(scopeA && scopeB, `${again.stdout}\n${inB.stdout}`);
  assert.notEqual(scopeA, scopeB, "A still shows its own context after B ran");
  assert.equal(again.stdout, (await hands(data, ["memory", "show", "--scope", scopeA], a)).stdout);
  const none = await hands(data, ["memory", "show"], c);
  assert.equal(none.code, 1);
  assert.match(none.stdout, /^no context recorded in this workspace yet/);
  // --scope still reaches any run's context, from anywhere.
  const byScope = await hands(data, ["memory", "show", "--scope", scopeB], c);
  assert.equal(byScope.code, 0);
  assert.equal(byScope.stdout, inB.stdout);
});
