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

function hands(args: string[], extra: Record<string, string> = {}): Promise<CliRun> {
  return runHands(args, cleanEnv(scratch, extra));
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
