// End to end: the repository map the model sees. The real `hands` command runs against a
// scripted model server (the real OpenAI wire format); the server records each request body, and
// the test reads what the model was sent: the map before the task in the first request's user
// message (not in the system prompt), and the repo_map tool's result in the request after the
// model called it — with the map gone from that request, since a tool has now shown the code.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { startScriptedServer } from "@hands/llm";
import { cleanEnv, runHands } from "./testing/cli-process.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-repomap-e2e-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

const FILES: Record<string, string> = {
  "src/tokenizer.ts":
    "export function tokenizeSource(text: string): string[] {\n  return text.split(' ');\n}\n",
  "src/parser.ts":
    "import { tokenizeSource } from './tokenizer.js';\nexport class ExpressionParser {\n  parseExpression(text: string) {\n    return tokenizeSource(text);\n  }\n}\n",
  "src/cli.ts":
    "import { ExpressionParser } from './parser.js';\nexport function runCli(argv: string[]) {\n  return new ExpressionParser().parseExpression(argv.join(' '));\n}\n",
  "src/logger.py": "def write_log_line(line):\n    print(line)\n",
};

function workspace(): string {
  const ws = mkdtempSync(join(scratch, "ws-"));
  for (const [rel, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(ws, rel)), { recursive: true });
    writeFileSync(join(ws, rel), text);
  }
  return ws;
}

type Body = { messages: { role: string; content: string }[] };
const system = (body: unknown) => (body as Body).messages.find((m) => m.role === "system")?.content ?? "";
const userTurn = (body: unknown) => (body as Body).messages.find((m) => m.role === "user")?.content ?? "";

test("the first request carries a map of the code related to the task; the model can ask repo_map for more", async () => {
  const server = await startScriptedServer([
    { content: "", toolCalls: [{ name: "repo_map", arguments: { query: "tokenizeSource", tokens: 256 } }] },
    { content: "done" },
  ]);
  try {
    const ws = workspace();
    const env = cleanEnv(scratch);
    const run = await runHands(
      [
        "--base-url",
        server.url,
        "--api-key",
        "k",
        "--model",
        "m",
        "--sandbox",
        "local",
        "--quiet",
        "--cwd",
        ws,
        "ExpressionParser.parseExpression breaks on empty input",
      ],
      env,
    );
    assert.equal(run.code, 0, run.stderr);
    const first = userTurn(server.requests[0]!.body);
    assert.match(first, /^Repository map: the code most related to the task/);
    assert.match(first, /\n\nExpressionParser\.parseExpression breaks on empty input$/);
    assert.doesNotMatch(system(server.requests[0]!.body), /Repository map/);
    // The parser the task names comes first, with its definitions' lines and signatures.
    const map = first.slice(first.indexOf("Repository map:"));
    assert.equal(map.split("\n")[1], "src/parser.ts");
    assert.match(map, /^ {2}2│ export class ExpressionParser$/m);
    assert.match(map, /^ {2}3│ parseExpression\(text: string\)$/m);
    // The tool's answer, as the second request carried it back to the model.
    const second = (server.requests[1]!.body as Body).messages;
    const tool = second.find((m) => m.role === "tool")?.content ?? "";
    assert.match(tool, /^\d+ of 4 source files, \d+ definitions \(~\d+ tokens\)$/m);
    assert.match(
      tool,
      /^src\/tokenizer\.ts\n {2}1│ export function tokenizeSource\(text: string\): string\[\]$/m,
    );
    // The index was saved for the next session, in the data folder.
    assert.equal(readdirSync(join(scratch, "data", "repo-map")).filter((f) => f.endsWith(".json")).length, 1);
    // The later requests carry the same system prompt (the prompt cache holds), and the task
    // without the map: repo_map's answer has shown the model the code.
    assert.equal(system(server.requests[1]!.body), system(server.requests[0]!.body));
    assert.equal(
      userTurn(server.requests[1]!.body),
      "ExpressionParser.parseExpression breaks on empty input",
    );
  } finally {
    await server.close();
  }
});

test("--no-repo-map and --repo-map-tokens: no map, or a smaller one", async () => {
  const server = await startScriptedServer([{ content: "done" }, { content: "done" }]);
  try {
    const ws = workspace();
    const env = cleanEnv(scratch);
    const base = [
      "--base-url",
      server.url,
      "--api-key",
      "k",
      "--model",
      "m",
      "--sandbox",
      "local",
      "--quiet",
    ];
    const off = await runHands([...base, "--no-repo-map", "--cwd", ws, "fix ExpressionParser"], env);
    assert.equal(off.code, 0, off.stderr);
    assert.doesNotMatch(JSON.stringify(server.requests[0]!.body), /Repository map/);
    const small = await runHands(
      [...base, "--repo-map-tokens", "30", "--cwd", ws, "fix ExpressionParser"],
      env,
    );
    assert.equal(small.code, 0, small.stderr);
    const map = userTurn(server.requests[1]!.body).split("Repository map:")[1] ?? "";
    const body = map.split("\n\nfix ExpressionParser")[0]!.split("\n").slice(1).join("\n");
    assert.ok(body.length > 0 && body.length <= 30 * 3, JSON.stringify(body));
    assert.match(body, /^src\/parser\.ts/);
    const bad = await runHands([...base, "--repo-map-tokens", "0", "--cwd", ws, "x"], env);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--repo-map-tokens/);
  } finally {
    await server.close();
  }
});
