// Checkpoints in a shadow git repository, with real git, real files and real child processes
// changing them (as run_command would).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { openCheckpoints, type TurnCheckpoints } from "./checkpoints.js";
import { type GitCheckpoints, MAX_SNAPSHOT_FILE_BYTES, shadowRepoPath } from "./git-checkpoints.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "hands-checkpoints-")));
after(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
function setup(files: Record<string, string> = {}) {
  const ws = join(root, `ws${++n}`);
  mkdirSync(ws);
  for (const [p, text] of Object.entries(files)) write(ws, p, text);
  return { ws, dir: join(root, `data${n}`, "checkpoints") };
}

function write(ws: string, path: string, text: string): void {
  mkdirSync(join(ws, path, ".."), { recursive: true });
  writeFileSync(join(ws, path), text);
}

/** Changes files the way a command in the sandbox does: another process, not our file tools. */
function sh(ws: string, script: string): void {
  execFileSync("sh", ["-c", script], { cwd: ws });
}

async function open(ws: string, dir: string, sessionId = "s1"): Promise<TurnCheckpoints> {
  const cps = await openCheckpoints({
    workspace: ws,
    dir,
    sessionId,
    onWarning: (m) => {
      throw new Error(`unexpected warning: ${m}`);
    },
  });
  assert.equal(cps.kind, "git");
  return cps;
}

/** One request: begin, wait for the snapshot as a tool would, change files, end. */
async function turn(cps: TurnCheckpoints, label: string, change: () => void): Promise<void> {
  cps.begin(label);
  await cps.beforeChange();
  change();
  await cps.end();
}

function read(ws: string, path: string): string | undefined {
  return existsSync(join(ws, path)) ? readFileSync(join(ws, path), "utf8") : undefined;
}

/** Every file under a folder with its content hash, to prove it was not touched. */
function fingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath ?? (e as unknown as { path: string }).path, e.name);
    out[p] = createHash("sha1").update(readFileSync(p)).digest("hex");
  }
  return out;
}

describe("git checkpoints", () => {
  test("a command's creations, changes, deletions and chmod are undone, new folders too", async () => {
    const { ws, dir } = setup({ "a.txt": "A\n", "b.txt": "B\n", "run.sh": "echo hi\n", "keep/x": "x" });
    const cps = await open(ws, dir);
    await turn(cps, "change things", () =>
      sh(
        ws,
        "echo A2 > a.txt && rm b.txt && mkdir -p new/deep && echo n > new/deep/n.txt && chmod +x run.sh",
      ),
    );
    const diff = await cps.diff();
    assert.match(diff, /-A\n\+A2/);
    assert.match(diff, /deleted file mode 100644\n[\s\S]*-B/);
    assert.match(diff, /new file mode 100644\n[\s\S]*\+n/);
    assert.match(diff, /old mode 100644\nnew mode 100755/);

    const r = await cps.undo();
    assert.deepEqual(r, {
      label: "change things",
      paths: ["a.txt", "b.txt", "new/deep/n.txt", "run.sh"],
      kept: [],
    });
    assert.equal(read(ws, "a.txt"), "A\n");
    assert.equal(read(ws, "b.txt"), "B\n");
    assert.equal(existsSync(join(ws, "new")), false, "the folders the turn made are gone");
    assert.equal(statSync(join(ws, "run.sh")).mode & 0o111, 0);
    assert.equal(read(ws, "keep/x"), "x");
    assert.equal(await cps.undo(), undefined);
    assert.equal(await cps.diff(), "");
    await cps.close();
  });

  test("two turns are undone newest first; a turn that changed nothing is skipped; edits between turns stay", async () => {
    const { ws, dir } = setup({ "f.txt": "v0\n", "notes.md": "mine\n" });
    const cps = await open(ws, dir);
    await turn(cps, "first", () => sh(ws, "echo v1 > f.txt"));
    write(ws, "notes.md", "mine, edited by hand\n");
    await turn(cps, "second", () => sh(ws, "echo v2 > f.txt && echo g > g.txt"));
    await turn(cps, "just looking", () => {});

    const second = await cps.undo();
    assert.equal(second?.label, "second");
    assert.deepEqual(second?.paths, ["f.txt", "g.txt"]);
    assert.equal(read(ws, "f.txt"), "v1\n");
    assert.equal(read(ws, "g.txt"), undefined);
    const first = await cps.undo();
    assert.equal(first?.label, "first");
    assert.deepEqual(first?.paths, ["f.txt"]);
    assert.equal(read(ws, "f.txt"), "v0\n");
    assert.equal(read(ws, "notes.md"), "mine, edited by hand\n", "the user's own edit is not undone");
    assert.equal(await cps.undo(), undefined);
  });

  test("the checkpoints outlive the process: undo after a resume, and of a turn killed half-way", async () => {
    const { ws, dir } = setup({ "f.txt": "v0\n" });
    const a = await open(ws, dir);
    await turn(a, "finished", () => sh(ws, "echo v1 > f.txt"));
    // Killed in the middle of the next turn: begun, files changed, never ended.
    a.begin("killed");
    await a.beforeChange();
    sh(ws, "echo v2 > f.txt && echo half > half.txt");
    await a.close();

    const b = await open(ws, dir);
    const other = await open(ws, dir, "another-session");
    assert.equal(await other.undo(), undefined, "each session undoes only its own turns");
    const killed = await b.undo();
    assert.equal(killed?.label, "killed");
    assert.deepEqual(killed?.paths, ["f.txt", "half.txt"]);
    assert.equal(read(ws, "f.txt"), "v1\n");
    const c = await open(ws, dir);
    assert.equal((await c.undo())?.label, "finished");
    assert.equal(read(ws, "f.txt"), "v0\n");
    assert.equal(await c.undo(), undefined);
  });

  test("sessions idle past the retention lose their checkpoints when another session opens; recent ones keep theirs", async () => {
    const { ws, dir } = setup({ "f.txt": "v0\n" });
    const old = await open(ws, dir, "old-session");
    await turn(old, "long ago", () => sh(ws, "echo old > f.txt"));
    await old.close();
    const recent = await open(ws, dir, "recent-session");
    await turn(recent, "lately", () => sh(ws, "echo recent > f.txt"));
    await recent.close();
    const repo = shadowRepoPath(dir, ws);
    const monthAgo = (Date.now() - 40 * 24 * 3600_000) / 1000;
    utimesSync(join(repo, "indexes", "old-session"), monthAgo, monthAgo);
    const refs = () =>
      execFileSync("git", ["--git-dir", repo, "for-each-ref", "--format=%(refname)"], { encoding: "utf8" });
    assert.match(refs(), /refs\/hands\/old-session\//);

    // Opening a session prunes in the background; close() waits for it.
    const now = await open(ws, dir, "new-session");
    await turn(now, "today", () => sh(ws, "echo new > f.txt"));
    await now.close();
    assert.doesNotMatch(refs(), /old-session/);
    assert.ok(!existsSync(join(repo, "indexes", "old-session")));
    assert.match(refs(), /refs\/hands\/recent-session\//);
    assert.deepEqual(await (now as GitCheckpoints).pruneIdleSessions(), [], "nothing idle is left to drop");

    // The old session has nothing left to undo; the recent one still undoes its turn.
    assert.equal(await (await open(ws, dir, "old-session")).undo(), undefined);
    assert.equal((await (await open(ws, dir, "recent-session")).undo())?.label, "lately");
    assert.equal(read(ws, "f.txt"), "old\n");
  });

  test(".gitignored files, heavy folders and files over the size cap are left alone", async () => {
    const big = "x".repeat(MAX_SNAPSHOT_FILE_BYTES + 1);
    const { ws, dir } = setup({
      ".gitignore": "*.log\nbuild/\n",
      "app.log": "old log\n",
      "old-big.bin": big,
      "src.txt": "s\n",
    });
    const cps = await open(ws, dir);
    await turn(cps, "noisy", () => {
      sh(ws, "echo new log >> app.log && mkdir -p build node_modules/pkg && echo o > build/out.js");
      sh(ws, "echo m > node_modules/pkg/index.js && echo s2 > src.txt");
      writeFileSync(join(ws, "new-big.bin"), big);
    });
    const diff = await cps.diff();
    assert.doesNotMatch(diff, /app\.log|build|node_modules|big\.bin/);
    const r = await cps.undo();
    assert.deepEqual(r?.paths, ["src.txt"]);
    assert.deepEqual(r?.kept, [{ path: "new-big.bin", why: "too large to checkpoint" }]);
    assert.equal(read(ws, "src.txt"), "s\n");
    assert.equal(read(ws, "app.log"), "old log\nnew log\n");
    assert.equal(read(ws, "build/out.js"), "o\n");
    assert.equal(read(ws, "node_modules/pkg/index.js"), "m\n");
    assert.equal(statSync(join(ws, "new-big.bin")).size, big.length);
    assert.equal(statSync(join(ws, "old-big.bin")).size, big.length);
    // Nothing big went into the shadow repository either.
    const repoBytes = Object.keys(fingerprint(shadowRepoPath(dir, ws))).reduce(
      (t, p) => t + statSync(p).size,
      0,
    );
    assert.ok(repoBytes < MAX_SNAPSHOT_FILE_BYTES, `shadow repository holds ${repoBytes} bytes`);
  });

  test("a file the turn un-ignores (it existed before, unsnapshotted) is not deleted", async () => {
    const { ws, dir } = setup({ ".gitignore": "secret.env\n", "secret.env": "KEY=1\n" });
    await new Promise((r) => setTimeout(r, 400)); // so the file is clearly older than the turn
    const cps = await open(ws, dir);
    await turn(cps, "unignore", () => sh(ws, ": > .gitignore && echo made > made.txt"));
    const r = await cps.undo();
    assert.deepEqual(r?.paths, [".gitignore", "made.txt"]);
    assert.deepEqual(r?.kept, [
      { path: "secret.env", why: "it existed before the request but was not checkpointed" },
    ]);
    assert.equal(read(ws, ".gitignore"), "secret.env\n");
    assert.equal(read(ws, "secret.env"), "KEY=1\n");
    assert.equal(read(ws, "made.txt"), undefined);
  });

  test("files come back byte for byte, whatever the workspace's .gitattributes say", async () => {
    const { ws, dir } = setup({
      ".gitattributes": "* text=auto eol=lf\n*.txt ident filter=evil\n",
      "crlf.txt": "one\r\ntwo $Id$\r\n",
    });
    const cps = await open(ws, dir);
    await turn(cps, "touch", () => sh(ws, "echo changed > crlf.txt"));
    await cps.undo();
    assert.equal(read(ws, "crlf.txt"), "one\r\ntwo $Id$\r\n");
  });

  test("a workspace that is a git repository keeps its .git untouched", async () => {
    const { ws, dir } = setup({ "tracked.txt": "t\n" });
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=u", "-c", "user.email=u@x", ...args], {
        cwd: ws,
        encoding: "utf8",
      });
    git("init", "-q");
    git("add", "tracked.txt");
    git("commit", "-q", "-m", "init");
    write(ws, "staged.txt", "s\n");
    git("add", "staged.txt");
    const before = fingerprint(join(ws, ".git"));
    const status = git("status", "--porcelain");

    const cps = await open(ws, dir);
    await turn(cps, "edit", () => sh(ws, "echo t2 > tracked.txt && echo u > untracked.txt && rm staged.txt"));
    assert.match(await cps.diff(), /-t\n\+t2/);
    await cps.undo();
    assert.equal(read(ws, "tracked.txt"), "t\n");
    assert.equal(read(ws, "staged.txt"), "s\n");
    assert.equal(read(ws, "untracked.txt"), undefined);
    assert.deepEqual(
      fingerprint(join(ws, ".git")),
      before,
      "the workspace's .git (index, HEAD, refs) is as it was",
    );
    assert.equal(git("status", "--porcelain"), status);
  });

  test("a folder with its own .git inside the workspace and a data folder inside it are not snapshotted", async () => {
    const { ws } = setup({ "a.txt": "a\n" });
    const dir = join(ws, ".hands-data", "checkpoints");
    execFileSync("git", ["init", "-q", join(ws, "vendor")]);
    write(ws, "vendor/lib.txt", "v\n");
    const cps = await open(ws, dir);
    await turn(cps, "t", () => sh(ws, "echo a2 > a.txt && echo v2 > vendor/lib.txt"));
    const diff = await cps.diff();
    assert.match(diff, /a\.txt/);
    assert.doesNotMatch(diff, /vendor|hands-data/);
    assert.deepEqual((await cps.undo())?.paths, ["a.txt"]);
    assert.equal(read(ws, "vendor/lib.txt"), "v2\n");
  });

  test("a checkpoint that cannot be taken: a warning, the turn goes on, /undo says why once", async () => {
    const { ws, dir } = setup({ "f.txt": "v0\n" });
    mkdirSync(join(dir, ".."), { recursive: true });
    writeFileSync(dir, "a file where the checkpoints folder should be");
    const warnings: string[] = [];
    const cps = await openCheckpoints({
      workspace: ws,
      dir,
      sessionId: "s",
      onWarning: (m) => warnings.push(m),
    });
    cps.begin("doomed");
    await cps.beforeChange();
    sh(ws, "echo v1 > f.txt");
    await cps.end();
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0] ?? "",
      /^no checkpoint for this request, so \/undo cannot revert it: .*(EEXIST|ENOTDIR)/,
    );
    await assert.rejects(cps.undo(), /the request "doomed" had no checkpoint .*\/undo again goes on/);
    await assert.rejects(cps.undo(), /EEXIST|ENOTDIR/);
    assert.equal(read(ws, "f.txt"), "v1\n");
  });

  test("without git the fallback keeps the file tools' writes in memory", async () => {
    const { ws, dir } = setup();
    const path = process.env.PATH;
    process.env.PATH = join(root, "no-such-bin");
    try {
      const cps = await openCheckpoints({ workspace: ws, dir, sessionId: "s" });
      assert.equal(cps.kind, "memory");
    } finally {
      process.env.PATH = path;
    }
  });

  test("a session id that is not a plain name is refused", async () => {
    const { ws, dir } = setup();
    await assert.rejects(openCheckpoints({ workspace: ws, dir, sessionId: "../x" }), /invalid session id/);
  });
});
