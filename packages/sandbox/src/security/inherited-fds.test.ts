// Attack surface: descriptors Hands itself inherited. Whatever its own parent left open (a
// terminal multiplexer's pipe, a CI runner's log, a job server) must not reach sandboxed
// commands: a write end of a host pipe in a sandbox is a channel out of it. Hands is started
// here with one such descriptor; a command in a session and a one-shot command list theirs.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, test } from "node:test";
import { explicitlySkipped, requireBackend } from "../testing.js";

const CHILD = `
const { BwrapSandbox, runBwrapOnce } = await import(process.argv[1]);
const { mkdtempSync } = await import("node:fs");
const ws = mkdtempSync("/tmp/hands-fds-ws-");
// Every descriptor of the command's shell but the one ls opens to list them.
const list = 'ls -l /proc/self/fd | grep -v " -> /proc/" | grep -o "[0-9]* -> .*"';
const sb = await BwrapSandbox.create({ workspace: ws });
const session = [await sb.exec(list), await sb.exec(list)];
await sb.destroy();
const once = await runBwrapOnce({ workspace: ws }, list);
process.stdout.write(JSON.stringify({ session, once }));
`;

describe("security: inherited descriptors (bwrap)", { skip: explicitlySkipped("bwrap") }, () => {
  test("a command sees only stdin, stdout and stderr, in a session and one-shot", async () => {
    await requireBackend("bwrap");
    const index = new URL("../index.js", import.meta.url).href;
    // fd 3 of the child: a pipe its parent (this test) left open, as a harness would.
    const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD, index], {
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString("utf8");
    });
    child.stderr?.on("data", (c: Buffer) => {
      err += c.toString("utf8");
    });
    const code = await new Promise((r) => child.once("close", r));
    assert.equal(code, 0, err);
    type Res = { stdout: string; exitCode: number };
    const r = JSON.parse(out) as { session: Res[]; once: Res };
    for (const res of [...r.session, r.once]) {
      assert.equal(res.exitCode, 0, JSON.stringify(res));
      const fds = res.stdout
        .trim()
        .split("\n")
        .map((l) => Number(l.split(" ")[0]));
      assert.deepEqual(fds.sort(), [0, 1, 2], res.stdout);
    }
  });
});
