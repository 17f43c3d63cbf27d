// An older SDK, e2b 2.7.0 (pinned as "e2b-older"; the first with E2B_SANDBOX_URL): it creates with POST /sandboxes, resumes with
// /resume and speaks an older Connect client. The same service must serve it unchanged.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { CommandExitError, NotFoundError, Sandbox } from "e2b-older";
import { startTestServe, type TestServe } from "./test-support.js";
import { keys, Screen } from "./test-support-pty.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

describe("e2b 2.7.0 against hands serve", { skip, timeout: 120_000 }, () => {
  let s: TestServe;
  before(async () => {
    s = await startTestServe();
  });
  after(async () => {
    await s?.stop();
  });

  it("creates, runs commands, moves files, lists, pauses, resumes and kills", async () => {
    const sb = await Sandbox.create({ metadata: { sdk: "older" }, envs: { OLD: "yes" } });
    try {
      const r = await sb.commands.run("echo $OLD; echo e >&2");
      assert.equal(r.stdout, "yes\n");
      assert.equal(r.stderr, "e\n");
      await assert.rejects(
        sb.commands.run("exit 5"),
        (e: unknown) => e instanceof CommandExitError && e.exitCode === 5,
      );
      const bg = await sb.commands.run("sleep 30", { background: true });
      assert.equal(await sb.commands.kill(bg.pid), true);
      await sb.files.write("old/f.txt", "from 2.7.0");
      assert.equal(await sb.files.read("old/f.txt"), "from 2.7.0");
      assert.deepEqual(
        (await sb.files.list("old")).map((e) => e.name),
        ["f.txt"],
      );
      const listed = await Sandbox.list({ query: { metadata: { sdk: "older" } } }).nextItems();
      assert.deepEqual(
        listed.map((x) => x.sandboxId),
        [sb.sandboxId],
      );
      assert.equal(await sb.betaPause(), true);
      const back = await Sandbox.connect(sb.sandboxId);
      assert.equal(await back.files.read("old/f.txt"), "from 2.7.0");
      assert.equal((await back.commands.run("echo resumed")).stdout, "resumed\n");
    } finally {
      assert.equal(await Sandbox.kill(sb.sandboxId), true);
    }
    assert.equal(await Sandbox.kill(sb.sandboxId), false);
  });

  it("opens a terminal: typed input, resize, commands.connect, kill (2.7.0 has no pty.connect)", async () => {
    const sb = await Sandbox.create();
    try {
      const t = new Screen();
      const pty = await sb.pty.create({ cols: 70, rows: 20, onData: t.onData });
      const type = (text: string, re: RegExp) => t.after(() => sb.pty.sendInput(pty.pid, keys(text)), re);
      await type("tty; stty size\n", /\/dev\/pts\/\d+\r\n20 70\r\n/);
      await sb.pty.resize(pty.pid, { cols: 33, rows: 11 });
      await type("stty size\n", /[\r\n]11 33\r\n/);
      await type("python3 -i -q\n", />>> $/);
      await type("sum(range(10))\n", /\r\n45\r\n>>> $/);
      const attached = await sb.commands.connect(pty.pid);
      assert.equal(await sb.pty.kill(pty.pid), true);
      await assert.rejects(pty.wait(), (e: unknown) => e instanceof CommandExitError);
      await assert.rejects(attached.wait(), (e: unknown) => e instanceof CommandExitError);
      await assert.rejects(sb.pty.resize(pty.pid, { cols: 5, rows: 5 }), NotFoundError);
      assert.equal(await sb.pty.kill(pty.pid), false);
    } finally {
      await sb.kill();
    }
  });
});
