// The e2b sandbox backend (packages/sandbox/src/e2b.ts) against a real `hands serve` (bwrap):
// the workspace sync in both directions, what a hostile command in the sandbox can and cannot
// bring back to the host, output caps, timeouts, aborts and the sandbox's lifecycle. It lives
// here because @hands/serve depends on @hands/sandbox (the sandbox package cannot start it).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { checkBwrap, type E2BOptions, E2BSandbox } from "@hands/sandbox";
import { Sandbox } from "e2b";
import { type LoopbackServe, startLoopbackServe } from "./testing/serve.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

describe("e2b backend against hands serve", { skip, timeout: 180_000 }, () => {
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "hands-e2b-backend-")));
  let served: LoopbackServe;
  let e2b: E2BOptions;
  const open: E2BSandbox[] = [];

  before(async () => {
    served = await startLoopbackServe("backend-tests");
    e2b = { ...served.sdk };
  });
  after(async () => {
    await Promise.all(open.map((s) => s.destroy()));
    await served?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const sdk = () => served.sdk;

  async function box(files: Record<string, string> = {}, extra: Partial<E2BOptions> = {}) {
    const ws = mkdtempSync(join(scratch, "ws-"));
    for (const [p, c] of Object.entries(files)) {
      mkdirSync(join(ws, p, ".."), { recursive: true });
      writeFileSync(join(ws, p), c);
    }
    const sb = await E2BSandbox.create({ workspace: ws, e2b: { ...e2b, ...extra } });
    open.push(sb);
    return { ws, sb };
  }

  test("files flow both ways: changes, new folders, deletions, type changes, modes", async () => {
    const { ws, sb } = await box({ "a.txt": "a\n", "dir/old.txt": "old\n", "gone.txt": "x", swap: "file" });
    let r = await sb.exec(
      "echo changed > a.txt && mkdir -p new/deep && echo n > new/deep/n.txt && rm gone.txt dir/old.txt && rm swap && mkdir swap && echo in > swap/f && printf '#!/bin/sh\\necho ran\\n' > run.sh && chmod +x run.sh && ln -s a.txt link",
    );
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.equal(readFileSync(join(ws, "a.txt"), "utf8"), "changed\n");
    assert.equal(readFileSync(join(ws, "new/deep/n.txt"), "utf8"), "n\n");
    assert.equal(existsSync(join(ws, "gone.txt")), false);
    assert.equal(existsSync(join(ws, "dir/old.txt")), false);
    assert.equal(readFileSync(join(ws, "swap/f"), "utf8"), "in\n");
    assert.ok(lstatSync(join(ws, "run.sh")).mode & 0o100, "the executable bit comes back");
    assert.equal(readlinkSync(join(ws, "link")), "a.txt");
    // Host edits and deletions reach the sandbox before the next command.
    writeFileSync(join(ws, "host.txt"), "from host\n");
    rmSync(join(ws, "new"), { recursive: true });
    r = await sb.exec("cat host.txt; ls new 2>&1; ./run.sh");
    assert.equal(r.stdout, "from host\nls: cannot access 'new': No such file or directory\nran\n");
  });

  test("odd file names travel both ways; names that are not UTF-8 are left where they are", async () => {
    const { ws, sb } = await box({ "-rf": "dash\n", "tab\there": "t\n", "日本.txt": "u\n" });
    const r = await sb.exec(
      "cat ./-rf 'tab\there' 日本.txt; printf x > \"$(printf 'new\\nline')\"; printf y > ./--x; printf z > \"$(printf 'bad\\377')\"",
    );
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout, "dash\nt\nu\n");
    assert.equal(readFileSync(join(ws, "new\nline"), "utf8"), "x");
    assert.equal(readFileSync(join(ws, "--x"), "utf8"), "y");
    assert.equal((await sb.exec("ls | wc -l")).stdout.trim(), "7", "the odd remote name is still there");
  });

  test("a hostile command cannot bring links out, special files or protected paths back to the host", async () => {
    const { ws, sb } = await box({ "AGENTS.md": "be nice\n" });
    const secret = join(scratch, "secret.txt");
    writeFileSync(secret, "host secret\n");
    const r = await sb.exec(
      `ln -s ${secret} out-abs; ln -s ../../../../etc/passwd out-rel; mkfifo pipe; echo evil > AGENTS.md; mkdir -p .hands && echo '{"sandbox":"local"}' > .hands/config.json; echo fine > ok.txt`,
    );
    assert.equal(r.exitCode, 0);
    assert.match(
      r.stderr,
      /not copied back from the sandbox \(symbolic links leading out of the workspace\): out-abs -> \//,
    );
    assert.match(r.stderr, /out-rel -> \.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd/);
    assert.match(r.stderr, /Hands' protected paths; the host's version is put back\): .*AGENTS\.md/);
    assert.equal(existsSync(join(ws, "out-abs")), false);
    assert.equal(existsSync(join(ws, "out-rel")), false);
    assert.equal(existsSync(join(ws, "pipe")), false);
    assert.equal(existsSync(join(ws, ".hands")), false);
    assert.equal(readFileSync(join(ws, "AGENTS.md"), "utf8"), "be nice\n");
    assert.equal(readFileSync(join(ws, "ok.txt"), "utf8"), "fine\n");
    // The host's version of the protected paths goes back into the sandbox.
    const again = await sb.exec("cat AGENTS.md; ls -a .hands 2>&1 | head -1");
    assert.equal(again.stdout.split("\n")[0], "be nice");
    assert.match(again.stdout, /No such file or directory/);
  });

  test("a host file changed during the command keeps the host's version", async () => {
    const { ws, sb } = await box({ "shared.txt": "v1\n" });
    const pending = sb.exec("sleep 1; echo from-sandbox > shared.txt");
    await new Promise((r) => setTimeout(r, 300));
    writeFileSync(join(ws, "shared.txt"), "edited on the host\n");
    const r = await pending;
    assert.match(r.stderr, /changed on the host meanwhile; the host's version is kept\): shared\.txt/);
    assert.equal(readFileSync(join(ws, "shared.txt"), "utf8"), "edited on the host\n");
    assert.equal((await sb.exec("cat shared.txt")).stdout, "edited on the host\n");
  });

  test("node_modules stays on its side; a workspace over the limits is refused at create", async () => {
    const { ws, sb } = await box({ "node_modules/x/i.js": "host\n", "src/node_modules/y.js": "1" });
    const r = await sb.exec(
      "ls node_modules src 2>&1; mkdir -p node_modules/z && echo remote > node_modules/z/r.js",
    );
    assert.match(r.stdout, /cannot access 'node_modules'/);
    assert.equal(existsSync(join(ws, "node_modules/z")), false);
    // node_modules does not count against the limits; other files do.
    const small = { ...e2b, sync: { maxBytes: 10, maxEntries: 1000 } };
    open.push(await E2BSandbox.create({ workspace: ws, e2b: small }));
    writeFileSync(join(ws, "big.txt"), "0123456789abcdef");
    await assert.rejects(
      E2BSandbox.create({ workspace: ws, e2b: small }),
      /holds 16 bytes of files to copy into the sandbox, more than the 10 bytes allowed/,
    );
    await assert.rejects(
      E2BSandbox.create({ workspace: ws, e2b: { ...e2b, sync: { maxBytes: 1e9, maxEntries: 1 } } }),
      /more than 1 files and folders/,
    );
  });

  test("a pull over the size limit is refused with a note, the rest comes back", async () => {
    const { ws, sb } = await box({}, { sync: { maxBytes: 1000, maxEntries: 1000 } });
    const r = await sb.exec("head -c 5000 /dev/zero > big.bin; echo small > small.txt");
    assert.match(
      r.stderr,
      /not copied back from the sandbox \(over the 1000 bytes a sync may carry\): big\.bin/,
    );
    assert.equal(existsSync(join(ws, "big.bin")), false);
    assert.equal(readFileSync(join(ws, "small.txt"), "utf8"), "small\n");
  });

  test("output is capped inside the sandbox: head and tail, byte counts, flat memory", async () => {
    const { sb } = await box();
    const before = process.memoryUsage().rss;
    const r = await sb.exec("head -c 50000000 /dev/zero | tr '\\0' x; echo; echo tail-line; echo e >&2", {
      maxOutputBytes: 2000,
    });
    assert.equal(r.exitCode, 0);
    assert.equal(r.truncated, true);
    assert.equal(r.stdoutBytes, 50_000_000 + 1 + 10);
    assert.ok(r.stdout.length < 2200);
    assert.match(r.stdout, /^x{1000}\n\[… 49998011 bytes of output truncated …\]\nx+\ntail-line\n$/);
    assert.equal(r.stderr, "e\n");
    assert.ok(process.memoryUsage().rss - before < 40 * 1024 * 1024, "the 50 MB never reached this process");
  });

  test("a process writing into the wrapper's own pipe is cut off, not buffered", async () => {
    const { sb } = await box();
    const t0 = Date.now();
    const before = process.memoryUsage().rss;
    await assert.rejects(
      sb.exec("head -c 50000000 /dev/zero > /proc/$PPID/fd/1; sleep 30", { maxOutputBytes: 1000 }),
      /a process in the sandbox sent more than 67536 characters of output; it was stopped/,
    );
    assert.ok(Date.now() - t0 < 15_000);
    assert.ok(process.memoryUsage().rss - before < 40 * 1024 * 1024);
    assert.equal(
      (await sb.exec("pgrep -c -x sleep || true")).stdout.trim(),
      "0",
      "its processes were stopped",
    );
  });

  test("timeouts and aborts stop the command's whole group and keep what it printed", async () => {
    const { sb } = await box();
    const t0 = Date.now();
    let r = await sb.exec("echo before; (sleep 30; echo child) & sleep 30", { timeoutMs: 800 });
    assert.equal(r.timedOut, true);
    assert.equal(r.exitCode, null);
    assert.equal(r.stdout, "before\n");
    assert.ok(Date.now() - t0 < 10_000);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 500);
    r = await sb.exec("echo started; sleep 30", { signal: ac.signal });
    assert.equal(r.aborted, true);
    assert.equal(r.stdout, "started\n");
    // A command that ignores SIGTERM is killed a second later.
    const t1 = Date.now();
    r = await sb.exec("trap '' TERM; echo stubborn; sleep 30", { timeoutMs: 500 });
    assert.equal(r.timedOut, true);
    assert.equal(r.stdout, "stubborn\n");
    assert.ok(Date.now() - t1 < 5000, `took ${Date.now() - t1} ms`);
    // Nothing of any of them is still running in the sandbox.
    assert.equal((await sb.exec("pgrep -c sleep || true")).stdout.trim(), "0");
  });

  test("stdin, env, cwd and background processes", async () => {
    const { sb } = await box({ "sub/f.txt": "f\n" });
    let r = await sb.exec("cat; pwd; echo $MY_VAR", {
      stdin: "piped in\n",
      cwd: "sub",
      env: { MY_VAR: "v" },
    });
    assert.equal(r.stdout, "piped in\n/home/user/workspace/sub\nv\n");
    await assert.rejects(sb.exec("pwd", { cwd: "../.." }), /escapes the workspace/);
    r = await sb.exec("sleep 60 &", { keepBackground: true });
    assert.equal(r.exitCode, 0);
    assert.equal((await sb.exec("pgrep -c -x sleep || true")).stdout.trim(), "1", "kept as asked");
    await sb.exec("pkill -x sleep; sleep 60 & echo started");
    assert.equal((await sb.exec("pgrep -c -x sleep || true")).stdout.trim(), "0", "not kept by default");
  });

  test("the heartbeat keeps a short-lived sandbox alive while this process runs; destroy kills it", async () => {
    const { sb } = await box({}, { ttlMs: 4000 });
    const info = await Sandbox.getInfo(sb.remoteId, sdk());
    assert.ok(info.endAt.getTime() - Date.now() <= 4500, "created with the short timeout");
    await new Promise((r) => setTimeout(r, 5500));
    assert.equal((await sb.exec("echo alive")).stdout, "alive\n");
    const id = sb.remoteId;
    await sb.destroy();
    await assert.rejects(Sandbox.getInfo(id, sdk()), /not found/i);
    await assert.rejects(sb.exec("true"), /has been destroyed/);
  });

  test("a process that dies without destroying leaves a sandbox the service ends within its timeout", async () => {
    const ws = mkdtempSync(join(scratch, "ws-"));
    const program = `
      import { E2BSandbox } from "@hands/sandbox";
      const sb = await E2BSandbox.create({ workspace: ${JSON.stringify(ws)}, e2b: ${JSON.stringify({ ...e2b, ttlMs: 4000 })} });
      console.log(sb.remoteId);
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", program], {
      cwd: new URL(".", import.meta.url).pathname,
      stdio: ["ignore", "pipe", "inherit"],
    });
    const id = await new Promise<string>((resolve) =>
      child.stdout.once("data", (d) => resolve(String(d).trim())),
    );
    assert.match(id, /^[a-z0-9]{20}$/);
    await new Promise((r) => setTimeout(r, 5000));
    assert.equal((await Sandbox.getInfo(id, sdk())).state, "running", "alive while its owner beats");
    child.kill("SIGKILL");
    const t0 = Date.now();
    for (;;) {
      const gone = await Sandbox.getInfo(id, sdk()).then(
        () => false,
        () => true,
      );
      if (gone) break;
      assert.ok(Date.now() - t0 < 9000, "the orphan outlived its timeout");
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  test("an unknown template is a clear error", async () => {
    const ws = mkdtempSync(join(scratch, "ws-"));
    await assert.rejects(
      E2BSandbox.create({ workspace: ws, e2b: { ...e2b, template: "no-such-template" } }),
      /no such template/,
    );
  });

  test("a symlinked workspace entry pointing out is pushed as a link, never followed", async () => {
    const { ws, sb } = await box();
    const secret = join(scratch, "host-only.txt");
    writeFileSync(secret, "never uploaded\n");
    symlinkSync(secret, join(ws, "leak"));
    const r = await sb.exec("readlink leak; cat leak 2>&1 | head -c 200");
    assert.equal(r.stdout.split("\n")[0], secret);
    assert.doesNotMatch(r.stdout, /never uploaded/);
  });
});
