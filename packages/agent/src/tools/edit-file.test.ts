import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { editFileTool, nearestCandidates } from "./edit-file.js";
import { makeTestContext, type TestContext } from "./test-context.js";

const SRC = `import os

def add(a, b):
    return a + b

def sub(a, b):
    return a - b

def main():
    print(add(1, 2))
    print(sub(5, 3))
`;

describe("edit_file", () => {
  let t: TestContext;
  const file = () => join(t.workspace, "calc.py");
  before(() => {
    t = makeTestContext();
  });
  after(() => t.cleanup());

  it("replaces a unique match and shows numbered context", async () => {
    writeFileSync(file(), SRC);
    const r = await editFileTool.execute(
      { path: "calc.py", old_string: "    return a - b\n", new_string: "    # subtract\n    return a - b\n" },
      t,
    );
    assert.equal(r.isError, undefined, r.output);
    assert.match(r.output, /^Edited calc\.py: replaced lines 7-7 with lines 7-8\./);
    assert.match(r.output, /\n 7\t {4}# subtract\n 8\t {4}return a - b\n/);
    assert.equal(
      readFileSync(file(), "utf8"),
      SRC.replace("    return a - b\n", "    # subtract\n    return a - b\n"),
    );
    assert.equal(r.data?.["before"], SRC);
    assert.equal(r.data?.["replacements"], 1);
  });

  it("treats $ patterns in new_string literally", async () => {
    writeFileSync(file(), "x = 1\n");
    await editFileTool.execute({ path: "calc.py", old_string: "x = 1", new_string: "x = '$&$1$$'" }, t);
    assert.equal(readFileSync(file(), "utf8"), "x = '$&$1$$'\n");
  });

  it("no match: explains and shows the most similar lines with numbers", async () => {
    writeFileSync(file(), SRC);
    const r = await editFileTool.execute(
      { path: "calc.py", old_string: "def sub(a, b):\n  return a-b\n", new_string: "x" },
      t,
    );
    assert.equal(r.isError, true);
    assert.match(r.output, /^ERROR: old_string was not found in calc\.py/);
    assert.match(r.output, /lines 6-7/);
    assert.match(r.output, /\n6\tdef sub\(a, b\):\n7\t {4}return a - b/);
    assert.equal(readFileSync(file(), "utf8"), SRC);
  });

  it("no match due to indentation only: says whitespace differs", async () => {
    writeFileSync(file(), SRC);
    const r = await editFileTool.execute(
      { path: "calc.py", old_string: "def add(a, b):\n  return a + b", new_string: "x" },
      t,
    );
    assert.equal(r.isError, true);
    assert.match(r.output, /Lines 3-4 match if whitespace is ignored/);
  });

  it("hints when old_string carries read_file line numbers", async () => {
    writeFileSync(file(), SRC);
    const r = await editFileTool.execute(
      { path: "calc.py", old_string: "3\tdef add(a, b):", new_string: "x" },
      t,
    );
    assert.match(r.output, /line-number prefixes/);
  });

  it("ambiguous match: count and line numbers; replace_all replaces all", async () => {
    writeFileSync(file(), SRC);
    const r = await editFileTool.execute({ path: "calc.py", old_string: "(a, b)", new_string: "(x, y)" }, t);
    assert.equal(r.isError, true);
    assert.match(r.output, /occurs 2 times in calc\.py \(at lines 3, 6\).*replace_all/);
    const all = await editFileTool.execute(
      { path: "calc.py", old_string: "(a, b)", new_string: "(x, y)", replace_all: true },
      t,
    );
    assert.equal(all.isError, undefined);
    assert.match(all.output, /replaced 2 occurrences/);
    assert.equal((readFileSync(file(), "utf8").match(/\(x, y\)/g) ?? []).length, 2);
  });

  it("refuses identical strings, empty old_string on a non-empty file, missing files", async () => {
    writeFileSync(file(), SRC);
    const same = await editFileTool.execute({ path: "calc.py", old_string: "os", new_string: "os" }, t);
    assert.match(same.output, /^ERROR: old_string and new_string are identical/);
    const empty = await editFileTool.execute({ path: "calc.py", old_string: "", new_string: "x" }, t);
    assert.match(empty.output, /^ERROR: old_string is empty but calc\.py already exists/);
    const missing = await editFileTool.execute({ path: "calk.py", old_string: "a", new_string: "b" }, t);
    assert.match(missing.output, /^ERROR: file not found: calk\.py\nSimilar names in that folder: calc\.py/);
  });

  it("empty old_string on a missing file creates it", async () => {
    const r = await editFileTool.execute({ path: "new/mod.py", old_string: "", new_string: "A = 1\n" }, t);
    assert.equal(r.isError, undefined);
    assert.match(r.output, /^Created new\/mod\.py \(1 lines\)/);
    assert.equal(readFileSync(join(t.workspace, "new/mod.py"), "utf8"), "A = 1\n");
    assert.equal(r.data?.["created"], true);
  });

  it("matches LF old_string against a CRLF file and keeps CRLF", async () => {
    writeFileSync(file(), "a\r\nb\r\nc\r\n");
    const r = await editFileTool.execute({ path: "calc.py", old_string: "a\nb\n", new_string: "A\nB\n" }, t);
    assert.equal(r.isError, undefined, r.output);
    assert.equal(readFileSync(file(), "utf8"), "A\r\nB\r\nc\r\n");
  });

  it("refuses escapes, .git and binary files", async () => {
    mkdirSync(join(t.workspace, ".git"), { recursive: true });
    writeFileSync(join(t.workspace, ".git", "HEAD"), "ref: x\n");
    const git = await editFileTool.execute({ path: ".git/HEAD", old_string: "x", new_string: "y" }, t);
    assert.match(git.output, /^ERROR: refusing to edit inside \.git/);
    const esc = await editFileTool.execute({ path: "../x.py", old_string: "", new_string: "y" }, t);
    assert.equal(esc.isError, true);
    writeFileSync(join(t.workspace, "b.bin"), Buffer.from([1, 0, 2, 3]));
    const bin = await editFileTool.execute({ path: "b.bin", old_string: "\u0001", new_string: "y" }, t);
    assert.match(bin.output, /binary/);
  });

  it("nearestCandidates ranks the most similar region first", () => {
    const c = nearestCandidates(SRC, "def main():\n    print(add(1, 3))");
    assert.equal(c[0]?.line, 9);
    assert.ok((c[0]?.score ?? 0) > 0.7);
  });
});
