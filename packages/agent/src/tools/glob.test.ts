import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { globTool } from "./glob.js";
import { makeTestContext, type TestContext } from "./test-context.js";

describe("glob", () => {
  let t: TestContext;
  before(() => {
    t = makeTestContext();
    const w = (p: string, c = "x") => {
      mkdirSync(join(t.workspace, p, ".."), { recursive: true });
      writeFileSync(join(t.workspace, p), c);
    };
    w(".gitignore", "dist/\n*.log\n");
    w("src/a.ts");
    w("src/b.ts");
    w("src/gen/.gitignore", "*.gen.ts\n!keep.gen.ts\n");
    w("src/gen/x.gen.ts");
    w("src/gen/keep.gen.ts");
    w("src/gen/y.ts");
    w("dist/a.js");
    w("debug.log");
    w("top.ts");
    w(".github/workflows/ci.yml");
    w("node_modules/pkg/index.ts");
    w(".git/objects/x.ts");
    const old = new Date(Date.now() - 100_000);
    utimesSync(join(t.workspace, "src/a.ts"), old, old);
    symlinkSync("/etc", join(t.workspace, "etc-link"));
  });
  after(() => t.cleanup());

  it("matches recursively, respects root and nested .gitignore, skips .git and node_modules", async () => {
    const r = await globTool.execute({ pattern: "**/*.ts" }, t);
    const files = r.output.split("\n").sort();
    assert.deepEqual(files, ["src/a.ts", "src/b.ts", "src/gen/keep.gen.ts", "src/gen/y.ts", "top.ts"]);
    assert.equal(r.data?.["count"], 5);
  });

  it("sorts newest first", async () => {
    const r = await globTool.execute({ pattern: "src/*.ts" }, t);
    assert.deepEqual(r.output.split("\n"), ["src/b.ts", "src/a.ts"]);
  });

  it("a pattern without / matches the top level only, and says so when empty", async () => {
    assert.equal((await globTool.execute({ pattern: "*.ts" }, t)).output, "top.ts");
    const none = await globTool.execute({ pattern: "*.gen.ts" }, t);
    assert.match(none.output, /^No files match .* try "\*\*\/\*\.gen\.ts"/);
  });

  it("searches node_modules only when named, and dotfolders", async () => {
    assert.equal(
      (await globTool.execute({ pattern: "node_modules/**/*.ts" }, t)).output,
      "node_modules/pkg/index.ts",
    );
    assert.equal((await globTool.execute({ pattern: "**/*.yml" }, t)).output, ".github/workflows/ci.yml");
  });

  it("path narrows the search; results stay relative to the workspace root", async () => {
    const r = await globTool.execute({ pattern: "**/*.ts", path: "src/gen" }, t);
    assert.deepEqual(r.output.split("\n").sort(), ["src/gen/keep.gen.ts", "src/gen/y.ts"]);
    // explicitly asking for an ignored folder searches it
    assert.equal((await globTool.execute({ pattern: "*.js", path: "dist" }, t)).output, "dist/a.js");
  });

  it("does not follow symlinked folders and refuses bad input", async () => {
    const r = await globTool.execute({ pattern: "etc-link/**/passwd" }, t);
    assert.match(r.output, /^No files match/);
    assert.equal((await globTool.execute({ pattern: "**/*", path: ".." }, t)).isError, true);
    assert.equal((await globTool.execute({ pattern: "/etc/*" }, t)).isError, true);
    assert.equal((await globTool.execute({ pattern: "" }, t)).isError, true);
  });

  it("caps the number of results", async () => {
    for (let i = 0; i < 1010; i++) writeFileSync(join(t.workspace, `f${i}.md`), "");
    const r = await globTool.execute({ pattern: "*.md" }, t);
    const lines = r.output.split("\n");
    assert.equal(lines.length, 1001);
    assert.match(lines[1000]!, /^… 10 more files not shown \(1,010 matched\)/);
  });
});
