// @path attachments read from an untrusted workspace: nothing outside it, nothing that blocks.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import {
  ATTACH_MAX_BYTES,
  atMentions,
  listWorkspaceFiles,
  readAttachment,
  withAttachments,
} from "./files.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "hands-attach-")));
after(() => rmSync(root, { recursive: true, force: true }));
const ws = join(root, "ws");
mkdirSync(join(ws, "src"), { recursive: true });
writeFileSync(join(ws, "src", "a.ts"), "export const a = 1;\n");
writeFileSync(join(root, "outside.txt"), "secret outside\n");
writeFileSync(join(root, "ws_evil.txt"), "prefix trick\n");

describe("@ attachments", () => {
  test("a file of the workspace is attached; paths that leave it are refused", () => {
    const ok = readAttachment(ws, "src/a.ts");
    assert.ok("ok" in ok && ok.ok.content === "export const a = 1;\n");
    for (const bad of [
      "../outside.txt",
      "../ws_evil.txt",
      join(root, "outside.txt"),
      "src/../../outside.txt",
    ])
      assert.deepEqual(
        readAttachment(ws, bad),
        bad.startsWith("/")
          ? { error: "not a path inside the workspace" }
          : { error: "outside the workspace" },
        bad,
      );
    symlinkSync(join(root, "outside.txt"), join(ws, "link-out"));
    assert.deepEqual(readAttachment(ws, "link-out"), { error: "outside the workspace" });
    symlinkSync(join(root), join(ws, "dir-out"));
    assert.deepEqual(readAttachment(ws, "dir-out/outside.txt"), { error: "outside the workspace" });
  });

  test("a FIFO, a folder, a binary file are not attached (and nothing blocks); a big file is capped", () => {
    execFileSync("mkfifo", [join(ws, "pipe")]);
    assert.deepEqual(readAttachment(ws, "pipe"), { error: "not a regular file" });
    assert.deepEqual(readAttachment(ws, "src"), { error: "not a regular file" });
    writeFileSync(join(ws, "bin.dat"), Buffer.from([1, 2, 0, 3]));
    assert.deepEqual(readAttachment(ws, "bin.dat"), { error: "a binary file" });
    writeFileSync(join(ws, "big.txt"), "x".repeat(ATTACH_MAX_BYTES * 3));
    const big = readAttachment(ws, "big.txt");
    assert.ok("ok" in big);
    assert.equal(big.ok.content.length, ATTACH_MAX_BYTES);
    assert.equal(big.ok.truncated, true);
    assert.equal(big.ok.bytes, ATTACH_MAX_BYTES * 3);
    assert.match(
      withAttachments("see @big.txt", [big.ok]),
      /<file path="big\.txt" truncated="first 65536 bytes of 196608">/,
    );
  });

  test("@mentions are found, quoted ones too, without trailing punctuation", () => {
    assert.deepEqual(atMentions('look at @src/a.ts, and @"my file.txt". Not an@email'), [
      "src/a.ts",
      "my file.txt",
    ]);
  });

  test("outside a git repository the listing follows .gitignore and skips .git and node_modules", async () => {
    const plain = join(root, "plain");
    mkdirSync(join(plain, "node_modules", "x"), { recursive: true });
    mkdirSync(join(plain, "build"), { recursive: true });
    mkdirSync(join(plain, "lib"), { recursive: true });
    writeFileSync(join(plain, ".gitignore"), "build/\n*.log\n/top-only.txt\n");
    for (const f of [
      "node_modules/x/i.js",
      "build/out.js",
      "lib/keep.ts",
      "lib/debug.log",
      "top-only.txt",
      "lib/top-only.txt",
    ])
      writeFileSync(join(plain, f), "");
    assert.deepEqual(await listWorkspaceFiles(plain), [".gitignore", "lib/keep.ts", "lib/top-only.txt"]);
  });

  test("a repository's own core.fsmonitor never runs when its files are listed", async () => {
    const repo = join(root, "hostile-repo");
    mkdirSync(repo);
    const git = (...a: string[]) => execFileSync("git", ["-C", repo, ...a], { stdio: "ignore" });
    git("init", "-q");
    writeFileSync(join(repo, "tracked.txt"), "x\n");
    git("add", "tracked.txt");
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x");
    const marker = join(root, "fsmonitor-ran");
    git("config", "core.fsmonitor", `touch ${marker}; false #`);
    writeFileSync(join(repo, "new.txt"), "");
    assert.deepEqual((await listWorkspaceFiles(repo)).sort(), ["new.txt", "tracked.txt"]);
    assert.equal(existsSync(marker), false, "the repository's fsmonitor program ran on the host");
  });
});
