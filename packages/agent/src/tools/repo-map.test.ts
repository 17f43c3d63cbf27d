import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { buildRepoMap, RepoIndex, rankDefinitions, tagsByFile, tagsOf } from "../repo-map/index.js";
import { repoMapTool } from "./repo-map.js";
import type { ToolContext } from "./types.js";

let root: string;
let outside: string;

before(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), "hands-repomap-")));
  outside = path.join(root, "outside");
  mkdirSync(outside);
});
after(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
/** A fresh workspace holding `files` (path → text). */
function workspace(files: Record<string, string>): string {
  const ws = path.join(root, `ws${n++}`);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    writeFileSync(path.join(ws, rel), text);
  }
  mkdirSync(ws, { recursive: true });
  return ws;
}

function ctxFor(ws: string, signal = new AbortController().signal): ToolContext {
  return { workspace: ws, readRoots: [], sandbox: () => Promise.reject(new Error("no sandbox")), signal };
}

/** A small project: a parser used by two callers, an unrelated logger, a Python helper. */
const PROJECT = {
  "src/tokenizer.ts":
    "export function tokenizeSource(text: string): string[] {\n  return text.split(' ');\n}\n",
  "src/parser.ts":
    "import { tokenizeSource } from './tokenizer.js';\nexport class ExpressionParser {\n  parseExpression(text: string) {\n    return tokenizeSource(text);\n  }\n}\n",
  "src/cli.ts":
    "import { ExpressionParser } from './parser.js';\nexport function runCli(argv: string[]) {\n  return new ExpressionParser().parseExpression(argv.join(' '));\n}\n",
  "src/server.js":
    "const { ExpressionParser } = require('./parser');\nmodule.exports.handleRequest = function (req) {\n  return new ExpressionParser().parseExpression(req.body);\n};\n",
  "src/logger.ts": "export function writeLogLine(line: string): void {\n  console.log(line);\n}\n",
  "tools/report.py": "def summarize_numbers(values):\n    return sum(values)\n",
  "README.md": "# a project\n",
};

test("tags: definitions from the outline, references from the code's identifiers", async () => {
  const tags = await tagsOf(PROJECT["src/parser.ts"], "typescript");
  assert.deepEqual(
    tags.defs.map((d) => `${d.kind} ${d.name} ${d.line} ${d.depth}`),
    ["class ExpressionParser 2 0", "method parseExpression 3 1"],
  );
  assert.equal(tags.refs.tokenizeSource, 2);
  assert.equal(tags.refs.text, 2);
  // Identifiers only: words of strings and comments are not references.
  const js = await tagsOf("// calls hiddenName\nconst s = 'otherName';\nvisibleName();\n", "javascript");
  assert.deepEqual(Object.keys(js.refs).sort(), ["visibleName"]);
});

test("ranking: the file most used ranks first without a query; a query pulls its files up", async () => {
  const ws = workspace(PROJECT);
  const index = new RepoIndex({ workspace: ws });
  await index.refresh();
  const plain = rankDefinitions(tagsByFile(index));
  // parser.ts is used by two files, tokenizer.ts by parser.ts: both above the unused files.
  const order = plain.files.map((f) => f.file);
  assert.ok(order.indexOf("src/parser.ts") < order.indexOf("src/logger.ts"), order.join(" "));
  assert.ok(order.indexOf("src/tokenizer.ts") < order.indexOf("tools/report.py"), order.join(" "));
  const asked = rankDefinitions(tagsByFile(index), {
    text: "the log lines are written twice by writeLogLine",
  });
  assert.equal(asked.files[0]?.file, "src/logger.ts");
  const byPath = rankDefinitions(tagsByFile(index), { text: "fix tools/report.py rounding" });
  assert.equal(byPath.files[0]?.file, "tools/report.py");
});

test("repo_map: names the files and definitions for a query, within the token budget", async () => {
  const ws = workspace(PROJECT);
  const result = await repoMapTool.execute({ query: "ExpressionParser breaks on empty input" }, ctxFor(ws));
  assert.equal(result.isError, undefined, result.output);
  const lines = result.output.split("\n");
  assert.match(lines[0]!, /^\d+ of 6 source files, \d+ definitions \(~\d+ tokens\)$/);
  assert.equal(lines[1], "src/parser.ts");
  assert.match(result.output, /^ {2}2│ export class ExpressionParser$/m);
  assert.match(result.output, /^ {2}3│ parseExpression\(text: string\)$/m);
  assert.ok(!result.output.includes("README.md"));
  const data = result.data as { files: string[]; tokens: number; indexedFiles: number };
  assert.equal(data.indexedFiles, 6);
  assert.equal(data.files[0], "src/parser.ts");

  // A small budget keeps the best only; the estimate stays within it.
  const small = await repoMapTool.execute({ query: "ExpressionParser", tokens: 128 }, ctxFor(ws));
  const sd = small.data as { files: string[]; tokens: number };
  assert.ok(sd.tokens <= 128, `${sd.tokens}`);
  assert.equal(sd.files[0], "src/parser.ts");
  // Focus files favour themselves and what they use.
  const focused = await repoMapTool.execute({ files: ["src/cli.ts"], tokens: 128 }, ctxFor(ws));
  assert.deepEqual((focused.data as { files: string[] }).files.slice(0, 2).sort(), [
    "src/cli.ts",
    "src/parser.ts",
  ]);
});

test("the index re-parses only what changed, and drops what is gone", async () => {
  const ws = workspace(PROJECT);
  const index = new RepoIndex({ workspace: ws });
  assert.equal((await index.refresh()).parsed, 6);
  const again = await index.refresh();
  assert.equal(again.parsed, 0);
  assert.equal(again.files, 6);
  // A map before the edit (its graph is kept for the next map while nothing changes).
  assert.ok(!(await buildRepoMap(index, { text: "flushLogs" }, 256)).text.includes("flushLogs"));
  const file = path.join(ws, "src/logger.ts");
  writeFileSync(
    file,
    "export function writeLogLine(line: string): void {}\nexport function flushLogs() {}\n",
  );
  utimesSync(file, new Date(), new Date(Date.now() + 5000));
  const edited = await index.refresh();
  assert.equal(edited.parsed, 1);
  assert.deepEqual(
    index.files.get("src/logger.ts")?.tags.defs.map((d) => d.name),
    ["writeLogLine", "flushLogs"],
  );
  // An aborted refresh keeps what the index had: files it did not reach are not gone.
  const stop = new AbortController();
  stop.abort();
  const cut = await index.refresh(stop.signal);
  assert.equal(cut.aborted, true);
  assert.equal(cut.files, 6);
  // The next map is made from the edited file, not from the graph kept before the edit.
  const after = await buildRepoMap(index, { text: "flushLogs" }, 256);
  assert.equal(after.refresh.parsed, 0);
  assert.match(after.text, /^src\/logger\.ts\n(.*\n)* {2}2│ export function flushLogs\(\)/m);
  rmSync(path.join(ws, "tools/report.py"));
  const removed = await index.refresh();
  assert.equal(removed.removed, 1);
  assert.equal(removed.files, 5);
});

test("the saved index is loaded by the next session; a damaged, foreign or FIFO cache is ignored", async () => {
  const ws = workspace(PROJECT);
  const cacheFile = path.join(root, `cache-${n}`, "index.json");
  const first = new RepoIndex({ workspace: ws, cacheFile });
  await first.refresh();
  first.save();
  const second = new RepoIndex({ workspace: ws, cacheFile });
  assert.equal(second.files.size, 6);
  assert.equal((await second.refresh()).parsed, 0);
  // Another workspace's cache is not used.
  const other = workspace(PROJECT);
  assert.equal(new RepoIndex({ workspace: other, cacheFile }).files.size, 0);
  writeFileSync(cacheFile, "{ not json");
  const damaged = new RepoIndex({ workspace: ws, cacheFile });
  assert.equal(damaged.files.size, 0);
  assert.equal((await damaged.refresh()).parsed, 6);
  rmSync(cacheFile);
  execFileSync("mkfifo", [cacheFile]);
  const fifo = new RepoIndex({ workspace: ws, cacheFile }); // must not wait for a writer
  assert.equal(fifo.files.size, 0);
});

test("hostile workspace: symlinks out, FIFOs, huge, binary, ignored and node_modules files are not read", async () => {
  writeFileSync(path.join(outside, "secret.ts"), "export function outsideSecretFunction() {}\n");
  mkdirSync(path.join(outside, "dir"), { recursive: true });
  writeFileSync(path.join(outside, "dir", "far.ts"), "export function outsideFarFunction() {}\n");
  const ws = workspace({
    "src/ok.ts": "export function insideFunction() {}\n",
    "src/big.ts": `export function hugeFunction() {}\n${"// x\n".repeat(200_000)}`,
    "src/blob.js": "export function binaryFunction() {}\n\u0000\u0001",
    "gen/out.ts": "export function ignoredFunction() {}\n",
    ".gitignore": "gen/\n",
    "node_modules/dep/index.js": "function dependencyFunction() {}\n",
  });
  symlinkSync(path.join(outside, "secret.ts"), path.join(ws, "src/link.ts"));
  symlinkSync(path.join(outside, "dir"), path.join(ws, "linked-dir"));
  execFileSync("mkfifo", [path.join(ws, "src/pipe.py")]);
  const result = await repoMapTool.execute({ query: "function", tokens: 2048 }, ctxFor(ws));
  assert.equal(result.isError, undefined, result.output);
  assert.match(result.output, /insideFunction/);
  for (const name of [
    "outsideSecretFunction",
    "outsideFarFunction",
    "hugeFunction",
    "binaryFunction",
    "ignoredFunction",
    "dependencyFunction",
  ])
    assert.ok(!result.output.includes(name), `${name} in ${result.output}`);
  const data = result.data as { indexedFiles: number; skipped: Record<string, number> };
  assert.equal(data.indexedFiles, 1);
  // The FIFO is not even listed by the walk (only regular files and symlinks are).
  assert.deepEqual(data.skipped, { symlink: 1, "too big": 1, binary: 1 });
  assert.match(result.output.split("\n")[0]!, /skipped: .*1 symlink/);
});

test("repo_map: bad input and an abort are error results", async () => {
  const ws = workspace(PROJECT);
  const out = await repoMapTool.execute({ files: ["../outside/secret.ts"] }, ctxFor(ws));
  assert.equal(out.isError, true);
  assert.match(out.output, /^ERROR: files must be inside the workspace; outside: \.\.\/outside\/secret\.ts$/);
  const controller = new AbortController();
  controller.abort();
  const aborted = await repoMapTool.execute({ query: "x" }, ctxFor(ws, controller.signal));
  assert.equal(aborted.isError, true);
  assert.match(aborted.output, /^ERROR: aborted/);
  const empty = await repoMapTool.execute({}, ctxFor(workspace({ "notes.txt": "hello" })));
  assert.match(empty.output, /\(no source files with definitions found in the workspace\)/);
  const unknown = await repoMapTool.execute({ files: ["src/nope.ts"] }, ctxFor(ws));
  assert.match(unknown.output, /note: not indexed \(no such source file, or skipped\): src\/nope\.ts/);
});

test("buildRepoMap reports refresh and ranking times", async () => {
  const ws = workspace(PROJECT);
  const map = await buildRepoMap(new RepoIndex({ workspace: ws }), { text: "runCli" }, 256);
  assert.equal(map.files[0], "src/cli.ts");
  assert.ok(map.refresh.ms >= 0 && map.rankMs >= 0);
});

test("the first-request map: none when the wait runs out, the index built on and saved for the next map", async () => {
  const { repoMapForTask } = await import("../task-map.js");
  const ws = workspace(PROJECT);
  const cacheFile = path.join(root, `task-map-${n}.json`);
  const late = await repoMapForTask({ workspace: ws, task: "runCli", tokens: 256, cacheFile, timeoutMs: 0 });
  assert.equal(late, undefined);
  // The build goes on; once saved, a new process's index (a fresh RepoIndex) loads it whole.
  for (let i = 0; i < 100 && new RepoIndex({ workspace: ws, cacheFile }).files.size < 6; i++)
    await new Promise((r) => setTimeout(r, 50));
  assert.equal(new RepoIndex({ workspace: ws, cacheFile }).files.size, 6);
  const map = await repoMapForTask({ workspace: ws, task: "runCli", tokens: 256, cacheFile });
  assert.ok(map, "a map once the index is there");
  assert.match(map.text, /^Repository map: the code most related to the task/);
  assert.equal(map.files[0], "src/cli.ts");
  assert.equal(map.parsed, 0);
});
