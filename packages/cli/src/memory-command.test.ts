// End to end: a run with --context-budget keeps memory; the next related task in the same
// workspace starts with what the first learned; `hands memory …` inspects the file.
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { startScriptedServer } from "@hands/llm";
import { type CliRun, cleanEnv, runHands } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-cli-mem-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

function hands(args: string[], extra: Record<string, string> = {}, cwd?: string): Promise<CliRun> {
  return runHands(args, cleanEnv(scratch, extra), cwd);
}

test("--context-budget: memory, recall tool, cross-task learning, and hands memory", async () => {
  const ws = mkdtempSync(join(scratch, "ws-"));
  const server = await startScriptedServer([
    { content: "Run it.", toolCalls: [{ name: "run_command", arguments: { command: "echo unicorn-42" } }] },
    { content: "printed unicorn-42" },
    { content: "second task done" },
  ]);
  const common = ["--base-url", server.url, "--api-key", "k", "--model", "m", "--cwd", ws, "--quiet"];
  const first = await hands([...common, "--context-budget", "4000", "print the unicorn number"]);
  assert.equal(first.code, 0, first.stderr);
  const body = server.requests[0]!.body as { tools: { function: { name: string } }[] };
  assert.ok(body.tools.some((t) => t.function.name === "recall"));
  const second = await hands([...common, "--context-budget", "4000", "print the unicorn number again"]);
  await server.close();
  assert.equal(second.code, 0, second.stderr);
  const msgs = (server.requests[2]!.body as { messages: { content: string }[] }).messages;
  assert.match(msgs.map((m) => m.content).join("\n"), /Command that worked: echo unicorn-42/);

  const stats = await hands(["memory", "stats"]);
  assert.equal(stats.code, 0, stats.stderr);
  assert.ok((JSON.parse(stats.stdout) as { chunks: number }).chunks > 4);
  const ls = await hands(["memory", "ls", "--limit", "100"]);
  assert.match(ls.stdout, /tool_result/);
  const search = await hands(["memory", "search", "unicorn"]);
  assert.match(search.stdout, /unicorn-42/);
  const id = search.stdout.match(/^(m[0-9a-f]{10})/m)?.[1];
  assert.ok(id);
  const show = await hands(["memory", "show", id]);
  assert.match(show.stdout, /history:\n#\d+ .* created: /);
  const exp = await hands(["memory", "export"]);
  assert.equal((JSON.parse(exp.stdout) as { version: number }).version, 1);
  const bad = await hands(["memory", "nope"]);
  assert.equal(bad.code, 2);
});

test("hands memory show: the last context, each item's layer, importance, form, pointer and why", async () => {
  const ws = mkdtempSync(join(scratch, "ws-"));
  const data = join(scratch, "show-data");
  const server = await startScriptedServer([
    { toolCalls: [{ name: "run_command", arguments: { command: "seq 1 400" } }] },
    { toolCalls: [{ name: "run_command", arguments: { command: "seq 1000 1400" } }] },
    { toolCalls: [{ name: "run_command", arguments: { command: "echo quota-check" } }] },
    { content: "done" },
  ]);
  const common = ["--base-url", server.url, "--api-key", "k", "--model", "m", "--cwd", ws, "--quiet"];
  const env = { HANDS_DATA_DIR: data };
  const none = await hands(["memory", "show", "--db", join(data, "missing.db")], env);
  assert.equal(none.code, 2, "no memory file is a usage error");
  // A memory file no run has recorded a context in yet.
  const { Memory } = await import("@hands/memory");
  new Memory({ path: join(scratch, "empty.db") }).close();
  const empty = await hands(["memory", "show", "--db", join(scratch, "empty.db")], env);
  assert.equal(empty.code, 1);
  assert.match(empty.stdout, /^no context recorded in this workspace yet/);
  // 700 tokens: the two long outputs cannot both stay, so the run has a compaction point.
  const run = await hands(
    [...common, "--sandbox", "local", "--context-budget", "700", "check the quota"],
    env,
  );
  await server.close();
  assert.equal(run.code, 0, run.stderr);
  const show = await hands(["memory", "show"], env, ws);
  assert.equal(show.code, 0, show.stderr);
  const lines = show.stdout.trim().split("\n");
  assert.match(
    lines[0]!,
    /^last context: scope \S+, \S+, compaction point \d+, then append-only \(\d+ of 700 tokens\)$/,
  );
  const items = lines.slice(2, -1);
  assert.ok(items.length >= 4);
  for (const l of items)
    assert.match(
      l,
      /^m[0-9a-f]{10} +(working|short_term|long_term) +\d\.\d\d +(full|stand-in) +recall m[0-9a-f]{10} .+/,
    );
  assert.match(show.stdout, /the system prompt: always sent/);
  assert.match(show.stdout, /the task: always sent/);
  assert.match(show.stdout, /stand-in +recall (m[0-9a-f]{10}) +the latest step, its output shortened/);
  assert.match(show.stdout, /appended at step \d+, after compaction point \d+/);
  assert.match(lines.at(-1)!, /^\d+ items, \d+ tokens$/);
  // The stand-in's pointer recalls the whole output.
  const id = show.stdout.match(/stand-in +recall (m[0-9a-f]{10})/)![1]!;
  const one = await hands(["memory", "show", id], env);
  assert.match(one.stdout, /1000\\n1001\\n/);
});
