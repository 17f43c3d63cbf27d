import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { GREP_MAX_MATCHES, grepTool, matchLines } from "./grep.js";
import { makeTestContext, type TestContext } from "./test-context.js";

describe("grep", () => {
  let t: TestContext;
  before(() => {
    t = makeTestContext();
    const w = (p: string, c: string | Buffer) => {
      mkdirSync(join(t.workspace, p, ".."), { recursive: true });
      writeFileSync(join(t.workspace, p), c);
    };
    w(".gitignore", "build/\n");
    w("src/a.ts", "export function alpha() {}\nconst x = alpha();\n// TODO: fix\n");
    w("src/b.py", "def alpha():\n    pass\n");
    w("src/nested/.gitignore", "secret.ts\n");
    w("src/nested/secret.ts", "alpha inside ignored\n");
    w("src/nested/ok.ts", "ALPHA loud\n");
    w("build/out.ts", "alpha in build\n");
    w("node_modules/m/index.ts", "alpha in deps\n");
    w("bin.dat", Buffer.concat([Buffer.from("alpha"), Buffer.from([0, 1, 2])]));
    w("long.txt", `${"y".repeat(1000)}alpha${"z".repeat(1000)}\n`);
    w("many.txt", "hit\n".repeat(500));
  });
  after(() => t.cleanup());

  it("finds matches as path:line:text, respecting .gitignore and skipping binaries/node_modules", async () => {
    const r = await grepTool.execute({ pattern: "alpha", glob: "*.{ts,py}" }, t);
    assert.equal(
      r.output,
      [
        "src/a.ts:1:export function alpha() {}",
        "src/a.ts:2:const x = alpha();",
        "src/b.py:1:def alpha():",
      ].join("\n"),
    );
    assert.equal(r.data?.["matches"], 3);
    const all = await grepTool.execute({ pattern: "alpha" }, t);
    assert.ok(!all.output.includes("bin.dat"));
    assert.ok(!all.output.includes("build/"));
    assert.ok(!all.output.includes("node_modules"));
    assert.ok(!all.output.includes("secret.ts"));
  });

  it("ignore_case, regex syntax, single file path and folder path", async () => {
    const r = await grepTool.execute({ pattern: "^alpha", ignore_case: true, path: "src/nested" }, t);
    assert.equal(r.output, "src/nested/ok.ts:1:ALPHA loud");
    const f = await grepTool.execute({ pattern: "TODO|FIXME", path: "src/a.ts" }, t);
    assert.equal(f.output, "src/a.ts:3:// TODO: fix");
    const g = await grepTool.execute({ pattern: "def \\w+\\(\\)", glob: "src/**/*.py" }, t);
    assert.equal(g.output, "src/b.py:1:def alpha():");
  });

  it("clips long lines around the match", async () => {
    const r = await grepTool.execute({ pattern: "alpha", path: "long.txt" }, t);
    assert.ok(r.output.length < 400, String(r.output.length));
    assert.match(r.output, /^long\.txt:1:…y+alphaz+…$/);
  });

  it("caps matches and counts the rest", async () => {
    const r = await grepTool.execute({ pattern: "hit", path: "many.txt" }, t);
    const lines = r.output.split("\n");
    assert.equal(lines.length, GREP_MAX_MATCHES + 1);
    assert.match(lines[GREP_MAX_MATCHES]!, /^… 300 more matches not shown \(500 in 1 files\)/);
  });

  it("no matches, invalid regex, escapes", async () => {
    const none = await grepTool.execute({ pattern: "zzz_nope" }, t);
    assert.equal(none.isError, undefined);
    assert.match(none.output, /^No matches for \/zzz_nope\/ in the workspace/);
    const bad = await grepTool.execute({ pattern: "foo(" }, t);
    assert.equal(bad.isError, true);
    assert.match(bad.output, /^ERROR: invalid regular expression "foo\(": .*Unterminated group/);
    assert.equal((await grepTool.execute({ pattern: "x", path: "../" }, t)).isError, true);
  });

  it("never reads through a symlink that leads outside", async () => {
    symlinkSync("/etc/passwd", join(t.workspace, "src", "pw.txt"));
    const r = await grepTool.execute({ pattern: "root" }, t);
    assert.ok(!r.output.includes("pw.txt"), r.output);
  });

  it("matchLines reports one entry per line with correct numbers", () => {
    const { matches, count } = matchLines("a1 a2\nb\na3\n\na4", /a\d/gm, 10);
    assert.equal(count, 3);
    assert.deepEqual(
      matches.map((m) => m.line),
      [1, 3, 5],
    );
  });

  it("an empty-line pattern never reports the line past a final newline", async () => {
    writeFileSync(join(t.workspace, "two.txt"), "a\nb\n");
    writeFileSync(join(t.workspace, "blank.txt"), "a\n\nb\n");
    writeFileSync(join(t.workspace, "empty.txt"), "");
    assert.match((await grepTool.execute({ pattern: "^$", path: "two.txt" }, t)).output, /^No matches/);
    assert.equal((await grepTool.execute({ pattern: "^$", path: "blank.txt" }, t)).output, "blank.txt:2:");
    assert.match((await grepTool.execute({ pattern: "^$", path: "empty.txt" }, t)).output, /^No matches/);
    // Without a final newline the last line is a real line.
    assert.deepEqual(
      matchLines("a\n", /^/gm, 10).matches.map((m) => m.line),
      [1],
    );
    assert.deepEqual(
      matchLines("a\nb", /$/gm, 10).matches.map((m) => m.line),
      [1, 2],
    );
  });
});
