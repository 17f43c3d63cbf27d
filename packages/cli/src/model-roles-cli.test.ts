// Model roles through the `hands` bin: `--models` (role=NAME pairs) and the config file's
// "models" reach the scripted model server under the right names — the user's config per role,
// the flag over it role by role — and a bad pair is an error before any request.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type ScriptedServer, startScriptedServer } from "@hands/llm";
import { cleanEnv, runHands, scriptedRunArgs } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-roles-cli-")));
after(() => rmSync(scratch, { recursive: true, force: true }));
const servers: ScriptedServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

async function run(args: string[], userConfig?: object) {
  const home = mkdtempSync(join(scratch, "case-"));
  const ws = join(home, "ws");
  mkdirSync(ws);
  writeFileSync(join(ws, "a.txt"), "AAA\n");
  if (userConfig) {
    mkdirSync(join(home, "config", "hands"), { recursive: true });
    writeFileSync(join(home, "config", "hands", "config.json"), JSON.stringify(userConfig));
  }
  let turn = 0;
  const server = await startScriptedServer(() =>
    turn++ === 0 && args.some((a) => a.startsWith("fix"))
      ? { toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }] }
      : { content: "ok" },
  );
  servers.push(server);
  const r = await runHands(
    [...scriptedRunArgs(server.url, ws), "--sandbox", "local", "--no-memory", ...args],
    cleanEnv(home),
  );
  const models = server.requests
    .filter((q) => q.path.endsWith("/chat/completions"))
    .map((q) => q.body.model as string);
  return { r, models };
}

test("--models: a plain-chat request goes to the chat model, code work to the executor", async () => {
  const chat = await run(["--models", "chat=small-model,executor=code-model", "hello there, how are you?"]);
  assert.equal(chat.r.code, 0, chat.r.stderr);
  assert.deepEqual(chat.models, ["small-model"]);
  const code = await run(["--models", "chat=small-model,executor=code-model", "fix the bug in a.txt"]);
  assert.equal(code.r.code, 0, code.r.stderr);
  assert.deepEqual(code.models, ["code-model", "code-model"]);
  const choices = code.r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === "model_choice");
  assert.deepEqual(
    choices.map((c) => [c.model, c.role]),
    [
      ["code-model", "executor"],
      ["code-model", "executor"],
    ],
  );
});

test('the config file\'s "models" apply role by role, the flag over them', async () => {
  const cfg = { models: { chat: "cfg-chat", executor: "cfg-code" } };
  const fromFile = await run(["hello there"], cfg);
  assert.equal(fromFile.r.code, 0, fromFile.r.stderr);
  assert.deepEqual(fromFile.models, ["cfg-chat"]);
  const flagWins = await run(["--models", "chat=flag-chat", "hello there"], cfg);
  assert.deepEqual(flagWins.models, ["flag-chat"]);
  const keepsFile = await run(["--models", "chat=flag-chat", "fix the bug in a.txt"], cfg);
  assert.deepEqual(keepsFile.models, ["cfg-code", "cfg-code"]);
});

test("a --models pair that is not role=NAME, or an unknown role, is an error before any request", async () => {
  const bad = await run(["--models", "chat", "hello"]);
  assert.equal(bad.r.code, 2, bad.r.stderr);
  assert.match(bad.r.stderr, /--models: "chat" is not role=MODEL/);
  assert.deepEqual(bad.models, []);
  const typo = await run(["--models", "exectuor=x", "hello"]);
  assert.notEqual(typo.r.code, 0);
  assert.match(typo.r.stderr, /unknown role "exectuor" \(did you mean "executor"\?\)/);
  assert.deepEqual(typo.models, []);
});
