import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { previewWrite } from "./preview.js";

describe("write previews read the target the safe way", () => {
  const ws = mkdtempSync(join(tmpdir(), "hands-preview-"));
  after(() => rmSync(ws, { recursive: true, force: true }));

  it("shows what an edit changes", async () => {
    writeFileSync(join(ws, "a.txt"), "one\ntwo\n");
    const p = await previewWrite(ws, "edit_file", { path: "a.txt", old_string: "two", new_string: "2" });
    assert.equal(p?.created, false);
    assert.match(p?.diff ?? "", /^-two$/m);
    assert.match(p?.diff ?? "", /^\+2$/m);
  });

  it("never blocks on a FIFO (main hung here forever)", { timeout: 10_000 }, async () => {
    execFileSync("mkfifo", [join(ws, "pipe.txt")]);
    const p = await previewWrite(ws, "write_file", { path: "pipe.txt", content: "new\n" });
    assert.ok(p, "a preview is still shown");
    assert.doesNotMatch(p.diff, /^-(?!--)/m, "nothing was read from the FIFO");
    assert.match(p.diff, /^\+new$/m);
  });

  it("never shows a file outside the workspace through a symlink", async () => {
    symlinkSync("/etc/passwd", join(ws, "passwd-link"));
    const p = await previewWrite(ws, "edit_file", {
      path: "passwd-link",
      old_string: "root",
      new_string: "x",
    });
    assert.doesNotMatch(p?.diff ?? "", /root:/, "the outside file's content is not shown");
  });
});
