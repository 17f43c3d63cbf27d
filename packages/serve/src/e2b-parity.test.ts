// Where E2B's own SDK tests found `hands serve` behaving differently from E2B (issue 29), through
// the official `e2b` SDK on bwrap: the user and home, sudo, removing what is not there, writing
// at `/`, nested watches, a killed sandbox's commands, and a multi-file upload with a bad path.
import assert from "node:assert/strict";
import { chmodSync, existsSync, lstatSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Sandbox as CodeSandbox } from "@e2b/code-interpreter";
import { checkBwrap } from "@hands/sandbox";
import { FilesystemEventType, Sandbox, SandboxError, TimeoutError } from "e2b";
import { startTestServe, type TestServe } from "./test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

describe("E2B parity of hands serve (bwrap)", { skip, timeout: 120_000 }, () => {
  let s: TestServe;
  let sb: Sandbox;

  before(async () => {
    s = await startTestServe();
    sb = await Sandbox.create();
  });
  after(async () => {
    await sb?.kill().catch(() => {});
    await s?.stop();
  });

  const hostHome = () => join(s.service.workspaceOf(sb.sandboxId), "home");

  it("the user is `user` with a writable home /home/user, as in E2B's templates", async () => {
    const r = await sb.commands.run('whoami; echo "$HOME"; pwd; getent passwd user; touch ~/mine && echo ok');
    assert.equal(r.stdout, "user\n/home/user\n/home/user\nuser:x:1000:1000:user:/home/user:/bin/bash\nok\n");
    const info = await sb.files.write("a.txt", "alpha");
    assert.equal(info.path, "/home/user/a.txt");
    assert.equal((await sb.files.getInfo("a.txt")).owner, "user");
    // The home is the sandbox folder's `home`, a real folder on the host.
    assert.ok(lstatSync(join(hostHome(), "a.txt")).isFile());
  });

  it("sudo is there and runs the command as the sandbox's own user: nothing is granted on the host", async () => {
    const r = await sb.commands.run(
      'sudo echo "[$FOO]"; sudo -n -E id -u; sudo -u root whoami; command -v sudo',
      {
        envs: {},
      },
    );
    assert.equal(r.stdout, "[]\n1000\nuser\n/run/hands/bin/sudo\n");
    // What needs real root fails as it does for the user.
    const attempts = [
      "sudo touch /usr/hands-sudo-probe",
      "sudo sh -c 'echo x >> /etc/passwd'",
      "sudo chown 0:0 /home/user/a.txt",
      "sudo mount -t tmpfs none /mnt",
      "sudo unshare -r true",
      "sudo -u bob true",
    ];
    for (const c of attempts) {
      const out = await sb.commands.run(c).catch((e: unknown) => e as { exitCode: number });
      assert.notEqual(out.exitCode, 0, `${c} must fail`);
    }
    assert.equal(existsSync("/usr/hands-sudo-probe"), false);
    // A file made through sudo belongs, on the host, to the sandbox's own uid — never root.
    await sb.commands.run("sudo sh -c 'echo made > /home/user/by-sudo.txt'");
    const st = statSync(join(hostHome(), "by-sudo.txt"));
    assert.notEqual(st.uid, 0);
    assert.equal(st.uid, statSync(hostHome()).uid);
    assert.equal((await sb.commands.run("cat by-sudo.txt")).stdout, "made\n");
  });

  it("removing a file that is not there is not an error (as E2B's)", async () => {
    await sb.files.remove("never-was.txt");
    await sb.files.remove("/home/user/no/such/dir");
    await sb.files.write("gone.txt", "x");
    await sb.files.remove("gone.txt");
    assert.equal(await sb.files.exists("gone.txt"), false);
  });

  it("writes at `/` create folders there, inside the sandbox only", async () => {
    const [a, b] = await sb.files.write([
      { path: "/0/top.txt", data: "top" },
      { path: "/home/user/next.txt", data: "next" },
    ]);
    assert.equal(a?.path, "/0/top.txt");
    assert.equal(b?.path, "/home/user/next.txt");
    assert.equal(await sb.files.read("/0/top.txt"), "top");
    assert.equal((await sb.commands.run("cat /0/top.txt; mkdir -p /opt/app && echo ok")).stdout, "topok\n");
    assert.equal(existsSync("/0/top.txt"), false, "nothing reaches the host's /");
    // The system folders stay read-only.
    await assert.rejects(sb.files.write("/usr/bin/evil", "x"), /Read-only|permission/i);
  });

  it("a recursive watch reports WRITE for a file written in a nested folder, new or old", async () => {
    await sb.files.makeDir("w/nested");
    await sb.files.write("w/nested/old.txt", "one");
    const events: string[] = [];
    const seen = (type: FilesystemEventType, name: string) => events.includes(`${type}:${name}`);
    const handle = await sb.files.watchDir("w", (e) => void events.push(`${e.type}:${e.name}`), {
      recursive: true,
    });
    try {
      await sb.files.makeDir("w/nested/new");
      await sb.files.write("w/nested/new/file.txt", "content");
      await sb.files.write("w/nested/old.txt", "changed");
      for (let i = 0; i < 100; i++) {
        if (
          seen(FilesystemEventType.WRITE, "nested/new/file.txt") &&
          seen(FilesystemEventType.WRITE, "nested/old.txt")
        )
          break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(seen(FilesystemEventType.CREATE, "nested/new"), events.join(" "));
      assert.ok(seen(FilesystemEventType.CREATE, "nested/new/file.txt"), events.join(" "));
      assert.ok(seen(FilesystemEventType.WRITE, "nested/new/file.txt"), events.join(" "));
      assert.ok(seen(FilesystemEventType.WRITE, "nested/old.txt"), events.join(" "));
    } finally {
      await handle.stop();
    }
  });

  it("a multi-file upload with unwritable paths names each failure, writes the rest, keeps the connection", async () => {
    const files = Array.from({ length: 10 }, (_, i) => ({
      path: i === 0 ? "/usr/ro-0.txt" : i === 4 ? "/proc/none/4.txt" : `/home/user/up/${i}.txt`,
      data: `file ${i} `.repeat(20_000),
    }));
    const err = await sb.files.write(files).then(
      () => assert.fail("the upload must fail"),
      (e: unknown) => e as Error,
    );
    assert.ok(err instanceof SandboxError, String(err));
    assert.match(err.message, /2 of 10 files could not be written/);
    assert.match(err.message, /\/usr\/ro-0\.txt: Read-only file system/);
    assert.match(err.message, /\/proc\/none\/4\.txt: No such file or directory/);
    assert.doesNotMatch(err.message, /ECONNRESET|fetch failed|socket/i);
    const listed = (await sb.files.list("up")).map((e) => e.name).sort();
    assert.deepEqual(listed, ["1.txt", "2.txt", "3.txt", "5.txt", "6.txt", "7.txt", "8.txt", "9.txt"]);
    assert.equal(await sb.files.read("up/9.txt"), "file 9 ".repeat(20_000));
    // The same client goes on working.
    assert.equal((await sb.commands.run("echo after")).stdout, "after\n");
  });

  it("a home swapped for a symlink while running is not followed on the host at resume", async () => {
    const target = mkdtempSync(join(tmpdir(), "hs-target-"));
    chmodSync(target, 0o755);
    try {
      const victim = await Sandbox.create();
      await victim.files.write("keep.txt", "kept");
      // The sandbox owns its folder (/workspace): it can put a link where its home was.
      await victim.commands.run(`mv /workspace/home /workspace/old-home && ln -s ${target} /workspace/home`);
      // Files only: the resume starts the sandbox afresh on its folder (a frozen one is thawed as it was).
      await victim.pause({ keepMemory: false });
      const back = await Sandbox.connect(victim.sandboxId);
      const st = lstatSync(target);
      assert.equal(st.uid, process.getuid?.(), "the host folder the link named keeps its owner");
      assert.equal(st.mode & 0o777, 0o755, "and its mode");
      const r = await back.commands.run("whoami; echo x > ~/new.txt && ls ~; ls /workspace/old-home");
      assert.equal(r.stdout, "user\nnew.txt\nkeep.txt\n");
      assert.equal(existsSync(join(target, "new.txt")), false);
      await back.kill();
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  });

  it("code contexts: the default one is listed before its first cell, a context may start in /root", async () => {
    const ci = await CodeSandbox.connect(sb.sandboxId);
    const before = await ci.listCodeContexts();
    assert.deepEqual(
      before.map((c) => [c.id, c.language, c.cwd]),
      [
        ["default", "python", "/home/user"],
        ["default-javascript", "javascript", "/home/user"],
      ],
    );
    assert.equal((await ci.runCode("import os\nos.getcwd()")).text, "/home/user");
    assert.equal((await ci.listCodeContexts()).filter((c) => c.id === "default").length, 1, "listed once");
    const root = await ci.createCodeContext({ language: "python", cwd: "/root" });
    assert.equal(root.cwd, "/root");
    assert.equal((await ci.runCode("import os\nos.getcwd()", { context: root })).text, "/root");
    assert.ok((await ci.listCodeContexts()).some((c) => c.id === root.id && c.cwd === "/root"));
  });

  it("runCode on a sandbox killed during the cell rejects with the SDK's TimeoutError", async () => {
    const other = await CodeSandbox.create();
    await other.runCode("1");
    const run = other.runCode("import time; time.sleep(300)", { timeoutMs: 300_000 }).then(
      () => assert.fail("runCode must reject"),
      (e: unknown) => e as Error,
    );
    await new Promise((r) => setTimeout(r, 500));
    await other.kill();
    const err = await run;
    assert.ok(err instanceof TimeoutError, `${err?.constructor?.name}: ${err?.message}`);
    assert.match(err.message, /sandbox was killed while the request was in progress/);
  });

  it("a command of a killed sandbox ends with E2B's error: the sandbox was killed", async () => {
    const other = await Sandbox.create();
    const cmd = await other.commands.run("sleep 60", { background: true });
    await other.kill();
    const err = await cmd.wait().then(
      () => assert.fail("wait must reject"),
      (e: unknown) => e as Error,
    );
    assert.ok(err instanceof TimeoutError, `${err?.constructor?.name}: ${err?.message}`);
    assert.match(err.message, /sandbox was killed or reached its end of life/);
  });
});
