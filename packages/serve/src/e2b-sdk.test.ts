// The official `e2b` SDK, unmodified, against `hands serve` on bwrap: the environment variables
// E2B documents point it here, and every call below goes through the SDK's real code path.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { CommandExitError, NotFoundError, Sandbox } from "e2b";
import { raw, startTestServe, type TestServe } from "./test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

describe("e2b SDK against hands serve (bwrap)", { skip, timeout: 120_000 }, () => {
  let s: TestServe;
  let sb: Sandbox;

  before(async () => {
    s = await startTestServe({ warm: { base: 1 } });
    sb = await Sandbox.create({ metadata: { suite: "sdk", n: "1" }, envs: { SANDBOX_VAR: "from-create" } });
  });
  after(async () => {
    await sb?.kill().catch(() => {});
    await s?.stop();
  });

  it("creates a sandbox and reports it through getInfo, list and isRunning", async () => {
    assert.match(sb.sandboxId, /^[a-z0-9]{20}$/);
    const info = await sb.getInfo();
    assert.equal(info.sandboxId, sb.sandboxId);
    assert.equal(info.templateId, "base");
    assert.deepEqual(info.metadata, { suite: "sdk", n: "1" });
    assert.equal(info.state, "running");
    assert.ok(info.endAt.getTime() > Date.now() + 200_000, "default timeout is 300 s");
    assert.equal(await sb.isRunning(), true);
    const page = await Sandbox.list({ query: { metadata: { suite: "sdk" } } }).nextItems();
    assert.deepEqual(
      page.map((p) => p.sandboxId),
      [sb.sandboxId],
    );
    assert.equal((await Sandbox.list({ query: { metadata: { suite: "other" } } }).nextItems()).length, 0);
  });

  it("runs foreground commands: stdout and stderr streamed, envs, cwd, user", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const r = await sb.commands.run('echo "out $SANDBOX_VAR $CMD_VAR"; echo oops >&2; pwd; echo $HOME', {
      envs: { CMD_VAR: "from-run" },
      onStdout: (d) => void out.push(d),
      onStderr: (d) => void err.push(d),
    });
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, "out from-create from-run\n/home/user\n/home/user\n");
    assert.equal(r.stderr, "oops\n");
    assert.equal(out.join(""), r.stdout);
    assert.equal(err.join(""), "oops\n");
    await sb.commands.run("mkdir -p /home/user/proj/sub");
    assert.equal(
      (await sb.commands.run("pwd", { cwd: "/home/user/proj/sub" })).stdout,
      "/home/user/proj/sub\n",
    );
    assert.equal((await sb.commands.run("echo $USER", { user: "root" })).stdout, "root\n");
    // "root" is only a name here: the sandbox has one unprivileged uid and it is never host root.
    assert.equal((await sb.commands.run("id -u", { user: "root" })).stdout, "1000\n");
  });

  it("turns a non-zero exit into CommandExitError with the exit code and output", async () => {
    await assert.rejects(sb.commands.run("echo partial; echo bad >&2; exit 7"), (e: unknown) => {
      assert.ok(e instanceof CommandExitError);
      assert.equal(e.exitCode, 7);
      assert.equal(e.stdout, "partial\n");
      assert.equal(e.stderr, "bad\n");
      return true;
    });
  });

  it("runs background commands: list, sendStdin, connect, kill", async () => {
    const h = await sb.commands.run("read line; echo got:$line; sleep 60", { background: true, stdin: true });
    assert.ok(h.pid > 0);
    const listed = await sb.commands.list();
    assert.ok(listed.some((p) => p.pid === h.pid && p.args.includes("read line; echo got:$line; sleep 60")));
    const seen: string[] = [];
    const again = await sb.commands.connect(h.pid, { onStdout: (d) => void seen.push(d) });
    await sb.commands.sendStdin(h.pid, "hello\n");
    for (let i = 0; i < 100 && !seen.join("").includes("got:hello"); i++)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(seen.join(""), "got:hello\n");
    assert.equal(await sb.commands.kill(h.pid), true);
    await assert.rejects(again.wait(), (e: unknown) => e instanceof CommandExitError);
    assert.equal(again.exitCode, -1);
    assert.equal(await sb.commands.kill(h.pid), false, "a process that is gone is not found");
    assert.ok(!(await sb.commands.list()).some((p) => p.pid === h.pid));
  });

  it("writes, reads, lists, stats, moves and removes files", async () => {
    const w = await sb.files.write("notes/a.txt", "alpha\n");
    assert.equal(w.path, "/home/user/notes/a.txt");
    assert.equal(await sb.files.read("/home/user/notes/a.txt"), "alpha\n");
    assert.equal((await sb.commands.run("cat notes/a.txt")).stdout, "alpha\n", "commands see the same files");
    const bytes = new Uint8Array(3 * 1024 * 1024 + 17).map((_, i) => (i * 7) % 256);
    await sb.files.write("bin/blob", bytes.buffer);
    const back = await sb.files.read("bin/blob", { format: "bytes" });
    assert.equal(back.length, bytes.length);
    assert.ok(Buffer.from(back).equals(Buffer.from(bytes)), "3 MiB round trip is byte-exact");
    const many = await sb.files.write([
      { path: "multi/one.txt", data: "1" },
      { path: "multi/two.txt", data: "22" },
    ]);
    assert.deepEqual(
      many.map((m) => m.path),
      ["/home/user/multi/one.txt", "/home/user/multi/two.txt"],
    );
    const oct = await sb.files.write("oct/x.txt", "octet", { useOctetStream: true } as never);
    assert.equal(oct.path, "/home/user/oct/x.txt");
    assert.equal(await sb.files.read("oct/x.txt"), "octet");
    const entries = await sb.files.list("multi");
    assert.deepEqual(
      entries.map((e) => [e.name, e.type, e.size]),
      [
        ["one.txt", "file", 1],
        ["two.txt", "file", 2],
      ],
    );
    const st = await sb.files.getInfo("bin/blob");
    assert.equal(st.type, "file");
    assert.equal(st.size, bytes.length);
    assert.ok(st.modifiedTime && Math.abs(st.modifiedTime.getTime() - Date.now()) < 60_000);
    assert.equal(await sb.files.makeDir("made/deep"), true);
    assert.equal(
      await sb.files.makeDir("made/deep"),
      false,
      "an existing directory is reported, not an error",
    );
    const moved = await sb.files.rename("notes/a.txt", "made/deep/a.txt");
    assert.equal(moved.path, "/home/user/made/deep/a.txt");
    assert.equal(await sb.files.exists("notes/a.txt"), false);
    assert.equal(await sb.files.exists("made/deep/a.txt"), true);
    await sb.files.remove("made");
    assert.equal(await sb.files.exists("made"), false);
    await assert.rejects(sb.files.read("no/such/file"), (e: unknown) => e instanceof NotFoundError);
  });

  it("closes a command's stdin, uploads gzip, reads as a stream, watches recursively", async () => {
    const cat = await sb.commands.run("cat; echo end", { background: true, stdin: true });
    await sb.commands.sendStdin(cat.pid, "piped\n");
    await sb.commands.closeStdin(cat.pid);
    const done = await cat.wait();
    assert.equal(done.stdout, "piped\nend\n");
    const gz = await sb.files.write("gz/data.txt", "compressed on the wire", { gzip: true } as never);
    assert.equal(gz.path, "/home/user/gz/data.txt");
    assert.equal(await sb.files.read("gz/data.txt"), "compressed on the wire");
    const stream = await sb.files.read("gz/data.txt", { format: "stream" });
    const chunks: Uint8Array[] = [];
    for await (const c of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(c);
    assert.equal(Buffer.concat(chunks).toString(), "compressed on the wire");
    await sb.files.makeDir("tree/a/b");
    const seen: string[] = [];
    const w = await sb.files.watchDir("tree", (e) => void seen.push(`${e.type}:${e.name}`), {
      recursive: true,
    });
    await sb.commands.run("echo x > tree/a/b/deep.txt");
    for (let i = 0; i < 100 && !seen.includes("create:a/b/deep.txt"); i++)
      await new Promise((r) => setTimeout(r, 20));
    await w.stop();
    assert.ok(seen.includes("create:a/b/deep.txt"), JSON.stringify(seen));
  });

  it("watches a directory", async () => {
    await sb.files.makeDir("watched");
    const events: Array<{ name: string; type: string }> = [];
    const handle = await sb.files.watchDir("watched", (e) => {
      events.push({ name: e.name, type: String(e.type) });
    });
    await sb.files.write("watched/new.txt", "x");
    for (let i = 0; i < 100 && !events.some((e) => e.name === "new.txt"); i++)
      await new Promise((r) => setTimeout(r, 20));
    await handle.stop();
    assert.ok(
      events.some((e) => e.name === "new.txt" && e.type === "create"),
      JSON.stringify(events),
    );
  });

  it("sets the timeout, and the legacy POST /sandboxes creates too", async () => {
    await sb.setTimeout(600_000);
    const info = await sb.getInfo();
    assert.ok(info.endAt.getTime() > Date.now() + 500_000);
    const r = await raw(`${s.apiUrl}/sandboxes`, {
      method: "POST",
      headers: { "x-api-key": s.key, "content-type": "application/json" },
      body: JSON.stringify({ templateID: "base", timeout: 30 }),
    });
    assert.equal(r.status, 201, r.text);
    const body = r.json() as { sandboxID: string; envdVersion: string; envdAccessToken: string };
    assert.match(body.sandboxID, /^[a-z0-9]{20}$/);
    assert.ok(body.envdAccessToken.length > 20);
    assert.equal(await Sandbox.kill(body.sandboxID), true);
    assert.equal(await Sandbox.kill(body.sandboxID), false, "kill is idempotent: the second finds nothing");
  });

  it("pages the list with X-Next-Token and filters by state", async () => {
    const extra = await Promise.all(
      [1, 2, 3].map((i) => Sandbox.create({ metadata: { paging: "yes", i: String(i) } })),
    );
    try {
      const pager = Sandbox.list({ query: { metadata: { paging: "yes" } }, limit: 2 });
      const first = await pager.nextItems();
      assert.equal(first.length, 2);
      assert.equal(pager.hasNext, true);
      const second = await pager.nextItems();
      assert.equal(second.length, 1);
      assert.equal(pager.hasNext, false);
      const ids = new Set([...first, ...second].map((x) => x.sandboxId));
      assert.deepEqual(ids, new Set(extra.map((x) => x.sandboxId)));
      await extra[0]?.pause();
      const paused = await Sandbox.list({
        query: { metadata: { paging: "yes" }, state: ["paused"] },
      }).nextItems();
      assert.deepEqual(
        paused.map((p) => p.sandboxId),
        [extra[0]?.sandboxId],
      );
    } finally {
      await Promise.all(extra.map((x) => x.kill()));
    }
  });

  it("pauses (files and processes kept) and resumes through connect", async () => {
    const p = await Sandbox.create();
    try {
      await p.files.write("keep.txt", "kept");
      const bg = await p.commands.run("sleep 300", { background: true });
      assert.equal(await p.pause(), true);
      assert.equal(await Sandbox.pause(p.sandboxId), false, "pausing a paused sandbox reports false");
      assert.equal((await Sandbox.getInfo(p.sandboxId)).state, "paused");
      assert.equal(await p.isRunning(), false);
      const resumed = await Sandbox.connect(p.sandboxId);
      assert.equal((await resumed.getInfo()).state, "running");
      assert.equal(await resumed.files.read("keep.txt"), "kept");
      assert.deepEqual(
        (await resumed.commands.list()).map((c) => c.pid),
        [bg.pid],
        "a pause keeps the processes (frozen)",
      );
    } finally {
      await Sandbox.kill(p.sandboxId);
    }
  });

  it("hands over a warm sandbox with the create's envs and metadata", async () => {
    for (let i = 0; i < 200 && s.service.poolSize === 0; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(s.service.poolSize, 1, "the pool refilled");
    const w = await Sandbox.create({ envs: { WARM: "handed-over" }, metadata: { warm: "1" } });
    try {
      assert.equal(s.service.poolSize, 0, "this create took the warm sandbox");
      assert.equal((await w.commands.run("echo $WARM")).stdout, "handed-over\n");
      assert.deepEqual((await w.getInfo()).metadata, { warm: "1" });
      await w.files.write("mine.txt", "w");
      assert.equal(await sb.files.exists("mine.txt"), false, "no sharing with another sandbox");
    } finally {
      await w.kill();
    }
  });

  it("reports a killed sandbox as gone", async () => {
    const k = await Sandbox.create();
    await k.kill();
    assert.equal(await k.isRunning(), false);
    await assert.rejects(Sandbox.getInfo(k.sandboxId), /not found/i);
    await assert.rejects(k.commands.run("true"));
  });
});
