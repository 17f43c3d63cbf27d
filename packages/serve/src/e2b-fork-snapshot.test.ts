// Sandbox fork and E2B's snapshot API through the official `e2b` SDK against `hands serve` on
// bwrap: what a fork and a snapshot keep (files, modes, metadata, symlinks and FIFOs as what they
// are), what they do not (processes: refused when asked for, never lost in silence), tenants'
// snapshots kept apart, and a sandbox that races the copy to make the host follow its symlinks.
import assert from "node:assert/strict";
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { RateLimitError, Sandbox, SandboxNotFoundError } from "e2b";
import { raw, startTestServe, type TestServe } from "./test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

/** Every file name under a host folder (not following links). */
function namesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    out.push(e.name);
    if (e.isDirectory()) out.push(...namesUnder(join(dir, e.name)));
  }
  return out;
}

describe("fork and snapshots through the e2b SDK (bwrap)", { skip, timeout: 180_000 }, () => {
  let s: TestServe;
  let sb: Sandbox;
  let otherKey: string;
  const cleanup: Sandbox[] = [];

  before(async () => {
    s = await startTestServe({ warm: { base: 1 } });
    otherKey = (await s.keys.create("tenant-b")).key;
    sb = await Sandbox.create({ envs: { FROM_CREATE: "yes" }, metadata: { suite: "fork" } });
  });
  after(async () => {
    await Promise.all([sb, ...cleanup].map((x) => x?.kill().catch(() => {})));
    await s?.stop();
  });

  it("forks a running sandbox: files, modes, metadata, links and FIFOs as they were; the original runs on", async () => {
    await sb.files.write("/home/user/state.txt", "state before fork", { metadata: { step: "1" } });
    await sb.commands.run(
      "mkdir -p app/deep && echo '#!/bin/sh' > app/run.sh && chmod 751 app/run.sh && echo deep > app/deep/f && ln -s /etc/hostname app/link && mkfifo app/pipe",
    );
    const bg = await sb.commands.run("sleep 120", { background: true });
    const forks = await sb.fork({ timeoutMs: 120_000 });
    assert.equal(forks.length, 1);
    const fork = forks[0];
    assert.ok(fork instanceof Sandbox, String(fork));
    cleanup.push(fork);
    assert.notEqual(fork.sandboxId, sb.sandboxId);
    assert.equal(await sb.isRunning(), true);
    assert.equal(await fork.isRunning(), true);
    assert.equal(await fork.files.read("/home/user/state.txt"), "state before fork");
    assert.deepEqual((await fork.files.getInfo("state.txt")).metadata, { step: "1" });
    const r = await fork.commands.run(
      "stat -c %a app/run.sh; cat app/deep/f; readlink app/link; test -p app/pipe && echo fifo; echo $FROM_CREATE",
    );
    assert.equal(r.stdout, "751\ndeep\n/etc/hostname\nfifo\nyes\n");
    assert.deepEqual((await fork.getInfo()).metadata, { suite: "fork" });
    // Processes are not carried over, and the fork says so by not listing any.
    assert.ok((await sb.commands.list()).some((p) => p.pid === bg.pid));
    assert.equal((await fork.commands.list()).length, 0);
    // Independent from here on, both ways; and its folder is its own uid's, not the original's.
    await fork.files.write("/home/user/state.txt", "modified in fork");
    assert.equal(await sb.files.read("/home/user/state.txt"), "state before fork");
    await sb.files.write("/home/user/later.txt", "after the fork");
    assert.equal(await fork.files.exists("/home/user/later.txt"), false);
    if (process.getuid?.() === 0) {
      const a = lstatSync(s.service.workspaceOf(sb.sandboxId));
      const b = lstatSync(s.service.workspaceOf(fork.sandboxId));
      assert.notEqual(a.uid, b.uid, "each sandbox has a uid of its own");
      assert.equal(
        lstatSync(join(s.service.workspaceOf(fork.sandboxId), "home", "app", "deep", "f")).uid,
        b.uid,
      );
    }
    await bg.kill();
  });

  it("forks into a warm sandbox: the files become its uid's, its agent's folder stays the service's", async () => {
    for (let i = 0; i < 400 && s.service.poolSize < 1; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(s.service.poolSize, 1, "the warm pool has a sandbox ready");
    await sb.files.write("/home/user/warm.txt", "into a warm one");
    const [fork] = await sb.fork({ timeoutMs: 120_000 });
    assert.ok(fork instanceof Sandbox, String(fork));
    cleanup.push(fork);
    assert.equal(s.service.poolSize, 0, "the fork took the warm sandbox");
    assert.equal(await fork.files.read("/home/user/warm.txt"), "into a warm one");
    assert.equal((await fork.commands.run("cat warm.txt")).stdout, "into a warm one");
    if (process.getuid?.() === 0) {
      const ws = s.service.workspaceOf(fork.sandboxId);
      const uid = lstatSync(ws).uid;
      assert.notEqual(uid, 0);
      assert.equal(lstatSync(join(ws, "home", "warm.txt")).uid, uid);
      assert.equal(lstatSync(join(ws, ".hands-agent")).uid, 0, "the agent's folder is not handed over");
    }
  });

  it("forks several at once, each on its own: one over the tenant's quota fails, the others start", async () => {
    const forks = await Sandbox.fork(sb.sandboxId, { count: 2, timeoutMs: 60_000 });
    assert.equal(forks.length, 2);
    const ok = forks.filter((f): f is Sandbox => f instanceof Sandbox);
    cleanup.push(...ok);
    assert.equal(ok.length, 2);
    assert.equal(new Set(ok.map((f) => f.sandboxId)).size, 2);
    for (const f of ok)
      assert.ok((await f.getInfo()).endAt.getTime() < Date.now() + 61_000, "timeout applied");
    // Without one, a fork lives E2B's default for forks: 15 s.
    const [short] = await sb.fork();
    assert.ok(short instanceof Sandbox, String(short));
    const end = (await short.getInfo()).endAt.getTime();
    await short.kill();
    assert.ok(
      end <= Date.now() + 15_500,
      `a fork without a timeout ends within 15 s: ${end - Date.now()} ms`,
    );

    const { key } = await s.keys.create("tenant-q", "q", { maxSandboxes: 3 });
    const q = await Sandbox.create({ ...s.opts(key) });
    const results = await Sandbox.fork(q.sandboxId, { ...s.opts(key), count: 3 });
    const started = results.filter((f): f is Sandbox => f instanceof Sandbox);
    const failed = results.filter((f) => !(f instanceof Sandbox));
    assert.equal(started.length, 2);
    assert.equal(failed.length, 1);
    assert.ok(failed[0] instanceof RateLimitError, String(failed[0]));
    await Promise.all([q, ...started].map((x) => x.kill()));
  });

  it("refuses forks it cannot do: a killed sandbox, another tenant's, a bad count", async () => {
    const gone = await Sandbox.create();
    await gone.kill();
    await assert.rejects(gone.fork(), (e: unknown) => e instanceof SandboxNotFoundError);
    await assert.rejects(
      Sandbox.fork(sb.sandboxId, { ...s.opts(otherKey) }),
      (e: unknown) => e instanceof SandboxNotFoundError,
    );
    for (const count of [0, 101, 1.5, "2"]) {
      const r = await raw(`${s.apiUrl}/sandboxes/${sb.sandboxId}/fork`, {
        method: "POST",
        headers: { "x-api-key": s.key, "content-type": "application/json" },
        body: JSON.stringify({ count }),
      });
      assert.equal(r.status, 400, `count ${count}: ${r.text}`);
    }
  });

  it("never follows a symlink the sandbox swaps in while its files are copied", async () => {
    // A host folder the sandbox cannot see, named by a link the sandbox keeps swapping with a
    // directory of the same name: a copy that followed it would bring the secret into the fork.
    const secretDir = mkdtempSync(join(s.dataDir, "host-secret-"));
    writeFileSync(join(secretDir, "secret-file.txt"), "HOST-SECRET");
    try {
      const racer = await sb.commands.run(
        `end=$(($(date +%s)+20)); while [ $(date +%s) -lt $end ]; do rm -rf race; mkdir race; echo inner > race/inner.txt; rm -rf race; ln -s ${secretDir} race; done`,
        { background: true },
      );
      const forks: Sandbox[] = [];
      for (let i = 0; i < 4; i++) {
        const [f] = await sb.fork({ timeoutMs: 120_000 });
        assert.ok(f instanceof Sandbox);
        forks.push(f);
        cleanup.push(f);
      }
      const snap = await sb.createSnapshot();
      await racer.kill();
      for (const f of forks) {
        const names = namesUnder(s.service.workspaceOf(f.sandboxId));
        assert.ok(!names.includes("secret-file.txt"), `fork ${f.sandboxId} has the host's file`);
        const grep = await f.commands.run("grep -rs HOST-SECRET /home/user; true");
        assert.equal(grep.stdout, "");
      }
      const fromSnap = await Sandbox.create(snap.snapshotId);
      cleanup.push(fromSnap);
      assert.equal((await fromSnap.commands.run("grep -rs HOST-SECRET /home/user; true")).stdout, "");
      assert.equal(
        readFileSync(join(secretDir, "secret-file.txt"), "utf8"),
        "HOST-SECRET",
        "host file untouched",
      );
      await Sandbox.deleteSnapshot(snap.snapshotId);
    } finally {
      rmSync(secretDir, { recursive: true, force: true });
    }
  });

  it("a home swapped for a link to a host folder is never chowned through, on fork, restore or resume", async () => {
    const victim = mkdtempSync(join(s.dataDir, "victim-"));
    const before = lstatSync(victim);
    const v = await Sandbox.create();
    cleanup.push(v);
    try {
      // The sandbox owns /workspace, so it can put a link where its home was.
      await v.commands.run(`cd /workspace && mv home home.real && ln -s ${victim} home`, { cwd: "/" });
      const unchanged = () => {
        const now = lstatSync(victim);
        assert.deepEqual([now.uid, now.gid, now.mode], [before.uid, before.gid, before.mode]);
      };
      const [f] = await v.fork({ timeoutMs: 120_000 });
      assert.ok(f instanceof Sandbox, String(f));
      cleanup.push(f);
      const snap = await v.createSnapshot();
      const r = await Sandbox.create(snap.snapshotId);
      cleanup.push(r);
      unchanged();
      // Files only: the resume starts the sandbox afresh on its folder (a frozen one is thawed as it was).
      await v.pause({ keepMemory: false });
      const back = await Sandbox.connect(v.sandboxId);
      unchanged();
      for (const x of [f, r, back]) {
        await x.files.write("/home/user/ok.txt", "a home of its own");
        assert.equal(await x.files.read("/home/user/ok.txt"), "a home of its own");
        const home = join(s.service.workspaceOf(x.sandboxId), "home");
        assert.ok(lstatSync(home).isDirectory(), "the home is a real folder again");
      }
      unchanged();
      assert.deepEqual(readdirSync(victim), [], "nothing was written into the host folder");
      await Sandbox.deleteSnapshot(snap.snapshotId);
    } finally {
      rmSync(victim, { recursive: true, force: true });
    }
  });

  it("makes snapshots, starts sandboxes from them, lists and deletes them", async () => {
    await sb.files.write("/home/user/app/config.json", '{"env": "test"}');
    const snap = await sb.createSnapshot();
    assert.match(snap.snapshotId, /^[a-z0-9]{20}$/);
    assert.deepEqual(snap.names, []);
    const [a, b] = await Promise.all([Sandbox.create(snap.snapshotId), Sandbox.create(snap.snapshotId)]);
    cleanup.push(a, b);
    assert.equal(await a.files.read("/home/user/app/config.json"), '{"env": "test"}');
    await a.files.write("/home/user/app/config.json", "changed in a");
    assert.equal(await b.files.read("/home/user/app/config.json"), '{"env": "test"}', "b is not a");
    assert.equal(await sb.files.read("/home/user/app/config.json"), '{"env": "test"}', "nor the source");

    const named = await sb.createSnapshot({ name: "my-snap" });
    assert.equal(named.snapshotId, "my-snap");
    assert.deepEqual(named.names, ["my-snap"]);
    const all = await Sandbox.listSnapshots().nextItems();
    assert.deepEqual(all.map((x) => x.snapshotId).sort(), [snap.snapshotId, "my-snap"].sort());
    assert.deepEqual(
      (await Sandbox.listSnapshots({ name: "my-snap" }).nextItems()).map((x) => x.snapshotId),
      ["my-snap"],
    );
    assert.equal((await Sandbox.listSnapshots({ name: "my-snap-nope" }).nextItems()).length, 0);
    // E2B's spellings of the same snapshot: namespaced and tag-qualified.
    for (const name of ["my-snap:default", "tenant-a/my-snap", "tenant-a/my-snap:default"])
      assert.deepEqual(
        (await Sandbox.listSnapshots({ name }).nextItems()).map((x) => x.snapshotId),
        ["my-snap"],
        name,
      );
    assert.equal((await Sandbox.listSnapshots({ name: "my-snap:v2" }).nextItems()).length, 0);
    assert.equal((await sb.listSnapshots().nextItems()).length, 2);
    assert.equal((await a.listSnapshots().nextItems()).length, 0);
    const paged = Sandbox.listSnapshots({ limit: 1 });
    const p1 = await paged.nextItems();
    assert.equal(p1.length, 1);
    assert.equal(paged.hasNext, true);
    const p2 = await paged.nextItems();
    assert.equal(p2.length, 1);
    assert.notEqual(p1[0]?.snapshotId, p2[0]?.snapshotId);

    // The same name again: a new version of that snapshot, not a second one.
    await sb.files.write("/home/user/version.txt", "v2");
    assert.equal((await sb.createSnapshot({ name: "my-snap" })).snapshotId, "my-snap");
    const v2 = await Sandbox.create("tenant-a/my-snap:default");
    cleanup.push(v2);
    assert.equal(await v2.files.read("/home/user/version.txt"), "v2");

    // Another tenant sees none of it.
    const other = s.opts(otherKey);
    assert.equal((await Sandbox.listSnapshots(other).nextItems()).length, 0);
    await assert.rejects(Sandbox.create("my-snap", other), /not found/);
    assert.equal(await Sandbox.deleteSnapshot("my-snap", other), false);
    await assert.rejects(
      Sandbox.createSnapshot(sb.sandboxId, other),
      (e: unknown) => e instanceof SandboxNotFoundError,
    );

    // Snapshots outlive their sandbox; deleted ones are gone for good.
    const temp = await Sandbox.create();
    await temp.files.write("t.txt", "from a killed sandbox");
    const tsnap = await temp.createSnapshot();
    await temp.kill();
    const fromKilled = await Sandbox.create(tsnap.snapshotId);
    cleanup.push(fromKilled);
    assert.equal(await fromKilled.files.read("t.txt"), "from a killed sandbox");
    for (const id of [snap.snapshotId, "my-snap", tsnap.snapshotId]) {
      assert.equal(await Sandbox.deleteSnapshot(id), true);
      assert.equal(await Sandbox.deleteSnapshot(id), false);
    }
    await assert.rejects(Sandbox.create(snap.snapshotId), /not found/);
    assert.equal((await Sandbox.listSnapshots().nextItems()).length, 0);
  });

  it("refuses bad snapshot names and templates posing as snapshots", async () => {
    for (const name of ["../x", "a/b", "", "UPPER", "x".repeat(65)]) {
      const r = await raw(`${s.apiUrl}/sandboxes/${sb.sandboxId}/snapshots`, {
        method: "POST",
        headers: { "x-api-key": s.key, "content-type": "application/json" },
        body: JSON.stringify({ name }),
      });
      assert.equal(r.status, 400, `${name}: ${r.text}`);
    }
    await assert.rejects(sb.createSnapshot({ name: "base" }), /template/);
    const del = await raw(`${s.apiUrl}/templates/base`, {
      method: "DELETE",
      headers: { "x-api-key": s.key },
    });
    assert.equal(del.status, 400, del.text);
    assert.equal(readdirSync(join(s.dataDir, "snapshots")).filter((n) => !n.startsWith(".")).length, 0);
  });

  it("keeps files, not processes, on a pause with keepMemory: false; a bad memory value is refused", async () => {
    const p = await Sandbox.create();
    cleanup.push(p);
    const bad = await raw(`${s.apiUrl}/sandboxes/${p.sandboxId}/pause`, {
      method: "POST",
      headers: { "x-api-key": s.key, "content-type": "application/json" },
      body: JSON.stringify({ memory: "yes" }),
    });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(await p.isRunning(), true, "a refused pause leaves the sandbox running");
    await p.commands.run("sleep 600", { background: true, timeoutMs: 0 });
    await p.files.write("kept.txt", "files are kept");
    assert.equal(await p.pause({ keepMemory: false } as never), true);
    const back = await Sandbox.connect(p.sandboxId);
    assert.equal(await back.files.read("kept.txt"), "files are kept");
    assert.deepEqual(await back.commands.list(), [], "a filesystem-only pause ends the processes");
  });
});
