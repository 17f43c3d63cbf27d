import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { LIST_MAX_ENTRIES, listDirTool } from "./list-dir.js";
import { makeTestContext, type TestContext } from "./test-context.js";

describe("list_dir", () => {
  let t: TestContext;
  before(() => {
    t = makeTestContext();
    const w = (p: string, c = "x") => {
      mkdirSync(join(t.workspace, p, ".."), { recursive: true });
      writeFileSync(join(t.workspace, p), c);
    };
    w("b.txt", "x".repeat(2048));
    w("a.txt");
    w("src/index.ts");
    w("src/lib/util.ts");
    w("src/lib/deep/more/x.ts");
    w("node_modules/pkg/index.js");
    w(".git/HEAD");
    symlinkSync("src/index.ts", join(t.workspace, "link.ts"));
    symlinkSync("src", join(t.workspace, "srclink"));
    symlinkSync("missing", join(t.workspace, "broken"));
    for (let i = 0; i < 700; i++) w(`many/f${String(i).padStart(3, "0")}.txt`);
  });
  after(() => t.cleanup());

  it("lists folders first, sizes, symlinks, and does not expand noise folders", async () => {
    const r = await listDirTool.execute({ path: "src" }, t);
    assert.equal(r.isError, undefined);
    assert.equal(
      r.output,
      ["src/", "  lib/", "    deep/", "      more/ (1 entry)", "    util.ts (1 B)", "  index.ts (1 B)"].join(
        "\n",
      ),
    );

    const root = await listDirTool.execute({}, t);
    const lines = root.output.split("\n");
    assert.equal(lines[0], "./ (workspace root)");
    assert.ok(lines.includes("  .git/ (contents not listed)"));
    assert.ok(lines.includes("  node_modules/ (contents not listed)"));
    assert.ok(!root.output.includes("pkg"));
    assert.ok(lines.includes("  b.txt (2.0 KB)"));
    assert.ok(lines.includes("  link.ts -> src/index.ts"));
    assert.ok(lines.includes("  srclink -> src/"));
    assert.ok(lines.includes("  broken -> missing (broken link)"));
    // too many entries for 3 levels: "many" is not expanded but counted
    assert.ok(lines.includes("  many/ (700 entries)"), root.output);
    // folders before files
    assert.ok(lines.indexOf("  src/") < lines.indexOf("  a.txt (1 B)"));
  });

  it("caps a huge folder with a 'more' line", async () => {
    const r = await listDirTool.execute({ path: "many" }, t);
    const lines = r.output.split("\n");
    assert.equal(lines.length, LIST_MAX_ENTRIES + 2);
    assert.match(lines[lines.length - 1]!, /… 200 more entries not shown/);
  });

  it("errors on files, missing folders and escapes", async () => {
    assert.match(
      (await listDirTool.execute({ path: "a.txt" }, t)).output,
      /^ERROR: a\.txt is a file.*read_file/,
    );
    assert.match(
      (await listDirTool.execute({ path: "srcc" }, t)).output,
      /^ERROR: file not found: srcc\nSimilar names in that folder: src/,
    );
    assert.equal((await listDirTool.execute({ path: ".." }, t)).isError, true);
    assert.equal((await listDirTool.execute({ path: "/" }, t)).isError, true);
  });
});
