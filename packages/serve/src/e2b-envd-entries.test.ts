// envd 0.6.3–0.6.4 through the official SDK, on bubblewrap and Docker: the service reports the
// version whose gated features it implements; watch events carry the entry (`includeEntry`),
// `allowNetworkMounts` is accepted; files and folders get E2B's modes (0644 / 0755). And the
// entry the agent sends is untrusted: one that does not convert is left out of the event.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { FilesystemEventType, FileType, Sandbox } from "e2b";
import { fsEvent } from "./envd/filesystem.js";
import { dockerSkip, raw, startTestServe, type TestServe } from "./test-support.js";

after(() => {
  setTimeout(() => process.exit(), 2000).unref();
});

// Before any test is declared: a top-level await after one would let it run (and the exit
// timer above fire) before the rest are declared.
const bwrap = checkBwrap();
const BACKENDS = [
  ["base", bwrap.ok ? false : bwrap.reason],
  ["docker", await dockerSkip()],
] as const;

describe("a watch event's entry from the agent is untrusted", () => {
  it("leaves out an entry that does not convert, keeps a good one", () => {
    const bad = fsEvent({
      ev: "fs",
      wid: "w",
      name: "x",
      type: "write",
      entry: { mtime: "not a time", name: 5 } as never,
    });
    assert.deepEqual(bad, { name: "x", type: "EVENT_TYPE_WRITE" });
    const notObject = fsEvent({ ev: "fs", wid: "w", name: "x", type: "create", entry: "boom" as never });
    assert.deepEqual(notObject, { name: "x", type: "EVENT_TYPE_CREATE" });
    const good = fsEvent({
      ev: "fs",
      wid: "w",
      name: "a.txt",
      type: "write",
      entry: {
        name: "a.txt",
        type: "file",
        path: "/home/user/a.txt",
        size: 3,
        mode: 0o644,
        permissions: "-rw-r--r--",
        owner: "user",
        group: "user",
        mtime: 1_700_000_000_000_000_000,
      },
    });
    assert.equal((good.entry as { path: string }).path, "/home/user/a.txt");
  });
});

for (const [template, skip] of BACKENDS) {
  describe(`envd 0.6.4 features through the SDK (${template})`, { skip, timeout: 90_000 }, () => {
    let s: TestServe;
    let sb: Sandbox;
    before(async () => {
      s = await startTestServe();
      sb = await Sandbox.create(template);
    });
    after(async () => {
      await sb?.kill().catch(() => {});
      await s?.stop();
    });

    it("reports envd 0.6.4 on create", async () => {
      const r = await raw(`${s.apiUrl}/sandboxes`, {
        method: "POST",
        headers: { "x-api-key": s.key, "content-type": "application/json" },
        body: JSON.stringify({ templateID: template }),
      });
      const body = r.json() as { sandboxID: string; envdVersion: string };
      assert.equal(body.envdVersion, "0.6.4");
      await Sandbox.kill(body.sandboxID);
    });

    it("gives files and folders E2B's modes, from the API and from commands", async () => {
      const f = await sb.files.write("modes/a.txt", "abc");
      const info = await sb.files.getInfo(f.path);
      assert.equal(info.mode, 0o644);
      assert.equal(info.permissions, "-rw-r--r--");
      assert.deepEqual([info.owner, info.group], ["user", "user"], "E2B's owner and group names");
      await sb.files.makeDir("modes/sub");
      const dir = await sb.files.getInfo("modes/sub");
      assert.equal(dir.mode, 0o755);
      assert.equal(dir.permissions, "drwxr-xr-x");
      const shell = await sb.commands.run("cd ~/modes && echo x > b.txt && mkdir c && stat -c '%a' b.txt c");
      assert.equal(shell.stdout, "644\n755\n");
      const listed = await sb.files.list("modes");
      assert.deepEqual(listed.map((e) => [e.name, e.mode]).sort(), [
        ["a.txt", 0o644],
        ["b.txt", 0o644],
        ["c", 0o755],
        ["sub", 0o755],
      ]);
    });

    it("puts the entry in watch events (includeEntry), none for a removal; allowNetworkMounts is accepted", async () => {
      await sb.files.makeDir("watched");
      const events: {
        type: string;
        name: string;
        entry?: { name: string; path: string; type?: string; size: number };
      }[] = [];
      const handle = await sb.files.watchDir(
        "watched",
        (e) => {
          events.push(e as never);
        },
        { includeEntry: true, allowNetworkMounts: true, recursive: true },
      );
      try {
        await sb.files.write("watched/w.txt", "hello");
        await sb.files.makeDir("watched/d");
        const until = async (ok: () => boolean) => {
          for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
          assert.ok(ok(), JSON.stringify(events));
        };
        await until(() => events.some((e) => e.type === FilesystemEventType.WRITE && e.name === "w.txt"));
        await until(() => events.some((e) => e.type === FilesystemEventType.CREATE && e.name === "d"));
        const write = events.find((e) => e.type === FilesystemEventType.WRITE && e.name === "w.txt");
        assert.equal(write?.entry?.name, "w.txt");
        assert.equal(write?.entry?.path, "/home/user/watched/w.txt");
        assert.equal(write?.entry?.type, FileType.FILE);
        assert.equal(write?.entry?.size, 5);
        const mk = events.find((e) => e.type === FilesystemEventType.CREATE && e.name === "d");
        assert.equal(mk?.entry?.type, FileType.DIR);
        await sb.files.remove("watched/w.txt");
        await until(() => events.some((e) => e.type === FilesystemEventType.REMOVE && e.name === "w.txt"));
        const gone = events.find((e) => e.type === FilesystemEventType.REMOVE);
        assert.equal(gone?.entry, undefined);
      } finally {
        await handle.stop();
      }
      // Without includeEntry, no entry.
      const plain: { entry?: unknown; name: string }[] = [];
      const h2 = await sb.files.watchDir("watched", (e) => {
        plain.push(e as never);
      });
      try {
        await sb.files.write("watched/p.txt", "x");
        for (let i = 0; i < 100 && plain.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
        assert.ok(plain.length > 0);
        assert.ok(plain.every((e) => e.entry === undefined));
      } finally {
        await h2.stop();
      }
    });
  });
}
