// The official SDK against the docker backend (template "docker") and gVisor (template
// "gvisor": docker with the runsc runtime) — the same operations as on bwrap: the user is `user`
// and its home /home/user, as in E2B's templates (see runtime.ts).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Sandbox as CodeSandbox } from "@e2b/code-interpreter";
import { CommandExitError, Sandbox } from "e2b";
import { SANDBOX_GID, SANDBOX_UID_COUNT } from "./sandbox-users.js";
import { dockerSkip, startTestServe, type TestServe } from "./test-support.js";
import { keys, Screen } from "./test-support-pty.js";

// DockerSandbox.destroy (packages/sandbox) removes the container but does not end its session's
// hijacked exec stream; dockerd sometimes keeps that socket open, which would keep this test
// process alive for ever. After the last suite of the file, leave once the results are out.
after(() => {
  setTimeout(() => process.exit(), 2000).unref();
});

for (const [template, runtime] of [
  ["docker", undefined],
  ["gvisor", "runsc"],
] as const) {
  describe(`e2b SDK against hands serve (${template})`, {
    skip: await dockerSkip(runtime),
    timeout: 180_000,
  }, () => {
    let s: TestServe;
    let sb: Sandbox;
    before(async () => {
      s = await startTestServe();
      sb = await Sandbox.create(template, { envs: { FROM_CREATE: "yes" } });
    });
    after(async () => {
      await sb?.kill().catch(() => {});
      await s?.stop();
    });

    it("runs commands with streams, envs, cwd and exit codes, as an unprivileged user", async () => {
      const r = await sb.commands.run("echo out $FROM_CREATE $X; echo err >&2; pwd; id -u; whoami", {
        envs: { X: "x" },
      });
      const [out, cwd, uid, name] = r.stdout.split("\n");
      assert.deepEqual([out, cwd, name], ["out yes x", "/home/user", "user"]);
      // As root, each sandbox has a uid of its own (sandbox-users.ts); else the service's own.
      if (process.getuid?.() === 0) {
        assert.ok(Number(uid) > SANDBOX_GID && Number(uid) <= SANDBOX_GID + SANDBOX_UID_COUNT, r.stdout);
      } else assert.equal(Number(uid), process.getuid?.());
      assert.equal(r.stderr, "err\n");
      // The home is writable and sudo is there (running as the same unprivileged uid).
      const home = await sb.commands.run(
        "touch /home/user/w && sudo id -u && sudo touch /usr/x 2>/dev/null; echo $?",
      );
      assert.equal(home.stdout, `${uid}\n1\n`);
      assert.equal((await sb.files.write("/home/user/api.txt", "a")).path, "/home/user/api.txt");
      await assert.rejects(
        sb.commands.run("exit 9"),
        (e: unknown) => e instanceof CommandExitError && e.exitCode === 9,
      );
      const bg = await sb.commands.run("sleep 60", { background: true });
      assert.ok((await sb.commands.list()).some((p) => p.pid === bg.pid));
      assert.equal(await sb.commands.kill(bg.pid), true);
    });

    it("opens a terminal on /dev/pts: size, resize, typed input, Ctrl-C, Ctrl-D", async () => {
      const t = new Screen();
      const pty = await sb.pty.create({ cols: 120, rows: 40, onData: t.onData });
      const type = (text: string, re: RegExp) => t.after(() => sb.pty.sendInput(pty.pid, keys(text)), re);
      await type("tty; stty size\n", /\/dev\/pts\/\d+\r\n40 120\r\n/);
      await sb.pty.resize(pty.pid, { cols: 60, rows: 15 });
      await type("stty size\n", /[\r\n]15 60\r\n/);
      await type("python3 -i -q\n", />>> $/);
      await type("2 ** 10\n", /\r\n1024\r\n>>> $/);
      // gVisor's terminal (Debian's runsc) does not turn Ctrl-C into SIGINT: google/gvisor#9898.
      if (template !== "gvisor") {
        await type("import time; time.sleep(60)\n", /sleep\(60\)\r\n/);
        await new Promise((r) => setTimeout(r, 200));
        await type("\x03", /KeyboardInterrupt\r\n>>> $/);
      }
      await type("\x04", /\$ $/);
      await sb.pty.sendInput(pty.pid, keys("exit 0\n"));
      assert.equal((await pty.wait()).exitCode, 0);
      await assert.rejects(sb.pty.resize(pty.pid, { cols: 5, rows: 5 }), /not found/);
    });

    it("runs code interpreter cells with rich results and contexts", async () => {
      const ci = await CodeSandbox.connect(sb.sandboxId);
      const ex = await ci.runCode(
        'from IPython.display import HTML, display\nprint("out")\ndisplay(HTML("<b>d</b>"))\nclass R:\n    def _repr_markdown_(self): return "*m*"\nR()',
      );
      assert.deepEqual(ex.logs.stdout, ["out\n"]);
      assert.deepEqual(
        ex.results.map((r) => [r.isMainResult, r.html ?? r.markdown]),
        [
          [false, "<b>d</b>"],
          [true, "*m*"],
        ],
      );
      const ctx = await ci.createCodeContext({ cwd: "/tmp" });
      assert.equal((await ci.runCode("import os\nos.getcwd()", { context: ctx })).text, "/tmp");
      assert.equal((await ci.runCode("1/0", { context: ctx })).error?.name, "ZeroDivisionError");
    });

    it("moves files both ways and keeps them over a pause", async () => {
      await sb.files.write("d/a.txt", "alpha");
      assert.equal((await sb.commands.run("cat d/a.txt")).stdout, "alpha");
      assert.deepEqual(
        (await sb.files.list("d")).map((e) => e.name),
        ["a.txt"],
      );
      assert.equal(await sb.pause(), true);
      const back = await Sandbox.connect(sb.sandboxId);
      assert.equal(await back.files.read("d/a.txt"), "alpha");
      assert.equal((await back.commands.run("cat d/a.txt")).stdout, "alpha");
    });
  });
}
