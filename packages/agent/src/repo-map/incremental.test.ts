import assert from "node:assert/strict";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { buildRepoMap, quickTagsOf, RepoIndex, tagsOf } from "./index.js";
import { lexSource } from "./lexical.js";

let root: string;
before(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), "hands-repomap-inc-")));
});
after(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
function workspace(files: Record<string, string>): string {
  const ws = path.join(root, `ws${n++}`);
  mkdirSync(ws, { recursive: true });
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    writeFileSync(path.join(ws, rel), text);
  }
  return ws;
}

const PROJECT = {
  "src/session.ts":
    "// Refreshes the CSRF token before it expires.\nimport { signToken } from './crypto.js';\nexport class SessionStore {\n  renew(id: string) {\n    return signToken(id);\n  }\n}\n",
  "src/crypto.ts": "export function signToken(id: string): string {\n  return `signed:${id}`;\n}\n",
  "src/views.js":
    "const { SessionStore } = require('./session');\nView.prototype.render = function (name) {\n  return new SessionStore().renew(name);\n};\nexports.lookup = (name) => name;\n",
  "lib/tool.py":
    "class Runner:\n    def run_all(self, jobs):\n        return [j() for j in jobs]\n\ndef helper_fn():\n    pass\n",
};

test("lexical pass: code identifiers are references; comment and string words are notes; keywords are neither", () => {
  const lexed = lexSource(
    "// the retryBudget is spent\nconst total = computeTotal(items, 'backoffWindow');\n/* block Comment */ return total;\n",
    "typescript",
  );
  assert.deepEqual(Object.keys(lexed.refs).sort(), ["computeTotal", "items", "total"]);
  assert.equal(lexed.refs.total, 2);
  for (const w of ["retry", "budget", "spent", "backoff", "window", "block", "comment"])
    assert.ok(lexed.notes[w], `${w} in ${JSON.stringify(lexed.notes)}`);
  const py = lexSource('# uses frobnicate\nx = "quoted_name"\ndef real_name(): pass\n', "python");
  assert.deepEqual(Object.keys(py.refs), ["real_name"]);
  assert.ok(py.notes.frobnicate);
  // An unterminated block comment or template string ends the file, it does not hang or throw.
  assert.deepEqual(Object.keys(lexSource("callMe(); /* open", "javascript").refs), ["callMe"]);
  assert.deepEqual(Object.keys(lexSource("callMe(); `open ${x}", "javascript").refs), ["callMe"]);
});

test("quick tags find the definitions the parse finds in plain code (names and lines)", async () => {
  for (const [rel, text] of Object.entries(PROJECT)) {
    const language = rel.endsWith(".py") ? "python" : rel.endsWith(".js") ? "javascript" : "typescript";
    const quick = quickTagsOf(text, language);
    const parsed = await tagsOf(text, language);
    const linkable = (d: { depth: number; kind: string }) => d.depth === 0 || d.kind === "method";
    const names = (defs: typeof quick.defs) =>
      defs
        .filter(linkable)
        .map((d) => `${d.name}:${d.line}`)
        .sort();
    assert.deepEqual(names(quick.defs), names(parsed.defs), rel);
    assert.equal(quick.quick, true);
    assert.equal(parsed.quick, undefined);
  }
  // Control flow is not taken for a method; a minified line is not read.
  const flow = quickTagsOf(
    "class A {\n  m() {\n    if (x) {\n    }\n    for (;;) {\n    }\n  }\n}\n",
    "javascript",
  );
  assert.deepEqual(
    flow.defs.map((d) => d.name),
    ["A", "m"],
  );
  assert.equal(quickTagsOf(`function ${"a".repeat(500)}() {}`, "javascript").defs.length, 0);
});

test("a refresh past its parse time gives quick tags, then parses them in the background; quick tags are never saved", async () => {
  const ws = workspace(PROJECT);
  const cacheFile = path.join(root, `cache-${n}.json`);
  const index = new RepoIndex({ workspace: ws, cacheFile });
  const map = await buildRepoMap(index, { text: "SessionStore renew" }, 512, undefined, 0);
  assert.equal(map.refresh.quick, 4);
  assert.equal(map.refresh.parsed, 0);
  assert.equal(map.files[0], "src/session.ts");
  assert.match(map.text, /3│ export class SessionStore/);
  index.save();
  const early = JSON.parse(readFileSync(cacheFile, "utf8")) as { files: unknown[] };
  assert.equal(early.files.length, 0);
  await index.whenParsed();
  for (const f of index.files.values()) assert.equal(f.tags.quick, undefined);
  assert.ok(Object.keys(index.files.get("src/views.js")!.tags.refs).includes("SessionStore"));
  index.save();
  assert.equal(new RepoIndex({ workspace: ws, cacheFile }).files.size, 4);
  // Nothing is parsed again: the background parse finished what the refresh left.
  assert.equal((await index.refresh()).parsed, 0);
});

test("update(): re-parses only the edited files, drops one swapped for a symlink, leaves new files to the walk", async () => {
  const ws = workspace(PROJECT);
  const index = new RepoIndex({ workspace: ws });
  await index.refresh();
  const before = new Map([...index.files].map(([rel, f]) => [rel, f.tags]));
  const edited = path.join(ws, "src/crypto.ts");
  writeFileSync(
    edited,
    "export function signToken(id: string) { return id; }\nexport function verifyToken() {}\n",
  );
  utimesSync(edited, new Date(), new Date(Date.now() + 5000));
  writeFileSync(path.join(ws, "src/new.ts"), "export function brandNew() {}\n");
  const up = await index.update(["src/crypto.ts", "src/session.ts", "src/new.ts", "src/nope.ts"]);
  assert.equal(up.parsed, 1); // session.ts unchanged: not parsed again
  assert.deepEqual(
    index.files.get("src/crypto.ts")!.tags.defs.map((d) => d.name),
    ["signToken", "verifyToken"],
  );
  assert.equal(index.files.get("src/session.ts")!.tags, before.get("src/session.ts"));
  assert.equal(index.files.has("src/new.ts"), false);
  const map = await buildRepoMap(index, { text: "verifyToken" }, 256);
  assert.equal(map.refresh.parsed, 1); // the walk finds the new file, nothing else
  assert.match(map.text, /verifyToken/);
  // A file swapped for a symlink (to outside) is not read through it: it leaves the index.
  const outside = path.join(root, `outside-${n}.ts`);
  writeFileSync(outside, "export function outsideSecret() {}\n");
  rmSync(path.join(ws, "src/session.ts"));
  symlinkSync(outside, path.join(ws, "src/session.ts"));
  const swapped = await index.update(["src/session.ts"]);
  assert.equal(swapped.removed, 1);
  assert.equal(index.files.has("src/session.ts"), false);
});
