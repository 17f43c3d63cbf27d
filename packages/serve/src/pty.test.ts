// The official SDK's terminals (sandbox.pty) against hands serve on bwrap: a real pseudo-terminal
// in the sandbox — /dev/pts, its size and resizes, typed input to interactive programs, Ctrl-C and
// Ctrl-D — and what a client can get wrong: dead pids, bad sizes, floods of output and of input.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { CommandExitError, InvalidArgumentError, NotFoundError, Sandbox, TimeoutError } from "e2b";
import { raw, startTestServe, type TestServe } from "./test-support.js";
import { keys, Screen } from "./test-support-pty.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

describe("e2b SDK terminals (sandbox.pty) against hands serve (bwrap)", { skip, timeout: 120_000 }, () => {
  let s: TestServe;
  let sb: Sandbox;
  before(async () => {
    s = await startTestServe();
    sb = await Sandbox.create({ envs: { FROM_CREATE: "c" } });
  });
  after(async () => {
    await sb?.kill().catch(() => {});
    await s?.stop();
  });

  it("runs a shell on /dev/pts with the asked size, envs and cwd, and follows resizes", async () => {
    await sb.files.makeDir("/home/user/work");
    const t = new Screen();
    const pty = await sb.pty.create({
      cols: 100,
      rows: 30,
      onData: t.onData,
      envs: { FROM_PTY: "p" },
      cwd: "/home/user/work",
    });
    assert.ok(pty.pid > 0);
    const type = (text: string, re: RegExp) => t.after(() => sb.pty.sendInput(pty.pid, keys(text)), re);
    await type(
      "tty; stty size; pwd; echo $TERM $FROM_CREATE $FROM_PTY\n",
      /\/dev\/pts\/\d+\r\n30 100\r\n\/home\/user\/work\r\nxterm-256color c p\r\n/,
    );
    // The terminal is the shell's controlling terminal and all three of its standard streams.
    await type(
      "ps -o tty= -p $$; [ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo all-$((1 + 1))\n",
      /pts\/\d+\s*\r\nall-2/,
    );
    await sb.pty.resize(pty.pid, { cols: 55, rows: 12 });
    await type("stty size\n", /[\r\n]12 55\r\n/);
    // A resize reaches the foreground program as SIGWINCH.
    await type(
      `python3 -c "import signal,sys,os; signal.signal(signal.SIGWINCH, lambda *a: (print('winch', os.get_terminal_size()), sys.exit(0))); print('re' + 'ady'); signal.pause()"\n`,
      /ready\r\n/,
    );
    await t.after(
      () => sb.pty.resize(pty.pid, { cols: 91, rows: 19 }),
      /winch os\.terminal_size\(columns=91, lines=19\)/,
    );
    assert.ok((await sb.commands.list()).some((p) => p.pid === pty.pid && p.cmd === "/bin/bash"));
    assert.equal(await sb.pty.kill(pty.pid), true);
    await assert.rejects(pty.wait(), (e: unknown) => e instanceof CommandExitError);
    assert.equal(await sb.pty.kill(pty.pid), false, "a dead pty is not found");
  });

  it("answers typed input in python3 -i; Ctrl-Z stops, Ctrl-C interrupts, Ctrl-D ends", async () => {
    const t = new Screen();
    const pty = await sb.pty.create({ cols: 80, rows: 24, onData: t.onData });
    const type = (text: string, re: RegExp) => t.after(() => sb.pty.sendInput(pty.pid, keys(text)), re);
    // Ctrl-Z stops the foreground job (bash's job control works on this terminal).
    await type("sleep 30\n", /sleep 30\r\n/);
    await new Promise((r) => setTimeout(r, 200));
    await type("\x1a", /Stopped\s+sleep 30/);
    await type("kill %1; wait; echo job-$((40 + 2))\n", /job-42\r\n/);
    await type("python3 -i -q\n", />>> $/);
    await type("6 * 7\n", /\r\n42\r\n>>> $/);
    await type("import time; time.sleep(60)\n", /time\.sleep\(60\)\r\n/);
    await new Promise((r) => setTimeout(r, 200));
    await type("\x03", /KeyboardInterrupt\r\n>>> $/);
    await type("\x04", /\$ $/); // back at the shell's prompt
    await sb.pty.sendInput(pty.pid, keys("exit 3\n"));
    await assert.rejects(pty.wait(), (e: unknown) => e instanceof CommandExitError && e.exitCode === 3);
  });

  it("pty.connect and commands.connect attach to a running terminal", async () => {
    const t = new Screen();
    const pty = await sb.pty.create({ cols: 80, rows: 24, onData: t.onData, timeoutMs: 0 });
    await pty.disconnect();
    const again = new Screen();
    const attached = await sb.pty.connect(pty.pid, { onData: again.onData });
    const waiter = await sb.commands.connect(pty.pid);
    await sb.pty.sendInput(pty.pid, keys("echo re-$((6 * 7))\n"));
    await again.until(/re-42\r\n/);
    assert.equal(t.text.includes("re-"), false, "a disconnected handle gets nothing");
    await sb.pty.sendInput(pty.pid, keys("exit 0\n"));
    assert.equal((await attached.wait()).exitCode, 0);
    assert.equal((await waiter.wait()).exitCode, 0);
  });

  it("delivers a large output whole and in order", async () => {
    const t = new Screen();
    const pty = await sb.pty.create({ cols: 80, rows: 24, onData: t.onData });
    // 4 MB of digits with no newline, then a marker: nothing dropped, nothing reordered.
    await sb.pty.sendInput(
      pty.pid,
      keys(
        `python3 -c "import sys; sys.stdout.write('0123456789' * 400000); sys.stdout.write('\\nEND\\n')"; exit\n`,
      ),
    );
    await pty.wait().catch(() => {});
    const body = t.text.match(/(?:0123456789)+/g)?.sort((a, b) => b.length - a.length)[0] ?? "";
    assert.equal(body.length, 4_000_000);
    assert.match(t.text, /\r\nEND\r\n/);
  });

  it("a terminal whose program has exited: wait, resize, input and kill say so", async () => {
    const t = new Screen();
    const pty = await sb.pty.create({ cols: 80, rows: 24, onData: t.onData });
    await sb.pty.sendInput(pty.pid, keys("exit 0\n"));
    assert.equal((await pty.wait()).exitCode, 0);
    await assert.rejects(sb.pty.resize(pty.pid, { cols: 10, rows: 10 }), NotFoundError);
    await assert.rejects(sb.pty.sendInput(pty.pid, keys("x")), NotFoundError);
    assert.equal(await sb.pty.kill(pty.pid), false);
    await assert.rejects(sb.pty.resize(999_999, { cols: 10, rows: 10 }), NotFoundError);
    await assert.rejects(
      sb.pty.create({ cols: 0, rows: 24, onData: () => {} }),
      (e: unknown) => e instanceof InvalidArgumentError && /cols/.test(e.message),
    );
    // timeoutMs bounds the terminal's life: the stream ends with a timeout and the shell is killed.
    const short = await sb.pty.create({ cols: 80, rows: 24, onData: () => {}, timeoutMs: 700 });
    await assert.rejects(short.wait(), (e: unknown) => e instanceof TimeoutError);
    for (let i = 0; i < 50 && (await sb.commands.list()).some((p) => p.pid === short.pid); i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.ok(!(await sb.commands.list()).some((p) => p.pid === short.pid), "the timed-out shell is gone");
    // A child left behind in the background does not hold the terminal's end up.
    const bg = await sb.pty.create({ cols: 80, rows: 24, onData: () => {} });
    await sb.pty.sendInput(bg.pid, keys("(sleep 60 &) ; exit 4\n"));
    await assert.rejects(bg.wait(), (e: unknown) => e instanceof CommandExitError && e.exitCode === 4);
  });

  it("a Start's timeoutMs is its process's: it applies after the client has gone, as envd's", async () => {
    const bg = await sb.commands.run("sleep 30", { background: true, timeoutMs: 700 });
    await bg.disconnect();
    const gone = async (pid: number) => {
      for (let i = 0; i < 60 && (await sb.commands.list()).some((p) => p.pid === pid); i++)
        await new Promise((r) => setTimeout(r, 50));
      return !(await sb.commands.list()).some((p) => p.pid === pid);
    };
    assert.ok(await gone(bg.pid), "the detached command was killed at its deadline");
    // (awaited: a store may answer asynchronously)
    const audit = await s.store.auditLog(50, sb.sandboxId);
    assert.ok(
      audit.some(
        (r) =>
          r.event === "exec" &&
          /sleep 30/.test(JSON.stringify(r.detail)) &&
          /SIGKILL/.test(JSON.stringify(r.detail)),
      ),
      "its exec is audited with how it ended",
    );
    // timeoutMs: 0 means no deadline.
    const forever = await sb.commands.run("sleep 30", { background: true, timeoutMs: 0 });
    await forever.disconnect();
    await new Promise((r) => setTimeout(r, 1000));
    assert.ok((await sb.commands.list()).some((p) => p.pid === forever.pid));
    assert.equal(await sb.commands.kill(forever.pid), true);
  });

  it("output is whole while the agent is busy with another process's flood", async () => {
    // A detached command that writes as fast as it can keeps the agent's threads busy; each
    // command's last bytes still arrive before its end.
    const flood = await sb.commands.run("cat /dev/zero", { background: true, timeoutMs: 0 });
    await flood.disconnect();
    try {
      for (let i = 0; i < 2; i++) {
        const r = await sb.commands.run("head -c 1000000 /dev/zero | tr '\\0' a; echo; echo end >&2");
        assert.equal(r.stdout.length, 1_000_001, `run ${i}`);
        assert.equal(r.stderr, "end\n");
        const t = new Screen();
        const pty = await sb.pty.create({ cols: 80, rows: 24, onData: t.onData });
        await sb.pty.sendInput(pty.pid, keys("head -c 300000 /dev/zero | tr '\\0' b; exit\n"));
        await pty.wait();
        assert.equal(
          t.text.match(/b+/g)?.sort((x, y) => y.length - x.length)[0]?.length,
          300_000,
          `pty run ${i}`,
        );
      }
    } finally {
      await sb.commands.kill(flood.pid);
    }
  });

  it("raw Connect: pty and stdin input cross-checked, bad bytes, bad sizes, an input flood", async () => {
    const info = (
      await raw(`${s.apiUrl}/sandboxes/${sb.sandboxId}`, { headers: { "x-api-key": s.key } })
    ).json() as { envdAccessToken: string };
    const call = (method: string, body: unknown) =>
      raw(`${s.sandboxUrl}/process.Process/${method}`, {
        method: "POST",
        headers: {
          "e2b-sandbox-id": sb.sandboxId,
          "e2b-sandbox-port": "49983",
          "x-access-token": info.envdAccessToken,
          "content-type": "application/json",
        },
        body: JSON.stringify(body),
      });
    const expect = async (method: string, body: unknown, status: number, code: string, msg: RegExp) => {
      const r = await call(method, body);
      assert.equal(r.status, status, r.text);
      const e = r.json() as { code: string; message: string };
      assert.equal(e.code, code);
      assert.match(e.message, msg);
    };
    const t = new Screen();
    const pty = await sb.pty.create({ cols: 80, rows: 24, onData: t.onData });
    const plain = await sb.commands.run("sleep 60", { background: true, stdin: true });
    const sel = (pid: number) => ({ selector: { pid }, pid });
    await expect(
      "SendInput",
      { process: sel(plain.pid), input: { pty: "eA==" } },
      400,
      "failed_precondition",
      /no pty/,
    );
    await expect(
      "SendInput",
      { process: sel(pty.pid), input: { stdin: "eA==" } },
      400,
      "failed_precondition",
      /has a pty/,
    );
    await expect(
      "SendInput",
      { process: sel(pty.pid), input: { pty: "not base64!" } },
      400,
      "invalid_argument",
      /base64/,
    );
    await expect("SendInput", { process: sel(pty.pid), input: {} }, 400, "invalid_argument", /required/);
    await expect(
      "Update",
      { process: sel(plain.pid), pty: { size: { cols: 5, rows: 5 } } },
      400,
      "failed_precondition",
      /no pty/,
    );
    await expect(
      "Update",
      { process: sel(pty.pid), pty: { size: { cols: 70000, rows: 5 } } },
      400,
      "invalid_argument",
      /cols/,
    );
    await expect(
      "Update",
      { process: sel(pty.pid), pty: { size: { cols: 5, rows: "x" } } },
      400,
      "invalid_argument",
      /rows/,
    );
    // URL-safe base64 is valid Connect JSON for bytes.
    const urlSafe = Buffer.from("echo ok-$((1 + 2)) # ~~~???>>>\n").toString("base64url");
    assert.match(urlSafe, /[-_]/);
    assert.equal((await call("SendInput", { process: sel(pty.pid), input: { pty: urlSafe } })).status, 200);
    await t.until(/ok-3\r\n/);
    // A program that never reads its terminal: input queues up to a bound, then is refused —
    // and the sandbox keeps answering meanwhile.
    // The flood starts once that program runs: before, the shell's line editor reads (and
    // drains) whatever arrives — on a loaded machine 20 MB went in that way.
    await sb.pty.sendInput(pty.pid, keys("sleep 61\n"));
    for (let i = 0; i < 100; i++) {
      const r = await sb.commands.run("pgrep -x sleep -a || true");
      if (/sleep 61/.test(r.stdout)) break;
      await new Promise((w) => setTimeout(w, 100));
    }
    const chunk = Buffer.alloc(512 * 1024, 0x61).toString("base64");
    let refused = false;
    for (let i = 0; i < 60 && !refused; i++) {
      const r = await call("SendInput", { process: sel(pty.pid), input: { pty: chunk } });
      if (r.status !== 200) {
        assert.equal(r.status, 429);
        assert.match(r.text, /not reading its input/);
        refused = true;
      }
    }
    assert.ok(refused, "an endless input flood is refused");
    assert.equal((await sb.commands.run("echo still-here")).stdout, "still-here\n");
    assert.equal(await sb.pty.kill(pty.pid), true);
    assert.equal(await sb.commands.kill(plain.pid), true);
  });
});
