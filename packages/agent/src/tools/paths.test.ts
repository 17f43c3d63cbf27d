import assert from "node:assert/strict";
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { displayPath, isInGitInternals, PathError, realRoot, resolveInWorkspace } from "./paths.js";
import { readFileTool } from "./read-file.js";
import { makeTestContext } from "./test-context.js";

describe("resolveInWorkspace", () => {
  let root: string;
  let ws: string;
  let extra: string;
  let ctx: { workspace: string; readRoots: string[] };

  before(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "hands-paths-")));
    ws = join(root, "ws");
    extra = join(root, "saved");
    mkdirSync(join(ws, "src"), { recursive: true });
    mkdirSync(`${ws}_evil`);
    mkdirSync(extra);
    mkdirSync(join(root, "outdir"));
    writeFileSync(join(ws, "src", "a.ts"), "a");
    writeFileSync(join(root, "secret.txt"), "s");
    writeFileSync(join(extra, "out.txt"), "saved");
    writeFileSync(join(`${ws}_evil`, "x.txt"), "evil");
    symlinkSync(join(root, "secret.txt"), join(ws, "link-file"));
    symlinkSync(join(root, "outdir"), join(ws, "link-dir"));
    symlinkSync(join(ws, "src"), join(ws, "inner-link"));
    symlinkSync(join(root, "nowhere"), join(ws, "dangling"));
    ctx = { workspace: ws, readRoots: [extra] };
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("resolves relative and absolute paths inside the workspace", async () => {
    assert.equal(await resolveInWorkspace(ctx, "src/a.ts"), join(ws, "src/a.ts"));
    assert.equal(await resolveInWorkspace(ctx, join(ws, "src/a.ts")), join(ws, "src/a.ts"));
    assert.equal(await resolveInWorkspace(ctx, "./src/../src/a.ts"), join(ws, "src/a.ts"));
    assert.equal(await resolveInWorkspace(ctx, "."), ws);
    assert.equal(await resolveInWorkspace(ctx, ""), ws);
    // not existing yet: resolved through its nearest existing parent
    assert.equal(
      await resolveInWorkspace(ctx, "new/deep/file.ts", { forWrite: true }),
      join(ws, "new/deep/file.ts"),
    );
    // symlinks inside the workspace resolve to their real target
    assert.equal(await resolveInWorkspace(ctx, "inner-link/a.ts"), join(ws, "src/a.ts"));
  });

  it("refuses .. escapes and absolute paths outside", async () => {
    await assert.rejects(resolveInWorkspace(ctx, "../secret.txt"), PathError);
    await assert.rejects(resolveInWorkspace(ctx, "src/../../secret.txt"), /outside the workspace/);
    await assert.rejects(resolveInWorkspace(ctx, "/etc/passwd"), /outside the workspace/);
    await assert.rejects(resolveInWorkspace(ctx, join(root, "secret.txt")), /outside the workspace/);
  });

  it("refuses the /ws vs /ws_evil prefix trap", async () => {
    await assert.rejects(resolveInWorkspace(ctx, `${ws}_evil/x.txt`), /outside the workspace/);
    await assert.rejects(resolveInWorkspace(ctx, "../ws_evil/x.txt"), /outside the workspace/);
  });

  it("refuses symlinks leading outside (file, folder, new file under a linked folder, dangling)", async () => {
    await assert.rejects(resolveInWorkspace(ctx, "link-file"), /symbolic link/);
    await assert.rejects(resolveInWorkspace(ctx, "link-dir"), /symbolic link/);
    await assert.rejects(
      resolveInWorkspace(ctx, "link-dir/new.txt", { forWrite: true }),
      /outside the workspace/,
    );
    await assert.rejects(resolveInWorkspace(ctx, "link-dir/a/b/c.txt", { forWrite: true }), PathError);
    await assert.rejects(resolveInWorkspace(ctx, "dangling", { forWrite: true }), /broken symbolic link/);
  });

  it("refuses NUL bytes", async () => {
    await assert.rejects(resolveInWorkspace(ctx, "src/a.ts\0.png"), /NUL/);
  });

  it("allows reads (not writes) inside readRoots", async () => {
    assert.equal(await resolveInWorkspace(ctx, join(extra, "out.txt")), join(extra, "out.txt"));
    await assert.rejects(
      resolveInWorkspace(ctx, join(extra, "out.txt"), { forWrite: true }),
      /outside the workspace/,
    );
  });

  it("displayPath and isInGitInternals", () => {
    assert.equal(displayPath(ctx, join(ws, "src", "a.ts")), "src/a.ts");
    assert.equal(displayPath(ctx, ws), ".");
    assert.equal(displayPath(ctx, join(extra, "out.txt")), join(extra, "out.txt"));
    assert.equal(isInGitInternals(ctx, join(ws, ".git", "config")), true);
    assert.equal(isInGitInternals(ctx, join(ws, "sub", ".git", "HEAD")), true);
    assert.equal(isInGitInternals(ctx, join(ws, ".gitignore")), false);
  });
});

describe("realRoot (roots resolved once per process)", () => {
  let root: string;
  before(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "hands-roots-")));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("a root given through a symlink is its real folder; a missing one is itself until it exists", () => {
    mkdirSync(join(root, "real"));
    symlinkSync(join(root, "real"), join(root, "alias"));
    assert.equal(realRoot(join(root, "alias")), join(root, "real"));
    const later = join(root, "made-later");
    assert.equal(realRoot(later), later);
    mkdirSync(join(root, "target"));
    symlinkSync(join(root, "target"), later);
    assert.equal(realRoot(later), join(root, "target"), "not remembered while it did not exist");
  });

  it("a workspace swapped for a symlink to elsewhere after first use: reading through it is refused", async () => {
    const ws = join(root, "ws");
    const outside = join(root, "outside");
    mkdirSync(ws);
    mkdirSync(outside);
    writeFileSync(join(ws, "a.txt"), "mine");
    writeFileSync(join(outside, "secret.txt"), "not yours");
    const t = makeTestContext({ workspace: ws });
    const first = await readFileTool.execute({ path: "a.txt" }, t.ctx);
    assert.match(first.output, /mine/);
    renameSync(ws, join(root, "ws-old"));
    symlinkSync(outside, ws);
    const r = await readFileTool.execute({ path: "secret.txt" }, t.ctx);
    assert.equal(r.isError, true, r.output);
    assert.doesNotMatch(r.output, /not yours/);
    await t.cleanup();
  });
});
