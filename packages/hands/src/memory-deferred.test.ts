// A memory whose file does not exist yet is opened only after the first request has left (a
// faster start): what the model gets, what memory holds afterwards and the events of the run
// must be exactly those of a memory that was open from the start.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { AgentEvent } from "@hands/agent";
import { type ScriptedServer, type ServerScript, startScriptedServer } from "@hands/llm";
import { Memory } from "@hands/memory";
import { type HandsSession, openSession } from "./session.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-memory-deferred-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

const chat = (s: ScriptedServer) => s.requests.filter((r) => r.path.endsWith("/chat/completions"));

async function session(server: ScriptedServer, workspace: string, dataDir: string, scope: string) {
  const warnings: string[] = [];
  const opened = await openSession({
    workspace,
    flags: { baseUrl: server.url, model: "scripted-model", apiKey: "sk-test", sandbox: "local" },
    env: {},
    configFiles: false,
    approvalDefault: "auto",
    save: false,
    dataDir,
    memoryScope: scope,
    tracePath: join(scratch, `${scope}-${Math.random().toString(36).slice(2)}.jsonl`),
    report: (level, text) => {
      if (level === "warning") warnings.push(text);
    },
  });
  return { session: opened, warnings };
}

async function runTask(s: HandsSession, task: string) {
  const events: AgentEvent[] = [];
  const result = await s.run(task, { onEvent: (e) => events.push(e) });
  await s.close();
  return { result, events };
}

/** Two steps: a tool call, then the answer. */
const script = (): ServerScript => [
  { toolCalls: [{ name: "list_dir", arguments: {} }] },
  { content: "done" },
];

function chunksOf(dataDir: string, scope: string) {
  const memory = new Memory({ path: join(dataDir, "memory.db"), scope });
  try {
    return memory.store
      .list({ scope, order: "oldest" })
      .map((c) => [c.type, c.layer, c.content, c.importance]);
  } finally {
    memory.close();
  }
}

const moves = (events: AgentEvent[]) =>
  events.flatMap((e) =>
    e.type === "memory" ? [[e.step, e.action, "chunkType" in e ? e.chunkType : undefined]] : [],
  );

test("deferred memory: the requests, the memory and the events are those of a memory open from the start", async () => {
  const workspace = join(scratch, "ws");
  mkdirSync(workspace);
  writeFileSync(join(workspace, "a.txt"), "a\n");

  // Open from the start: the memory file exists (an earlier task in another workspace made it).
  const earlyData = join(scratch, "data-early");
  const other = join(scratch, "other");
  mkdirSync(other);
  const first = await startScriptedServer([{ content: "ok" }]);
  const warm = await session(first, other, earlyData, "earlier");
  await runTask(warm.session, "say ok");
  await first.close();
  assert.ok(existsSync(join(earlyData, "memory.db")));
  const eagerServer = await startScriptedServer(script());
  const eager = await session(eagerServer, workspace, earlyData, "s");
  assert.equal(eager.session.memory?.unsettled, false, "an existing file is opened at once");
  const eagerRun = await runTask(eager.session, "list the folder");
  await eagerServer.close();

  // Deferred: no memory file yet.
  const lateData = join(scratch, "data-late");
  const lateServer = await startScriptedServer(script());
  const late = await session(lateServer, workspace, lateData, "s");
  assert.equal(late.session.memory?.unsettled, true);
  assert.ok(!existsSync(join(lateData, "memory.db")), "not made before the first request");
  const lateRun = await runTask(late.session, "list the folder");
  await lateServer.close();

  assert.equal(lateRun.result.status, "done");
  assert.equal(eagerRun.result.status, "done");
  assert.deepEqual(late.warnings, eager.warnings);
  const bodies = (s: ScriptedServer) => chat(s).map((r) => r.body);
  assert.equal(bodies(lateServer).length, 2);
  assert.deepEqual(bodies(lateServer), bodies(eagerServer));
  // The first request's memory moves (system prompt and task stored) are in the run's events,
  // at step 1 and before the result, as with an open memory.
  assert.deepEqual(moves(lateRun.events), moves(eagerRun.events));
  assert.deepEqual(moves(lateRun.events).slice(0, 2), [
    [1, "created", "system_event"],
    [1, "created", "user_input"],
  ]);
  assert.equal(lateRun.events.at(-1)?.type, "result");
  const late_ = chunksOf(lateData, "s");
  assert.ok(late_.length >= 4, JSON.stringify(late_));
  assert.deepEqual(late_, chunksOf(earlyData, "s"));
});

test("deferred memory is made while the model answers the first request, not after the answer", async () => {
  const workspace = join(scratch, "ws-timing");
  mkdirSync(workspace);
  const data = join(scratch, "data-timing");
  const file = join(data, "memory.db");
  let madeBeforeAnswer = false;
  // The answer waits (up to 5 s) for the memory file: were it made only once the answer came,
  // the wait would run out.
  const server = await startScriptedServer(async () => {
    for (let i = 0; i < 500 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 10));
    madeBeforeAnswer = existsSync(file);
    return { content: "done" };
  });
  const { session: s } = await session(server, workspace, data, "t");
  assert.ok(!existsSync(file));
  const { result } = await runTask(s, "say done");
  await server.close();
  assert.equal(result.status, "done");
  assert.ok(madeBeforeAnswer, "the memory file was made while the request waited for its answer");
  // The first request was stored as an open memory stores it.
  assert.deepEqual(
    chunksOf(data, "t").map(([type]) => type),
    ["system_event", "user_input"],
  );
});

test("a deferred memory file that cannot be made is a warning; the run goes on without memory", async () => {
  const workspace = join(scratch, "ws-broken");
  mkdirSync(workspace);
  const blocker = join(scratch, "not-a-folder");
  writeFileSync(blocker, "a file where the data folder's parent should be\n");
  const server = await startScriptedServer(script());
  const { session: s, warnings } = await session(server, workspace, join(blocker, "data"), "b");
  const { result, events } = await runTask(s, "list the folder");
  await server.close();
  assert.equal(result.status, "done");
  assert.equal(chat(server).length, 2);
  assert.deepEqual(moves(events), []);
  assert.ok(
    warnings.some((w) =>
      /^memory: cannot open the memory file .*memory\.db: .*; this session goes on without memory$/.test(w),
    ),
    warnings.join("\n"),
  );
});
