// Three `hands serve` nodes, each its own process, sharing one real PostgreSQL database: the
// official SDK creates through one node and works through the others (data-plane calls forwarded
// to the sandbox's node, streams included), quotas hold across nodes, and a node killed outright
// has its sandboxes marked lost while the other nodes keep serving.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { Sandbox as CodeInterpreter } from "@e2b/code-interpreter";
import { checkBwrap } from "@hands/sandbox";
import { CommandExitError, NotFoundError, RateLimitError, Sandbox } from "e2b";
import { runServeCommand } from "./command.js";
import { Keys } from "./keys.js";
import { PostgresStore } from "./store-postgres.js";
import { type NodeProcess, raw, startNodeProcess, testDatabase } from "./test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;
const DEAD_AFTER_MS = 2000;

async function until(f: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await f().catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return f().catch(() => false);
}

/** Processes whose command line names a folder (a node's sandboxes run under its data folder). */
function processesUnder(dir: string): string[] {
  const out = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
  return out.split("\n").filter((l) => l.includes(dir));
}

describe("several nodes sharing PostgreSQL", { skip, timeout: 180_000 }, () => {
  let db: Awaited<ReturnType<typeof testDatabase>>;
  let a: NodeProcess;
  let b: NodeProcess;
  let c: NodeProcess;
  let key: string;
  let quotaKey: string;
  let otherKey: string;

  before(async () => {
    db = await testDatabase();
    const o = { database: db.url, heartbeatMs: 250, deadAfterMs: DEAD_AFTER_MS };
    // Nodes start together: the schema set-up and registration must not trip over each other.
    [a, b, c] = await Promise.all([
      startNodeProcess("a", o),
      startNodeProcess("b", o),
      startNodeProcess("c", o),
    ]);
    const store = await PostgresStore.connect(db.url);
    const keys = new Keys(store);
    key = (await keys.create("tenant-a")).key;
    quotaKey = (await keys.create("tenant-q", "default", { maxSandboxes: 3 })).key;
    otherKey = (await keys.create("tenant-other")).key;
    await store.close();
  });
  after(async () => {
    await Promise.all([a, b, c].map((n) => n?.stop()));
    await db?.drop();
  });

  it("uses a sandbox created on A through B (forwarded), lists it through C, kills it through B", async () => {
    const onA = await Sandbox.create({ ...a.opts(key), metadata: { suite: "cluster" } });
    const viaB = await Sandbox.connect(onA.sandboxId, b.opts(key));
    // Commands: output, exit codes, envs.
    const r = await viaB.commands.run("echo out:$X; echo err >&2", { envs: { X: "1" } });
    assert.equal(r.stdout, "out:1\n");
    assert.equal(r.stderr, "err\n");
    await assert.rejects(
      viaB.commands.run("exit 3"),
      (e: unknown) => e instanceof CommandExitError && e.exitCode === 3,
    );
    // A stream is passed on as it comes, not when it ends.
    const seen: Array<{ at: number; text: string }> = [];
    const t0 = Date.now();
    await viaB.commands.run("for i in 1 2 3; do echo $i; sleep 0.3; done", {
      onStdout: (d) => void seen.push({ at: Date.now() - t0, text: d }),
    });
    const total = Date.now() - t0;
    assert.equal(seen.map((s) => s.text).join(""), "1\n2\n3\n");
    assert.ok((seen[0]?.at ?? total) < total - 400, `first line at ${seen[0]?.at} ms of ${total} ms`);
    // A background command through B: stdin sent through B reaches it on A.
    const h = await viaB.commands.run("read l; echo got:$l", { background: true, stdin: true });
    await viaB.commands.sendStdin(h.pid, "hi\n");
    assert.equal((await h.wait()).stdout, "got:hi\n");
    // Files: written through B, read directly on A; a 2 MiB upload and download pass through whole.
    await viaB.files.write("dir/f.txt", "from B");
    assert.equal(await onA.files.read("dir/f.txt"), "from B");
    const blob = new Uint8Array(2 * 1024 * 1024 + 3).map((_, i) => (i * 13) % 256);
    await viaB.files.write("blob", blob.buffer);
    assert.ok(Buffer.from(await viaB.files.read("blob", { format: "bytes" })).equals(Buffer.from(blob)));
    assert.deepEqual(
      (await viaB.files.list("dir")).map((e) => e.name),
      ["f.txt"],
    );
    assert.equal(await viaB.isRunning(), true);
    // The code interpreter's /execute (port 49999) through B.
    const ci = await CodeInterpreter.connect(onA.sandboxId, b.opts(key));
    const exec = await ci.runCode("print('py'); 6 * 7");
    assert.deepEqual(exec.logs.stdout, ["py\n"]);
    assert.equal(exec.text, "42");
    // Management through C: list, get, set timeout.
    const listed = await Sandbox.list({
      ...c.opts(key),
      query: { metadata: { suite: "cluster" } },
    }).nextItems();
    assert.deepEqual(
      listed.map((s) => s.sandboxId),
      [onA.sandboxId],
    );
    const viaC = await Sandbox.connect(onA.sandboxId, c.opts(key));
    await viaC.setTimeout(120_000);
    const info = await Sandbox.getInfo(onA.sandboxId, a.opts(key));
    assert.ok(Math.abs(info.endAt.getTime() - (Date.now() + 120_000)) < 10_000, "A sees C's new timeout");
    // Only what A itself would accept is passed on: a wrong token, another tenant's key and a
    // client's own forwarded mark get B's answers, and nothing reaches A.
    const forwardedCount = async () =>
      Number(
        /hands_serve_forwarded_total\{plane="sandbox",to="a"\} (\d+)/.exec(
          (await raw(`${b.apiUrl}/metrics`)).text,
        )?.[1],
      );
    const before = await forwardedCount();
    const health = (headers: Record<string, string>) =>
      raw(`${b.sandboxUrl}/health`, { headers: { "e2b-sandbox-id": onA.sandboxId, ...headers } });
    assert.equal((await health({ "x-access-token": "x".repeat(32) })).status, 403);
    assert.equal((await health({})).status, 401);
    const detail = (
      await raw(`${b.apiUrl}/sandboxes/${onA.sandboxId}`, { headers: { "x-api-key": key } })
    ).json();
    const token = (detail as { envdAccessToken: string }).envdAccessToken;
    assert.equal((await health({ "x-access-token": token })).status, 204, "the right token is passed on");
    const spoofed = await health({ "x-access-token": token, "x-hands-forwarded": "a" });
    assert.equal(spoofed.status, 502, "a request marked as forwarded is answered by B itself");
    assert.equal(await forwardedCount(), before + 1, "only the request with the right token went to A");
    assert.equal(
      await Sandbox.kill(onA.sandboxId, b.opts(otherKey)),
      false,
      "another tenant's sandbox does not exist",
    );
    await assert.rejects(
      Sandbox.connect(onA.sandboxId, c.opts(otherKey)),
      (e: unknown) => e instanceof NotFoundError,
    );
    assert.equal(await onA.isRunning(), true);
    // Kill through B: A stops it (its slot is free again), every node sees it gone.
    assert.equal(await viaB.kill(), true);
    assert.equal(await onA.isRunning(), false);
    await assert.rejects(
      Sandbox.getInfo(onA.sandboxId, c.opts(key)),
      (e: unknown) => e instanceof NotFoundError,
    );
    assert.match((await raw(`${a.apiUrl}/metrics`)).text, /hands_serve_slots_in_use 0/);
    assert.equal(await Sandbox.kill(onA.sandboxId, b.opts(key)), false, "a second kill is not found");
    // B did pass the calls on (A has nothing to pass on: it runs the sandbox).
    const forwardedByB = (await raw(`${b.apiUrl}/metrics`)).text;
    assert.match(forwardedByB, /hands_serve_forwarded_total\{plane="sandbox",to="a"\} (\d{2,})/);
    assert.match(forwardedByB, /hands_serve_forwarded_total\{plane="api",to="a"\} [1-9]/);
    assert.doesNotMatch((await raw(`${a.apiUrl}/metrics`)).text, /hands_serve_forwarded_total\{/);
  });

  it("refuses a second process under a live node's name, and a shared database without node names", async () => {
    await assert.rejects(
      startNodeProcess("b", { database: db.url, heartbeatMs: 250, deadAfterMs: DEAD_AFTER_MS }),
      /node 'b' is already running/,
    );
    const errors: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((s: string) => errors.push(String(s)) > 0) as typeof process.stderr.write;
    try {
      assert.equal(await runServeCommand(["--database", db.url, "--data", a.dataDir], () => {}), 1);
      assert.equal(await runServeCommand(["--database", "mysql://x@y/z", "--data", a.dataDir], () => {}), 1);
      assert.equal(await runServeCommand(["--database", db.url, "--node", "bad name!"], () => {}), 1);
    } finally {
      process.stderr.write = write;
    }
    assert.match(errors[0] ?? "", /needs a node name for each node \(--node NAME\)/);
    assert.match(errors[1] ?? "", /must be a postgres:\/\/ URL/);
    assert.match(errors[2] ?? "", /--node must be/);
  });

  it("counts a tenant's quota across nodes, exactly, under concurrent creates", async () => {
    const nodes = [a, b, c, a, b, c];
    const results = await Promise.allSettled(nodes.map((n) => Sandbox.create(n.opts(quotaKey))));
    const made = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const refused = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
    try {
      assert.equal(made.length, 3, `created ${made.length}: ${refused.map((e) => String(e)).join("; ")}`);
      for (const e of refused) assert.ok(e instanceof RateLimitError, String(e));
      const listed = await Sandbox.list(b.opts(quotaKey)).nextItems();
      assert.equal(listed.length, 3);
    } finally {
      await Promise.all(made.map((s) => s.kill()));
    }
    // Freed slots count on every node at once.
    const again = await Sandbox.create(c.opts(quotaKey));
    await again.kill();
  });

  it("marks a killed node's sandboxes lost; their clients get errors, not hangs; the others keep serving", async () => {
    const onC = await Sandbox.create(c.opts(key));
    await onC.files.write("keep.txt", "x");
    const viaB = await Sandbox.connect(onC.sandboxId, b.opts(key));
    assert.equal((await viaB.commands.run("echo before")).stdout, "before\n");
    // A stream in flight through B when C dies ends with an error.
    const inFlight = viaB.commands.run("echo started; sleep 60", { timeoutMs: 0, requestTimeoutMs: 0 });
    inFlight.catch(() => {});
    await new Promise((r) => setTimeout(r, 500));
    const killedAt = Date.now();
    await c.kill();
    // B ends the stream the way Connect says: an end-of-stream envelope with `unavailable`.
    await assert.rejects(inFlight, /\[unavailable\] the sandbox's node 'c' stopped answering/);
    assert.ok(Date.now() - killedAt < 5000, `the stream failed after ${Date.now() - killedAt} ms`);
    // Before and after C is declared dead: errors straight away.
    const t = Date.now();
    await assert.rejects(viaB.commands.run("echo hello"), /not running anymore/);
    assert.ok(Date.now() - t < 5000);
    assert.ok(
      await until(
        async () => (await Sandbox.getInfo(onC.sandboxId, a.opts(key))).state === ("lost" as never),
        DEAD_AFTER_MS + 4000,
      ),
      "marked lost",
    );
    const listed = await Sandbox.list(b.opts(key)).nextItems();
    assert.equal(listed.find((s) => s.sandboxId === onC.sandboxId)?.state, "lost" as never);
    await assert.rejects(viaB.commands.run("echo hello"), /not running anymore/);
    await assert.rejects(viaB.files.read("keep.txt"), /The sandbox was lost: node 'c' stopped answering/);
    assert.equal(await viaB.isRunning(), false);
    await assert.rejects(
      Sandbox.connect(onC.sandboxId, a.opts(key)),
      /410: sandbox '\w+' was lost: node 'c' stopped/,
    );
    // C's sandboxes died with it (bubblewrap's --die-with-parent): nothing left running.
    assert.ok(
      await until(async () => processesUnder(c.dataDir).length === 0, 5000),
      processesUnder(c.dataDir).join("\n"),
    );
    // The others serve as before; the lost sandbox goes when its tenant kills it.
    const fresh = await Sandbox.create(a.opts(key));
    const freshViaB = await Sandbox.connect(fresh.sandboxId, b.opts(key));
    assert.equal((await freshViaB.commands.run("echo still")).stdout, "still\n");
    await freshViaB.kill();
    assert.equal(await Sandbox.kill(onC.sandboxId, b.opts(key)), true);
    await assert.rejects(
      Sandbox.getInfo(onC.sandboxId, a.opts(key)),
      (e: unknown) => e instanceof NotFoundError,
    );
  });

  it("a node stopped cleanly pauses its sandboxes; back under its name, it resumes them", async () => {
    const onB = await Sandbox.create(b.opts(key));
    await onB.files.write("kept.txt", "on b");
    await b.stop({ keepData: true });
    assert.equal((await Sandbox.getInfo(onB.sandboxId, a.opts(key))).state, "paused");
    // While B is away its paused sandbox cannot be resumed elsewhere (its files are on B).
    await assert.rejects(Sandbox.connect(onB.sandboxId, a.opts(key)), /node 'b', which does not answer/);
    b = await startNodeProcess("b", {
      database: db.url,
      heartbeatMs: 250,
      deadAfterMs: DEAD_AFTER_MS,
      dataDir: b.dataDir,
    });
    // A learns B's new addresses from the registry on its next read (a beat, or a forward that
    // finds B not up); until then A answers 502 — a clean error — so wait for that, bounded.
    let back: Sandbox | undefined;
    assert.ok(
      await until(async () => {
        back = await Sandbox.connect(onB.sandboxId, a.opts(key));
        return true;
      }, 10_000),
      "A never reached the sandbox on the restarted B",
    );
    assert.ok(back);
    assert.equal(await back.files.read("kept.txt"), "on b");
    assert.equal((await back.commands.run("echo resumed")).stdout, "resumed\n");
    await back.kill();
  });

  it("a node that freezes (no FIN, no heartbeat) is declared dead, its streams cut; thawed, it stops what it lost", async () => {
    const onB = await Sandbox.create(b.opts(key));
    const viaA = await Sandbox.connect(onB.sandboxId, a.opts(key));
    const inFlight = viaA.commands.run("sleep 60", { timeoutMs: 0, requestTimeoutMs: 0 });
    inFlight.catch(() => {});
    await new Promise((r) => setTimeout(r, 500));
    const frozenAt = Date.now();
    b.child.kill("SIGSTOP");
    try {
      // Nothing closes the connection: A cuts it when it declares B dead.
      await assert.rejects(inFlight, /node .b. stopped answering/);
      const after = Date.now() - frozenAt;
      assert.ok(after >= DEAD_AFTER_MS - 500 && after < DEAD_AFTER_MS + 5000, `cut after ${after} ms`);
      assert.equal((await Sandbox.getInfo(onB.sandboxId, a.opts(key))).state, "lost" as never);
    } finally {
      b.child.kill("SIGCONT");
    }
    // B comes back to life, finds the sandbox lost in the store and stops it.
    const dir = `${b.dataDir}/sandboxes/${onB.sandboxId}`;
    assert.ok(
      await until(async () => processesUnder(dir).length === 0, 5000),
      processesUnder(dir).join("\n"),
    );
    assert.ok(
      await until(
        async () => /hands_serve_slots_in_use 0/.test((await raw(`${b.apiUrl}/metrics`)).text),
        5000,
      ),
    );
    // Back in the registry at its next heartbeat (its reaper, a timer of its own, may stop the
    // lost sandbox first: then A still reads B as dead and a forwarded request gets a 502).
    const store = await PostgresStore.connect(db.url);
    try {
      assert.ok(
        await until(async () => (await store.nodes()).find((n) => n.name === "b")?.state === "up", 5000),
        "B never rejoined",
      );
    } finally {
      await store.close();
    }
    // And serves again, forwarded to as before.
    const fresh = await Sandbox.create(b.opts(key));
    const freshViaA = await Sandbox.connect(fresh.sandboxId, a.opts(key));
    assert.equal((await freshViaA.commands.run("echo thawed")).stdout, "thawed\n");
    await freshViaA.kill();
  });
});
