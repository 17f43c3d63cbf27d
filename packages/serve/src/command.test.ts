// `hands serve` from the command line: keys are created, listed and revoked in the data folder,
// and the service starts, answers, and stops cleanly on SIGTERM.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runServeCommand } from "./command.js";

const HANDS = fileURLToPath(new URL("../../cli/bin/hands.js", import.meta.url));

describe("hands serve (command line)", { timeout: 60_000 }, () => {
  const data = mkdtempSync(join(tmpdir(), "hs-cli-"));
  after(() => rmSync(data, { recursive: true, force: true }));

  it("creates, lists and revokes keys", async () => {
    let out = "";
    const w = (s: string) => {
      out += s;
    };
    assert.equal(
      await runServeCommand(["keys", "create", "acme", "--max-sandboxes", "3", "--data", data], w),
      0,
    );
    const key = /^(e2b_[0-9a-f]{40})$/m.exec(out)?.[1];
    assert.ok(key, out);
    assert.match(out, /tenant acme: 3 sandboxes/);
    out = "";
    assert.equal(await runServeCommand(["keys", "list", "--data", data], w), 0);
    const id = key.slice(4, 16);
    assert.match(out, new RegExp(`^${id}  acme  default  created `, "m"));
    assert.ok(!out.includes(key), "list never shows the key");
    out = "";
    assert.equal(await runServeCommand(["keys", "revoke", id, "--data", data], w), 0);
    assert.equal(await runServeCommand(["keys", "revoke", id, "--data", data], w), 1);
    out = "";
    await runServeCommand(["keys", "list", "--data", data], w);
    assert.match(out, /revoked /);
    assert.equal(await runServeCommand(["bogus"], () => {}), 2);
    assert.equal(
      await runServeCommand(["keys", "create", "x", "--max-cpus", "lots", "--data", data], () => {}),
      1,
    );
  });

  it("starts the service, which answers until SIGTERM", async () => {
    const child = spawn(
      process.execPath,
      [HANDS, "serve", "--data", data, "--api", "127.0.0.1:0", "--sandbox-address", "127.0.0.1:0"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    for (let i = 0; i < 200 && !/management API (\S+)/.test(out); i++)
      await new Promise((r) => setTimeout(r, 50));
    const api = /management API (\S+)/.exec(out)?.[1];
    assert.ok(api, out);
    assert.equal((await fetch(`${api}/health`)).status, 200);
    const code = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    assert.equal(await code, 0);
    assert.match(out, /stopping/);
  });
});
