// Memory in one-shot runs, end to end: a real `hands` process, a real SQLite file under the
// data directory, a scripted model over HTTP.
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type ScriptedServer, startScriptedServer } from "@hands/llm";
import { trustFolder } from "@hands/sdk/root";
import { type CliRun, cleanEnv, runHands } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-cli-memrun-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

function hands(args: string[], extra: Record<string, string> = {}): Promise<CliRun> {
  return runHands(args, cleanEnv(scratch, extra));
}

const flags = (server: ScriptedServer, ws: string) => [
  "--base-url",
  server.url,
  "--api-key",
  "k",
  "--model",
  "m",
  "--cwd",
  ws,
];

const jsonLines = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

test("memory moves are typed events in --json output and in the trace, before the result", async () => {
  const ws = mkdtempSync(join(scratch, "ws-"));
  const server = await startScriptedServer([
    { toolCalls: [{ name: "list_dir", arguments: {} }] },
    { toolCalls: [{ name: "recall", arguments: { id: "list_dir" } }] },
    { content: "done" },
  ]);
  const trace = join(scratch, "moves.jsonl");
  const r = await hands([
    ...flags(server, ws),
    "--json",
    "--trace",
    trace,
    "--context-budget",
    "3000",
    "list the folder",
  ]);
  await server.close();
  assert.equal(r.code, 0, r.stderr);
  const events = jsonLines(r.stdout);
  assert.equal(events.at(-1).type, "result");
  const moves = events.filter((e) => e.type === "memory");
  const created = moves.filter((e) => e.action === "created");
  // The system prompt and the task at step 1, then the call and its result.
  assert.deepEqual(
    created.slice(0, 2).map((e) => [e.chunkType, e.step]),
    [
      ["system_event", 1],
      ["user_input", 1],
    ],
  );
  assert.ok(created.some((e) => e.chunkType === "tool_result"));
  for (const e of moves) {
    assert.match(e.chunkId, /^m[0-9a-f]{10}$/);
    assert.ok(Number.isInteger(e.seq) && e.seq > 0);
    assert.ok(e.reason.length > 0);
    assert.equal(typeof e.time, "number");
  }
  // The recall search by words is a memory move too (the chunks it returned were accessed).
  assert.ok(moves.some((e) => e.action === "accessed" && /retrieved for "list_dir"/.test(e.reason)));
  // Sequence numbers only grow: the stream follows the memory's log.
  const seqs = moves.map((e) => e.seq);
  assert.deepEqual(
    seqs,
    [...seqs].sort((a, b) => a - b),
  );
  const traced = jsonLines(readFileSync(trace, "utf8"));
  assert.deepEqual(
    traced.filter((e) => e.type === "memory").map((e) => e.seq),
    seqs,
  );
  assert.equal(traced.at(-1).type, "result");
});

/** A task whose second step uses what the first read (the port) and whose third uses nothing. */
async function portTask(): Promise<{ ws: string; server: ScriptedServer }> {
  const ws = mkdtempSync(join(scratch, "ws-"));
  writeFileSync(join(ws, "notes.txt"), "The deploy port is 7461 for service_alpha.\n");
  const server = await startScriptedServer([
    { toolCalls: [{ name: "read_file", arguments: { path: "notes.txt" } }] },
    {
      content: "Port 7461 it is.",
      toolCalls: [{ name: "write_file", arguments: { path: "port.cfg", content: "port=7461\n" } }],
    },
    { toolCalls: [{ name: "list_dir", arguments: {} }] },
    { content: "done" },
  ]);
  return { ws, server };
}

test("feedback: a tool result the model's next step references is marked used", async () => {
  const { ws, server } = await portTask();
  // The history fits the default budget: requests only append, and the steps are stored (and
  // judged) in one batch when the run ends — so the memory file, not the run's stream, shows it.
  const r = await hands([...flags(server, ws), "--json", "configure the port"]);
  await server.close();
  assert.equal(r.code, 0, r.stderr);
  const ls = await hands(["memory", "ls", "--limit", "200"]);
  // This run's session: the scope of its task (the file also holds other tests' runs).
  const scope = ls.stdout.match(
    /^m[0-9a-f]{10} +\S+ +user_input +\S+ +\S+ +(\S+) +configure the port$/m,
  )?.[1];
  assert.ok(scope, ls.stdout);
  const results = [...ls.stdout.matchAll(/^(m[0-9a-f]{10}) +\S+ +tool_result +\S+ +\S+ +(\S+) /gm)]
    .filter((m) => m[2] === scope)
    .map((m) => m[1]!);
  assert.equal(results.length, 3, ls.stdout);
  const used: string[] = [];
  for (const id of results) {
    const show = await hands(["memory", "show", id]);
    if (/accessed: referenced by a later step/.test(show.stdout)) used.push(show.stdout);
  }
  assert.equal(used.length, 1, "the read_file result, and only it, was used");
  assert.match(used[0]!, /7461/);
});

test("feedback on the run's stream when memory compacts: the used result is marked as the run goes", async () => {
  const { ws, server } = await portTask();
  // A budget this small makes every step a compaction point: each step's messages are stored
  // as it goes, and the memory moves are on the --json stream.
  const r = await hands([...flags(server, ws), "--json", "--context-budget", "150", "configure the port"]);
  await server.close();
  assert.equal(r.code, 0, r.stderr);
  const moves = jsonLines(r.stdout).filter((e) => e.type === "memory");
  const results = moves.filter((e) => e.action === "created" && e.chunkType === "tool_result");
  const used = moves.filter((e) => e.action === "accessed" && e.reason === "referenced by a later step");
  assert.ok(results.length >= 2, JSON.stringify(moves.map((m) => m.action)));
  assert.deepEqual(
    used.map((e) => e.chunkId),
    [results[0].chunkId],
    "the read_file result, and only it, was used",
  );
  const show = await hands(["memory", "show", results[0].chunkId]);
  assert.match(show.stdout, /7461/);
  assert.match(show.stdout, /accessed: referenced by a later step/);
});

test("repository facts learned after a run start the next task; a changed fact replaces the old one", async () => {
  const ws = mkdtempSync(join(scratch, "ws-"));
  const pkg = (test: string) =>
    JSON.stringify({ name: "shop", scripts: { test, build: "tsc -b" }, workspaces: ["packages/*"] });
  writeFileSync(join(ws, "package.json"), pkg("node --test"));
  writeFileSync(join(ws, "package-lock.json"), "{}");
  writeFileSync(join(ws, "tsconfig.json"), "{}");
  writeFileSync(join(ws, "pyproject.toml"), "[project]\nname = 'x'\n");
  writeFileSync(join(ws, "Makefile"), "test:\n\t@echo tests-ok\nbuild: deps\n\t@echo built\nX := 1\n");
  mkdirSync(join(ws, "src"));
  const server = await startScriptedServer([
    { toolCalls: [{ name: "run_command", arguments: { command: "make test" } }] },
    { content: "tests pass" },
    { content: "second" },
    { content: "third" },
  ]);
  const run = (task: string) => hands([...flags(server, ws), "--quiet", "--context-budget", "8000", task]);
  assert.equal((await run("run the shop tests")).code, 0);
  const second = await run("run the shop tests again");
  assert.equal(second.code, 0, second.stderr);
  const sent = (server.requests[2]!.body as { messages: { content: string }[] }).messages
    .map((m) => m.content)
    .join("\n");
  assert.match(sent, /What earlier tasks in this workspace taught/);
  for (const fact of [
    "Languages: TypeScript, Python.",
    "Package manager: npm (package-lock.json); package shop; workspaces.",
    "package.json scripts (npm run NAME): test = node --test; build = tsc -b.",
    "Build files: Makefile (targets: test, build), pyproject.toml, tsconfig.json.",
    "Test command that worked: make test",
  ])
    assert.ok(sent.includes(fact), `the next task starts with: ${fact}\n---\n${sent}`);

  writeFileSync(join(ws, "package.json"), pkg("vitest run"));
  assert.equal((await run("run the shop tests once more")).code, 0);
  await server.close();
  const exp = await hands(["memory", "export", "--scope", `ws:${ws}`]);
  const facts = (JSON.parse(exp.stdout) as { chunks: { content: string; layer: string; meta: any }[] })
    .chunks;
  const byKey = (key: string, live: boolean) =>
    facts.filter((c) => c.meta.key === key && (c.layer === "archived") !== live).map((c) => c.content);
  assert.deepEqual(byKey("scripts", true), [
    "package.json scripts (npm run NAME): test = vitest run; build = tsc -b.",
  ]);
  assert.deepEqual(byKey("scripts", false), [
    "package.json scripts (npm run NAME): test = node --test; build = tsc -b.",
  ]);
  assert.equal(byKey("languages", true).length, 1, "an unchanged fact is not stored twice");
  assert.equal(facts.filter((c) => c.meta.kind === "outcome").length, 3, "one outcome per task");
});

function projectConfig(ws: string, memory: unknown): void {
  mkdirSync(join(ws, ".hands"), { recursive: true });
  writeFileSync(join(ws, ".hands", "config.json"), JSON.stringify({ memory }));
  // Embeddings and lifecycle apply from a trusted folder only.
  trustFolder(ws, cleanEnv(scratch));
}

interface Exported {
  chunks: { id: string; scope: string; layer: string; content: string; type: string }[];
}

test("lifecycle: maintenance runs per the configured policy, at most once per interval per memory file", async () => {
  const ws = mkdtempSync(join(scratch, "ws-"));
  const data = mkdtempSync(join(scratch, "data-lifecycle-"));
  const env = { HANDS_DATA_DIR: data };
  // Everything idle at once is decayed; idle long-term chunks below 1 are archived.
  const policy = { idleAfterHours: 0, idleDecay: 0.5, archiveAfterDays: 0, archiveBelow: 1 };
  projectConfig(ws, { enabled: true, contextBudget: 3000, lifecycle: { ...policy, maintainEveryHours: 24 } });
  const server = await startScriptedServer(() => ({ content: "ok" }));
  const run = (task: string) => hands([...flags(server, ws), "--quiet", task], env);
  const exported = async () =>
    (JSON.parse((await hands(["memory", "export"], env)).stdout) as Exported).chunks;

  assert.equal((await run("first task")).code, 0);
  const stamp = join(data, "memory.db.maintained");
  const first = JSON.parse(readFileSync(stamp, "utf8"));
  assert.ok(first.archived > 0 && first.decayed >= first.archived, JSON.stringify(first));
  const afterFirst = await exported();
  const archived = afterFirst.filter((c) => c.layer === "archived");
  assert.equal(archived.length, first.archived);
  const show = await hands(["memory", "show", archived[0]!.id], env);
  assert.match(show.stdout, /scored: idle decay after/);
  assert.match(show.stdout, /archived: idle and importance 0\.\d+ < 1/);

  // Not due again for 24 hours: the second run's chunks stay where they are.
  const stampTime = statSync(stamp).mtimeMs;
  assert.equal((await run("second task")).code, 0);
  assert.equal(statSync(stamp).mtimeMs, stampTime);
  const afterSecond = await exported();
  assert.equal(afterSecond.filter((c) => c.layer === "archived").length, archived.length);

  // Due at every run now, and archived chunks are deleted: the first run's are gone.
  projectConfig(ws, {
    enabled: true,
    contextBudget: 3000,
    lifecycle: { ...policy, maintainEveryHours: 0, deleteArchivedAfterDays: 0 },
  });
  assert.equal((await run("third task")).code, 0);
  const third = JSON.parse(readFileSync(stamp, "utf8"));
  assert.equal(third.deleted, archived.length);
  const ids = new Set((await exported()).map((c) => c.id));
  assert.ok(archived.every((c) => !ids.has(c.id)));
  await server.close();

  projectConfig(ws, { lifecycle: { idleDecay: 3 } });
  const bad = await run("x");
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /config\.json: memory\.lifecycle\.idleDecay must be a number from 0 to 1/);
});

test("embeddings from an /embeddings endpoint; a failing endpoint warns and loses nothing", async () => {
  const ws = mkdtempSync(join(scratch, "ws-"));
  const data = mkdtempSync(join(scratch, "data-emb-"));
  let failFrom = Number.POSITIVE_INFINITY;
  const server = await startScriptedServer({
    script: () => ({ content: "ok" }),
    embeddings: { dimensions: 48, status: (i) => (i >= failFrom ? 503 : undefined) },
  });
  const env = { HANDS_DATA_DIR: data, EMB_KEY: "sk-emb" };
  projectConfig(ws, {
    contextBudget: 3000,
    embeddings: { baseUrl: server.url, model: "emb/test-1", apiKeyEnv: "EMB_KEY" },
  });
  const run = (task: string) => hands([...flags(server, ws), "--quiet", task], env);
  const embeddingCalls = () => server.requests.filter((r) => r.path === "/v1/embeddings");

  const ok = await run("remember the zebra-crossing code 8812");
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stderr, "");
  assert.ok(embeddingCalls().length > 3);
  assert.equal(embeddingCalls()[0]!.headers.authorization, "Bearer sk-emb");
  // One memory file per embedding model.
  assert.ok(existsSync(join(data, "memory.emb_test-1.db")));
  assert.ok(!existsSync(join(data, "memory.db")));
  // hands memory uses the configured file and embedder.
  const search = await runHands(
    ["memory", "search", "zebra-crossing code"],
    cleanEnv(scratch, { HANDS_DATA_DIR: data, EMB_KEY: "k" }),
    ws,
  );
  assert.equal(search.code, 0, search.stderr);
  assert.match(search.stdout, /8812/);

  // Down after the size probe: chunks are stored without vectors, with one warning.
  failFrom = embeddingCalls().length + 1;
  const degraded = await run("the falcon code is 4471");
  assert.equal(degraded.code, 0, degraded.stderr);
  const warnings = degraded.stderr.match(
    /embeddings endpoint .* failed \(.*503.*\); chunks are stored without vectors/g,
  );
  assert.equal(warnings?.length, 1, degraded.stderr);

  // Down from the start: the run uses the built-in embeddings and its own file.
  failFrom = 0;
  const fallback = await run("the heron code is 5190");
  assert.equal(fallback.code, 0, fallback.stderr);
  assert.match(fallback.stderr, /using the built-in hashed embeddings \(.*memory\.db\) for this run/);
  await server.close();

  const texts = async (file: string) => {
    const r = await hands(["memory", "export", "--db", join(data, file)], env);
    return (JSON.parse(r.stdout) as Exported).chunks.map((c) => c.content).join("\n");
  };
  assert.match(await texts("memory.emb_test-1.db"), /falcon code is 4471/);
  assert.match(await texts("memory.db"), /heron code is 5190/);
});

test("a memory file that is not a database is a clear error, exit 2", async () => {
  const data = mkdtempSync(join(scratch, "data-bad-"));
  writeFileSync(join(data, "memory.db"), "this is not SQLite ".repeat(100));
  const server = await startScriptedServer([{ content: "never" }]);
  const r = await hands([...flags(server, mkdtempSync(join(scratch, "ws-"))), "--memory", "x"], {
    HANDS_DATA_DIR: data,
  });
  await server.close();
  assert.equal(r.code, 2);
  assert.match(r.stderr, /cannot open the memory file .*memory\.db: /);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});

test("memory is on by default; --no-memory runs without it", async () => {
  const ws = mkdtempSync(join(scratch, "ws-"));
  const server = await startScriptedServer([{ content: "plain" }, { content: "plain again" }]);
  const on = await hands([...flags(server, ws), "--json", "hello"]);
  assert.equal(on.code, 0, on.stderr);
  const created = jsonLines(on.stdout).filter((e) => e.type === "memory" && e.action === "created");
  assert.ok(created.length >= 2, "the system prompt and the task went into memory");
  // The recall tool is offered with memory on, not without it.
  const off = await hands([...flags(server, ws), "--json", "--no-memory", "hello"]);
  await server.close();
  assert.equal(off.code, 0, off.stderr);
  assert.ok(jsonLines(off.stdout).every((e) => e.type !== "memory"));
  const [withMemory, without] = server.requests
    .filter((r) => r.path.endsWith("/chat/completions"))
    .map((r) => (r.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name));
  assert.ok(withMemory.includes("recall"));
  assert.ok(!without.includes("recall"));
});

test("after a context overflow, memory assembles within the model's window: the loop's cutting is not needed", async () => {
  const FILE = Array.from(
    { length: 60 },
    (_, i) => `def function_${i}(x):  # line ${i + 1} of the sample\n`,
  ).join("");
  const WINDOW = 9000;
  const STEPS = 45;
  const run = async (extra: string[]) => {
    const ws = mkdtempSync(join(scratch, "ws-"));
    writeFileSync(join(ws, "sample.py"), FILE);
    const server = await startScriptedServer({
      script: (_req, index) =>
        index + 1 < STEPS
          ? { toolCalls: [{ id: `call_${index}`, name: "read_file", arguments: { path: "sample.py" } }] }
          : { content: "All read: the final answer." },
      contextWindow: { tokens: WINDOW },
    });
    const r = await hands([
      ...flags(server, ws),
      "--json",
      "--max-steps",
      "60",
      ...extra,
      "read sample.py again and again",
    ]);
    await server.close();
    assert.equal(r.code, 0, r.stderr);
    const result = jsonLines(r.stdout).at(-1);
    assert.equal(result.status, "done", result.reason);
    assert.equal(result.answer, "All read: the final answer.");
    assert.equal(result.steps, STEPS);
    const chats = server.requests
      .filter((q) => q.path.endsWith("/chat/completions"))
      .map((q) => ({
        tokens: JSON.stringify(q.body).length / 4,
        messages: q.body.messages as { role: string; content: string }[],
      }));
    return { server, chats };
  };
  const cutByLoop = (m: { content: string }) =>
    /left out to fit the model's context window|\[output of read_file/.test(m.content ?? "");

  const memory = await run([]);
  assert.ok(memory.server.overflows >= 1, "the window was hit");
  assert.ok(memory.server.overflows <= 2, `${memory.server.overflows} overflows`);
  // Requests after the first rejection: the first of them (that step's retry) is the loop's
  // own shortening; from the next step on, memory's context fits as it is.
  const first = memory.chats.findIndex((c) => c.tokens > WINDOW);
  const later = memory.chats.slice(first + 2);
  assert.ok(later.length >= 10, `${later.length} requests after the overflow`);
  for (const c of later) {
    assert.ok(c.tokens <= WINDOW, `a request of ${c.tokens} tokens went out`);
    assert.ok(!c.messages.some(cutByLoop), "the loop had to cut memory's context");
  }
  // Memory left steps out (its own choice): fewer results are sent than the run has made.
  const last = later.at(-1)!;
  assert.ok(last.messages.filter((m) => m.role === "tool").length < STEPS - 1 - 10);

  // The control: without memory, the same run only fits because the loop cuts it.
  const plain = await run(["--no-memory"]);
  assert.ok(plain.chats.slice(-10).every((c) => c.messages.some(cutByLoop)));
});

test("a reasoning model's thinking: kept in memory as its own reasoning, sent back within the turn, never a workspace fact", async () => {
  const ws = mkdtempSync(join(scratch, "ws-"));
  writeFileSync(join(ws, "a.txt"), "x");
  const THOUGHT = "I suspect the port is PORTGUESS_9123, though I have not checked anything yet.";
  const server = await startScriptedServer([
    { reasoning: THOUGHT, toolCalls: [{ name: "list_dir", arguments: {} }] },
    { reasoning: "Still thinking PORTGUESS_9123.", content: "One file: a.txt." },
    { content: "second task done" },
  ]);
  const run = (task: string) =>
    hands([
      "--base-url",
      server.url,
      "--api-key",
      "k",
      "--model",
      "deepseek-chat",
      "--cwd",
      ws,
      "--quiet",
      task,
    ]);
  assert.equal((await run("list the folder")).code, 0);
  assert.equal((await run("list the folder again")).code, 0);
  await server.close();
  const chats = server.requests.filter((q) => q.path.endsWith("/chat/completions"));
  // Within the tool loop, the reply's reasoning goes back as the server requires it.
  const loop = chats[1]!.body.messages.find((m: { role: string; tool_calls?: unknown }) => m.tool_calls);
  assert.equal(loop.reasoning_content, THOUGHT);
  // The next task starts with what the workspace taught — never the model's guesses.
  assert.doesNotMatch(JSON.stringify(chats[2]!.body), /PORTGUESS/);
  const all = JSON.parse((await hands(["memory", "export"])).stdout) as Exported;
  const thoughts = all.chunks.filter((c) => c.content.includes("PORTGUESS_9123"));
  // The tool-loop reply's thinking (a one-shot run's final reply is not staged: no step follows it).
  assert.ok(
    thoughts.some((c) => c.content === THOUGHT),
    JSON.stringify(thoughts),
  );
  for (const c of thoughts) {
    assert.equal(c.type, "agent_reasoning");
    assert.ok(!c.scope.startsWith("ws:"), `thinking in cross-task memory: ${c.scope}`);
  }
});
