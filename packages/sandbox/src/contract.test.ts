// One contract, every backend: what the agent relies on from any sandbox. Session features
// (state between commands, tar transfer, snapshots) apply to bwrap and docker.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chown, mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { SandboxPathError } from "./confine.js";
import { explicitlySkipped, makeSandbox, requireBackend, tempWorkspace } from "./testing.js";
import type { Sandbox, SandboxKind, SessionSandbox } from "./types.js";

for (const kind of ["local", "bwrap", "docker"] as SandboxKind[]) {
  const skip = explicitlySkipped(kind);
  describe(`sandbox contract: ${kind}`, { skip }, () => {
    let sb: Sandbox;
    let ws: { dir: string; cleanup: () => Promise<void> };
    const isolating = kind !== "local";

    before(async () => {
      await requireBackend(kind);
      ws = await tempWorkspace();
      sb = await makeSandbox(kind, ws.dir);
    });
    after(async () => {
      await sb?.destroy();
      await ws?.cleanup();
    });

    test("separates stdout, stderr and the exit code", async () => {
      const r = await sb.exec("echo out; echo err >&2; exit 7");
      assert.equal(r.stdout, "out\n");
      assert.equal(r.stderr, "err\n");
      assert.equal(r.exitCode, 7);
      assert.equal(r.timedOut, false);
      assert.ok(r.durationMs >= 0);
    });

    test("passes stdin (python code as execute_python sends it)", async () => {
      const r = await sb.exec("python3 -", {
        stdin: "import sys\nprint('py', 6*7)\nprint('ü', file=sys.stderr)\n",
      });
      assert.equal(r.stdout, "py 42\n");
      assert.equal(r.stderr, "ü\n");
      assert.equal(r.exitCode, 0);
    });

    test("streams output as it comes", async () => {
      const seen: string[] = [];
      const r = await sb.exec("echo a; sleep 0.2; echo b", { onStdout: (s) => seen.push(s) });
      assert.equal(seen.join(""), "a\nb\n");
      assert.equal(r.stdout, "a\nb\n");
    });

    test("a timeout kills the whole process tree", async () => {
      // Unique sleep lengths, so that other processes on this host cannot match.
      const tag = `${30 + Math.floor(Math.random() * 1000)}.${process.pid}`;
      const r = await sb.exec(`sleep ${tag} & sleep ${tag} & while :; do :; done`, { timeoutMs: 400 });
      assert.equal(r.timedOut, true);
      assert.ok(r.durationMs < 5000, `took ${r.durationMs} ms`);
      await new Promise((res) => setTimeout(res, 300));
      const ps = isolating
        ? await sb.exec("ps -eo args")
        : { stdout: execFileSync("ps", ["-eo", "args"], { encoding: "utf8", maxBuffer: 64 << 20 }) };
      assert.equal(ps.stdout.includes(`sleep ${tag}`), false);
    });

    test("an abort signal stops the command", async () => {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 200);
      const r = await sb.exec("sleep 20", { signal: ac.signal });
      assert.equal(r.aborted, true);
      assert.ok(r.durationMs < 5000);
    });

    test("a command that stops itself is continued and ends with its own status", async () => {
      // Under the session's job control a stopped job would make every wait return at once.
      const cases = [
        ["echo a; kill -STOP $BASHPID; echo b; exit 3", "a\nb\n"],
        ["kill -STOP 0; echo c; exit 3", "c\n"],
      ];
      for (const [command, stdout] of cases) {
        const r = await sb.exec(command!, { timeoutMs: 10_000 });
        assert.equal(r.stdout, stdout, JSON.stringify(r));
        assert.equal(r.exitCode, 3, JSON.stringify(r));
        assert.equal(r.timedOut, false);
        assert.ok(r.durationMs < 5_000, `took ${r.durationMs} ms`);
      }
      assert.equal((await sb.exec("echo next")).stdout, "next\n");
    });

    test("caps output and reports the real size", async () => {
      const r = await sb.exec("head -c 300000 /dev/zero | tr '\\0' x", { maxOutputBytes: 1000 });
      assert.equal(r.truncated, true);
      assert.equal(r.stdoutBytes, 300000);
      assert.ok(r.stdout.length < 1200);
    });

    test("file API reads and writes the files commands see", async () => {
      await sb.writeFile("dir/a.txt", "from host\n");
      const r = await sb.exec("cat dir/a.txt; echo made > dir/b.txt");
      assert.equal(r.stdout, "from host\n");
      assert.equal((await sb.readFile("dir/b.txt")).toString(), "made\n");
    });

    test("file API refuses .., absolute and symlinked paths leading out", async () => {
      await assert.rejects(sb.readFile("../../../etc/hostname"), SandboxPathError);
      await assert.rejects(sb.readFile("/etc/hostname"), SandboxPathError);
      await assert.rejects(sb.writeFile("../escape.txt", "x"), SandboxPathError);
      await symlink("/etc", join(ws.dir, "etc-link"));
      await assert.rejects(sb.readFile("etc-link/hostname"), SandboxPathError);
      await assert.rejects(sb.writeFile("etc-link/evil", "x"), SandboxPathError);
      const made = await sb.exec("ln -s / rootlink && echo ok");
      assert.equal(made.stdout, "ok\n");
      await assert.rejects(sb.readFile("rootlink/etc/passwd"), SandboxPathError);
    });

    test("runs in a working directory of the workspace", async () => {
      await mkdir(join(ws.dir, "sub"), { recursive: true });
      const r = await sb.exec("basename $(pwd)", { cwd: "sub" });
      assert.equal(r.stdout, "sub\n");
      await assert.rejects(sb.exec("pwd", { cwd: "../.." }), SandboxPathError);
    });

    test("per-command environment does not leak into later commands", async () => {
      const a = await sb.exec("echo $HANDS_T1", { env: { HANDS_T1: "one" } });
      assert.equal(a.stdout, "one\n");
      const b = await sb.exec("echo x$HANDS_T1");
      assert.equal(b.stdout, "x\n");
    });

    if (isolating) {
      test("a session keeps cwd, exported variables, /tmp files and background processes it was asked to keep", async () => {
        await sb.exec(
          "mkdir -p deep/er && cd deep/er && export KEEP=kept && echo t > /tmp/t.txt && (sleep 60 &) ; true",
          { keepBackground: true },
        );
        // The kept `sleep` may not have exec'd yet when the next command starts: wait for it
        // (bounded), then count it.
        const r = await sb.exec(
          "pwd; echo $KEEP; cat /tmp/t.txt; for i in $(seq 50); do ps -eo args | grep -q '^sleep 60' && break; sleep 0.1; done; ps -eo args | grep -c '^sleep 60'",
        );
        assert.equal(r.stdout, "/workspace/deep/er\nkept\nt\n1\n");
        const e = await sb.exec("exit 4");
        assert.equal(e.exitCode, 4);
        const again = await sb.exec("pwd; echo $KEEP");
        assert.equal(again.stdout, "/workspace/deep/er\nkept\n");
        await sb.exec("cd /workspace");
      });

      test("a command that ends in exit keeps its descriptors its own and its output clean", async () => {
        // After `exit` inside the job the state file's descriptor number is free: the file the
        // command opened last takes it. Neither that file nor stderr may receive the state.
        const r = await sb.exec("exec {fd}>own.txt; echo mine >&$fd; exec 2>&1; echo err >&2; exit 3");
        assert.equal(r.exitCode, 3);
        assert.equal(r.stdout, "err\n");
        assert.equal(r.stderr, "");
        assert.equal(await readFile(join(ws.dir, "own.txt"), "utf8"), "mine\n");
      });

      test("a session state larger than a pipe (100 kB of exported variables) is kept", async () => {
        // The state used to travel through a pipe the shell read only after the job ended: past
        // 64 KiB the job blocked writing it until the command's timeout.
        const r = await sb.exec("export BIG=$(head -c 100000 /dev/zero | tr '\\0' x); echo set", {
          timeoutMs: 10_000,
        });
        assert.equal(r.timedOut, false, JSON.stringify({ ...r, stdout: r.stdout.slice(0, 200) }));
        assert.equal(r.stdout, "set\n");
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
        const n = await sb.exec("echo ${#BIG}; unset BIG");
        assert.equal(n.stdout, "100000\n");
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
        assert.equal((await sb.exec("echo x${BIG:0:1}")).stdout, "x\n");
      });

      test("long and odd command lines and stdin arrive byte for byte", async () => {
        // Command lines travel behind their length: newlines, quotes, backslashes, UTF-8 and
        // 200 kB must survive, and the next command must still be framed right.
        const odd = "a'b\"c\\d\ne\u00fc\u{1F600}$HOME`x`";
        const big = "y".repeat(200_000);
        const r = await sb.exec(`printf '%s' "$1$2" | wc -c; cat`, {
          stdin: odd,
          env: { ODD: odd },
        });
        assert.equal(r.stdout, `0\n${odd}`);
        const e = await sb.exec('printf %s "$ODD"', { env: { ODD: odd } });
        assert.equal(e.stdout, odd);
        const l = await sb.exec(`v='${big}'; echo \${#v}`);
        assert.equal(l.stdout, "200000\n");
        const after = await sb.exec("echo next");
        assert.equal(after.stdout, "next\n");
      });

      test("upload and download a folder as tar; entries leading out are refused", async () => {
        const s = sb as SessionSandbox;
        await sb.writeFile("pack/one.txt", "1");
        await sb.writeFile("pack/sub/two.txt", "2");
        const tar = await s.download("pack");
        await s.upload("unpacked", tar);
        assert.equal((await sb.readFile("unpacked/sub/two.txt")).toString(), "2");
        // An archive with a symlink leading out, then a file written through it.
        const evil = join(ws.dir, "..", `evil-src-${Date.now()}`);
        await mkdir(evil);
        await symlink("/tmp", join(evil, "link"));
        const evilTar = execFileSync("tar", ["-C", evil, "-cf", "-", "link"]);
        await assert.rejects(s.upload("x", evilTar), SandboxPathError);
        const dotdot = execFileSync("tar", ["-C", evil, "-cf", "-", "--transform", "s,^,../../,", "link"]);
        await assert.rejects(s.upload("y", dotdot), SandboxPathError);
        execFileSync("rm", ["-rf", evil]);
      });

      test("snapshot and restore the session's files", async () => {
        const s = sb as SessionSandbox;
        await sb.writeFile("snap.txt", "before");
        const snap = await s.snapshot();
        await sb.exec("echo after > snap.txt; touch extra.txt");
        await s.restore(snap);
        assert.equal(await readFile(join(ws.dir, "snap.txt"), "utf8"), "before");
        const r = await sb.exec("cat snap.txt; ls extra.txt 2>/dev/null || echo gone");
        assert.equal(r.stdout, "beforegone\n");
      });

      test("runs as an unprivileged user with a fixed workspace path", async () => {
        const r = await sb.exec("pwd; cat /proc/self/status | grep ^CapEff");
        assert.match(r.stdout, /^\/workspace\nCapEff:\s+0+\n$/);
      });
    }

    if (kind !== "local") {
      test("runs as the workspace owner when that is not root, and files stay theirs", async () => {
        const ws3 = await tempWorkspace();
        await chown(ws3.dir, 1000, 1000);
        const s3 = await makeSandbox(kind, ws3.dir);
        try {
          const r = await s3.exec("id -u; echo hi > made.txt");
          assert.equal(r.stdout, "1000\n");
          const st = await stat(join(ws3.dir, "made.txt"));
          // Both run as the owner (docker: User 1000; bwrap as root: started as the owner).
          assert.equal(st.uid, 1000);
        } finally {
          await s3.destroy();
          await ws3.cleanup();
        }
      });
    }

    test("destroy ends the sandbox", async () => {
      const ws2 = await tempWorkspace();
      const s2 = await makeSandbox(kind, ws2.dir);
      await writeFile(join(ws2.dir, "f"), "x");
      await s2.destroy();
      await assert.rejects(s2.exec("true"), /destroyed/);
      await ws2.cleanup();
    });
  });
}
