import assert from "node:assert/strict";
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { makeTestContext, type TestContext } from "./test-context.js";
import { writeFileTool } from "./write-file.js";

describe("write_file", () => {
  let t: TestContext;
  before(() => {
    t = makeTestContext();
  });
  after(() => t.cleanup());

  it("creates a file with parent folders and reports it", async () => {
    const r = await writeFileTool.execute({ path: "a/b/c.py", content: "print(1)\nprint(2)\n" }, t);
    assert.equal(r.isError, undefined);
    assert.equal(r.output, "Created a/b/c.py: 18 bytes, 2 lines.");
    assert.equal(readFileSync(join(t.workspace, "a/b/c.py"), "utf8"), "print(1)\nprint(2)\n");
    assert.equal(r.data?.["created"], true);
    assert.equal(r.data?.["bytes"], 18);
    assert.equal(r.data?.["before"], undefined);
    assert.equal(r.data?.["after"], "print(1)\nprint(2)\n");
  });

  it("overwrites atomically, keeps the mode, reports the previous content", async () => {
    writeFileSync(join(t.workspace, "run.sh"), "echo old\n");
    chmodSync(join(t.workspace, "run.sh"), 0o755);
    const r = await writeFileTool.execute({ path: "run.sh", content: "echo new\n" }, t);
    assert.match(r.output, /^Overwrote run\.sh: 9 bytes, 1 lines; it had 1 lines\.$/);
    assert.equal(r.data?.["created"], false);
    assert.equal(r.data?.["before"], "echo old\n");
    assert.equal(statSync(join(t.workspace, "run.sh")).mode & 0o777, 0o755);
    // no temp files left behind
    assert.deepEqual(
      readdirSync(t.workspace).filter((n) => n.includes("hands-tmp")),
      [],
    );
  });

  it("refuses .git internals, folders and escapes", async () => {
    mkdirSync(join(t.workspace, ".git"));
    const git = await writeFileTool.execute({ path: ".git/config", content: "x" }, t);
    assert.equal(git.isError, true);
    assert.match(git.output, /^ERROR: refusing to write inside \.git/);
    mkdirSync(join(t.workspace, "dir"));
    const dir = await writeFileTool.execute({ path: "dir", content: "x" }, t);
    assert.equal(dir.isError, true);
    for (const p of ["../escape.txt", "/tmp/escape.txt", `${t.workspace}_evil/x.txt`, "x\0y"]) {
      const r = await writeFileTool.execute({ path: p, content: "x" }, t);
      assert.equal(r.isError, true, p);
    }
    const outside = join(t.workspace, "..", `hands-out-${Date.now()}`);
    mkdirSync(outside);
    symlinkSync(outside, join(t.workspace, "out-link"));
    const viaLink = await writeFileTool.execute({ path: "out-link/pwned.txt", content: "x" }, t);
    assert.equal(viaLink.isError, true);
    assert.deepEqual(readdirSync(outside), []);
  });
});
