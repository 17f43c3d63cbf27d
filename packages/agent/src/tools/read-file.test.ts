import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { readFileTool } from "./read-file.js";
import { makeTestContext, type TestContext } from "./test-context.js";

describe("read_file", () => {
  let t: TestContext;
  before(() => {
    t = makeTestContext();
    mkdirSync(join(t.workspace, "src"));
    writeFileSync(
      join(t.workspace, "src", "hello.ts"),
      "const a = 1;\nconst b = 2;\r\nconsole.log(a + b);\n",
    );
    writeFileSync(join(t.workspace, "src", "helper.ts"), "x");
    writeFileSync(join(t.workspace, "empty.txt"), "");
    writeFileSync(join(t.workspace, "noeol.txt"), "one\ntwo");
    writeFileSync(
      join(t.workspace, "big.txt"),
      Array.from({ length: 5412 }, (_, i) => `line ${i + 1}`).join("\n"),
    );
    writeFileSync(join(t.workspace, "long.txt"), `${"x".repeat(5000)}\nshort\n`);
    writeFileSync(
      join(t.workspace, "image.png"),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13, 1, 2, 3]),
    );
    writeFileSync(join(t.workspace, "..", `${t.workspace.split("/").pop()}_evil.txt`), "evil");
  });
  after(() => t.cleanup());

  it("shows the file's lines as they are, numbered like cat -n when asked", async () => {
    const r = await readFileTool.execute({ path: "src/hello.ts" }, t);
    assert.equal(r.isError, undefined);
    assert.equal(r.output, "const a = 1;\nconst b = 2;\nconsole.log(a + b);");
    const n = await readFileTool.execute({ path: "src/hello.ts", line_numbers: true }, t);
    assert.equal(n.output, "1\tconst a = 1;\n2\tconst b = 2;\n3\tconsole.log(a + b);");
    assert.deepEqual(n.data, r.data);
    assert.deepEqual(r.data, {
      path: "src/hello.ts",
      startLine: 1,
      endLine: 3,
      linesShown: 3,
      totalLines: 3,
    });
    const noeol = await readFileTool.execute({ path: "noeol.txt" }, t);
    assert.equal(noeol.output, "one\ntwo");
  });

  it("pages large files and says exactly how to continue", async () => {
    const r = await readFileTool.execute({ path: "big.txt" }, t);
    const lines = r.output.split("\n");
    assert.equal(lines.length, 2001);
    assert.equal(lines[1999], "line 2000");
    assert.equal(
      lines[2000],
      "… 3,412 more lines (file has 5,412); call read_file with offset=2001 to continue.",
    );
    const next = await readFileTool.execute({ path: "big.txt", offset: 2001, limit: 3 }, t);
    // A read from further on says where it starts.
    assert.deepEqual(next.output.split("\n").slice(0, 2), ["(lines 2,001–2,003 of big.txt)", "line 2001"]);
    assert.match(next.output, /call read_file with offset=2004/);
    const end = await readFileTool.execute({ path: "big.txt", offset: 5410 }, t);
    assert.equal(end.output, "(lines 5,410–5,412 of big.txt)\nline 5410\nline 5411\nline 5412");
    const endNumbered = await readFileTool.execute({ path: "big.txt", offset: 5410, line_numbers: true }, t);
    assert.equal(endNumbered.output, "5410\tline 5410\n5411\tline 5411\n5412\tline 5412");
    const past = await readFileTool.execute({ path: "big.txt", offset: 9000 }, t);
    assert.equal(past.isError, true);
    assert.match(past.output, /^ERROR: offset 9000 is past the end .* 5,412 lines/);
  });

  it("clips very long lines with a marker", async () => {
    const r = await readFileTool.execute({ path: "long.txt" }, t);
    const [first, second] = r.output.split("\n");
    assert.ok(first!.length < 2100);
    assert.match(first!, /… \[line clipped: 5,000 chars\]$/);
    assert.equal(second, "short");
  });

  it("handles empty, binary, directory and missing files", async () => {
    assert.equal((await readFileTool.execute({ path: "empty.txt" }, t)).output, "(empty file)");
    const bin = await readFileTool.execute({ path: "image.png" }, t);
    assert.equal(bin.isError, true);
    assert.match(bin.output, /^ERROR: image\.png is a binary file \(11 B, 11 bytes\)/);
    const dir = await readFileTool.execute({ path: "src" }, t);
    assert.equal(dir.isError, true);
    assert.match(dir.output, /is a directory.*list_dir/);
    const missing = await readFileTool.execute({ path: "src/helo.ts" }, t);
    assert.equal(missing.isError, true);
    assert.match(
      missing.output,
      /^ERROR: file not found: src\/helo\.ts\nSimilar names in that folder: src\/hello\.ts/,
    );
    const nothing = await readFileTool.execute({ path: "zzz/qqq.rs" }, t);
    assert.match(nothing.output, /^ERROR: file not found: zzz\/qqq\.rs\nUse list_dir or glob/);
  });

  it("refuses paths outside the workspace", async () => {
    for (const p of ["../x", "/etc/passwd", `${t.workspace}_evil.txt`, "a\0b"]) {
      const r = await readFileTool.execute({ path: p }, t);
      assert.equal(r.isError, true, p);
      assert.match(r.output, /^ERROR: /);
    }
    symlinkSync("/etc/passwd", join(t.workspace, "pw"));
    const r = await readFileTool.execute({ path: "pw" }, t);
    assert.equal(r.isError, true);
    assert.doesNotMatch(r.output, /root:/);
  });
});
