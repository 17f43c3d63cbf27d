import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createSandbox, LOCAL_SANDBOX_WARNING, LocalSandbox } from "./index.js";

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (killed, not yet reaped by its new parent) counts as dead.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

async function waitDead(pids: number[], ms = 2000): Promise<number[]> {
  const deadline = Date.now() + ms;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 25));
    alive = alive.filter(isAlive);
  }
  return alive;
}

async function readPids(file: string): Promise<number[]> {
  const text = await readFile(file, "utf8");
  return text
    .split(/\s+/)
    .filter(Boolean)
    .map((s) => Number(s));
}

describe("LocalSandbox", () => {
  let root: string;
  let ws: string;
  let sb: LocalSandbox;

  before(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), "hands-sbx-")));
    ws = join(root, "ws");
    await mkdir(ws);
    await mkdir(join(root, "ws_evil"));
    await writeFile(join(root, "ws_evil", "secret.txt"), "evil");
    await writeFile(join(root, "outside.txt"), "outside");
    sb = new LocalSandbox({ workspace: ws });
  });
  after(async () => {
    await sb.destroy();
    await rm(root, { recursive: true, force: true });
  });

  it("says it is not isolated", () => {
    assert.equal(sb.kind, "local");
    assert.equal(sb.isolated, false);
    assert.match(LOCAL_SANDBOX_WARNING, /does not isolate/);
    assert.equal(sb.workspace, ws);
  });

  it("separates stdout, stderr and the exit code", async () => {
    const r = await sb.exec("echo out; echo err >&2; exit 3");
    assert.equal(r.stdout, "out\n");
    assert.equal(r.stderr, "err\n");
    assert.equal(r.exitCode, 3);
    assert.equal(r.signal, null);
    assert.equal(r.timedOut, false);
    assert.equal(r.aborted, false);
    assert.equal(r.truncated, false);
    assert.ok(r.durationMs >= 0);
    const ok = await sb.exec("true");
    assert.equal(ok.exitCode, 0);
    assert.equal(ok.stdout, "");
  });

  it("runs in the workspace, or a cwd inside it", async () => {
    assert.equal((await sb.exec("pwd")).stdout.trim(), ws);
    await mkdir(join(ws, "sub"), { recursive: true });
    assert.equal((await sb.exec("pwd", { cwd: "sub" })).stdout.trim(), join(ws, "sub"));
    assert.equal((await sb.exec("pwd", { cwd: join(ws, "sub") })).stdout.trim(), join(ws, "sub"));
  });

  it("refuses a cwd that escapes the workspace", async () => {
    await assert.rejects(sb.exec("pwd", { cwd: ".." }), /escapes the workspace/);
    await assert.rejects(sb.exec("pwd", { cwd: "/tmp" }), /escapes the workspace/);
    await assert.rejects(sb.exec("pwd", { cwd: `${ws}_evil` }), /escapes the workspace/);
    await symlink(root, join(ws, "up-link"));
    await assert.rejects(sb.exec("pwd", { cwd: "up-link" }), /escapes the workspace/);
    await assert.rejects(sb.exec("pwd", { cwd: "no-such-dir" }), /not a directory/);
  });

  it("closes stdin unless given, and passes stdin when given", async () => {
    const closed = await sb.exec("cat; echo end", { timeoutMs: 5000 });
    assert.equal(closed.stdout, "end\n");
    assert.equal(closed.timedOut, false);
    const fed = await sb.exec("tr a-z A-Z", { stdin: "hello" });
    assert.equal(fed.stdout, "HELLO");
  });

  it("passes extra env and streams output to callbacks", async () => {
    const chunks: string[] = [];
    const r = await sb.exec('echo "$GREETING"; echo e >&2', {
      env: { GREETING: "hi there" },
      onStdout: (c) => chunks.push(c),
    });
    assert.equal(r.stdout, "hi there\n");
    assert.equal(chunks.join(""), "hi there\n");
  });

  it("scrubs secrets from the environment", async () => {
    process.env["FOO_API_KEY"] = "sk-should-not-leak";
    process.env["HANDS_SECRET_THING"] = "nope";
    try {
      const r = await sb.exec(
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
        'echo "key=${FOO_API_KEY:-unset} h=${HANDS_SECRET_THING:-unset} path=${PATH:+set}"',
      );
      assert.equal(r.stdout.trim(), "key=unset h=unset path=set");
      const hints = await sb.exec('echo "$PAGER $GIT_TERMINAL_PROMPT $PYTHONUNBUFFERED"');
      assert.equal(hints.stdout.trim(), "cat 0 1");
    } finally {
      delete process.env["FOO_API_KEY"];
      delete process.env["HANDS_SECRET_THING"];
    }
  });

  it("on timeout kills the whole process tree, grandchildren included", async () => {
    const pidFile = join(ws, "tree.pids");
    const r = await sb.exec(
      `sleep 100 & echo $! >> tree.pids; bash -c 'sleep 100 & echo $! >> tree.pids; sleep 100' & echo $! >> tree.pids; wait`,
      { timeoutMs: 300 },
    );
    assert.equal(r.timedOut, true);
    assert.equal(r.exitCode, null);
    assert.ok(r.signal === "SIGTERM" || r.signal === "SIGKILL", String(r.signal));
    assert.ok(r.durationMs < 3000, `took ${r.durationMs}`);
    const pids = await readPids(pidFile);
    assert.equal(pids.length, 3);
    assert.deepEqual(await waitDead(pids), []);
  });

  it("escalates to SIGKILL when the command ignores SIGTERM", async () => {
    const started = Date.now();
    const r = await sb.exec(`trap '' TERM; sleep 100 & echo $! > term.pid; wait`, { timeoutMs: 200 });
    assert.equal(r.timedOut, true);
    assert.ok(Date.now() - started < 3000);
    assert.deepEqual(await waitDead(await readPids(join(ws, "term.pid"))), []);
  });

  it("a bounded burst of processes is all killed on timeout and does not hang", async () => {
    const started = Date.now();
    const r = await sb.exec(
      `for i in $(seq 1 30); do ( sleep 100 & echo $! >> burst.pids; wait ) & done; wait`,
      { timeoutMs: 700 },
    );
    assert.equal(r.timedOut, true);
    assert.ok(Date.now() - started < 4000);
    const pids = await readPids(join(ws, "burst.pids"));
    assert.ok(pids.length > 0);
    assert.deepEqual(await waitDead(pids), []);
  });

  it("a background job does not keep the call waiting, and is cleaned up", async () => {
    const started = Date.now();
    const r = await sb.exec("sleep 100 & echo $! > bg.pid; echo started");
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, "started\n");
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
    assert.deepEqual(await waitDead(await readPids(join(ws, "bg.pid"))), []);
  });

  it("abort signal stops the command", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 150);
    const r = await sb.exec("sleep 100 & echo $! > abort.pid; wait", {
      signal: ac.signal,
      timeoutMs: 10_000,
    });
    assert.equal(r.aborted, true);
    assert.equal(r.timedOut, false);
    assert.ok(r.durationMs < 3000);
    assert.deepEqual(await waitDead(await readPids(join(ws, "abort.pid"))), []);
    const pre = await sb.exec("echo never", { signal: AbortSignal.abort() });
    assert.equal(pre.aborted, true);
    assert.equal(pre.stdout, "");
  });

  it("caps huge output while streaming, with flat memory", async () => {
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const started = Date.now();
    const r = await sb.exec("yes 'hello world' | head -c 200000000; echo done >&2", { timeoutMs: 20_000 });
    const elapsed = Date.now() - started;
    const growth = process.memoryUsage().rss - rssBefore;
    assert.equal(r.exitCode, 0);
    assert.equal(r.truncated, true);
    assert.ok(r.stdout.length < 1024 * 1024 + 200, String(r.stdout.length));
    assert.ok(r.stdout.startsWith("hello world\nhello world\n"));
    assert.match(r.stdout, /\[… 19\d{7} bytes of output truncated …\]/);
    assert.equal(r.stderr, "done\n");
    assert.equal(r.stdoutBytes, 200_000_000);
    assert.equal(r.stderrBytes, 5);
    // Holding the output would cost the whole 200 MB; discarded chunks are garbage the collector
    // frees when it gets round to it, which on a busy machine has been seen at ~70 MB.
    assert.ok(growth < 128 * 1024 * 1024, `rss grew by ${growth}`);
    assert.ok(elapsed < 15_000, `took ${elapsed}`);
  });

  it("respects a custom maxOutputBytes", async () => {
    const r = await sb.exec("seq 1 10000", { maxOutputBytes: 20 });
    assert.equal(r.truncated, true);
    assert.ok(r.stdout.startsWith("1\n2\n3\n4\n5\n"));
    assert.ok(r.stdout.endsWith("999\n10000\n"), r.stdout);
  });

  it("file API stays inside the workspace", async () => {
    await sb.writeFile("a/b/c.txt", "hello");
    assert.equal(await readFile(join(ws, "a/b/c.txt"), "utf8"), "hello");
    assert.equal((await sb.readFile("a/b/c.txt")).toString(), "hello");
    assert.equal((await sb.readFile(join(ws, "a/b/c.txt"))).toString(), "hello");
    await assert.rejects(sb.readFile("../outside.txt"), /escapes the workspace/);
    await assert.rejects(sb.readFile(join(root, "outside.txt")), /escapes the workspace/);
    await assert.rejects(sb.readFile(`${ws}_evil/secret.txt`), /escapes the workspace/);
    await assert.rejects(sb.readFile("a\0b"), /NUL/);
    await assert.rejects(sb.writeFile("../escape.txt", "x"), /escapes the workspace/);
    await symlink(join(root, "outside.txt"), join(ws, "link-out.txt"));
    await assert.rejects(sb.readFile("link-out.txt"), /escapes the workspace/);
    await assert.rejects(sb.writeFile("link-out.txt", "x"), /escapes the workspace/);
    await symlink(join(root, "ws_evil"), join(ws, "dir-out"));
    await assert.rejects(sb.readFile("dir-out/secret.txt"), /escapes the workspace/);
    await assert.rejects(sb.writeFile("dir-out/new/file.txt", "x"), /escapes the workspace/);
    assert.equal(await readFile(join(root, "outside.txt"), "utf8"), "outside");
    await assert.rejects(readFile(join(root, "ws_evil", "new", "file.txt")));
  });

  it("destroy kills running commands and later calls fail clearly", async () => {
    const other = new LocalSandbox({ workspace: ws });
    const running = other.exec("sleep 100 & echo $! > destroy.pid; wait", { timeoutMs: 30_000 });
    // Running: its pid file is there (bounded wait; a loaded machine may take a while to start it).
    for (let i = 0; i < 250 && !existsSync(join(ws, "destroy.pid")); i++)
      await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(other.runningCount, 1);
    await other.destroy();
    const r = await running;
    assert.equal(r.aborted, true);
    assert.deepEqual(await waitDead(await readPids(join(ws, "destroy.pid"))), []);
    await assert.rejects(other.exec("true"), /destroyed/);
    await assert.rejects(other.readFile("x"), /destroyed/);
    await assert.rejects(other.writeFile("x", "y"), /destroyed/);
  });
});

describe("createSandbox", () => {
  it("creates a local sandbox and refuses unknown backends and missing workspaces", async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), "hands-sbx-c-")));
    try {
      const s = await createSandbox({ kind: "local", workspace: dir, env: { EXTRA: "yes" } });
      assert.equal(s.kind, "local");
      assert.equal((await s.exec("echo $EXTRA")).stdout, "yes\n");
      await s.destroy();
      await assert.rejects(
        createSandbox({ kind: "vm" as "local", workspace: dir }),
        /unknown sandbox backend: vm/,
      );
      await assert.rejects(createSandbox({ kind: "local", workspace: join(dir, "nope") }), /not a directory/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
