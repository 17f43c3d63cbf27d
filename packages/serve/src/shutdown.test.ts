// `hands serve` stops promptly on SIGTERM after real use: bwrap and docker sandboxes created,
// used (commands, a watch, a terminal) and killed, one still running and
// one create under way when the signal comes. The process must be gone within a few seconds
// (a long-running service once stayed ~70 s after "stopping"), leaving no container behind.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { checkBwrap, checkDocker, dockerClient, imageExists, imageTag } from "@hands/sandbox";
import { Sandbox } from "e2b";
import { runServeCommand } from "./command.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;
const docker = (await checkDocker()).ok && (await imageExists(imageTag()));

const MAIN = `
const { runServeCommand } = await import(process.argv[1]);
process.exitCode = await runServeCommand(["--data", process.argv[2], "--api", "127.0.0.1:0", "--sandbox-address", "127.0.0.1:0"]);
`;

// The same, with a listening socket opened beside the service (as a library might leave one).
const MAIN_WITH_HELD_HANDLE = `
const net = await import("node:net");
net.createServer().listen(0, "127.0.0.1");
${MAIN}`;

describe("hands serve stops promptly on SIGTERM", { skip, timeout: 180_000 }, () => {
  const data = mkdtempSync(join(tmpdir(), "hs-stop-"));
  after(() => rmSync(data, { recursive: true, force: true }));

  it("exits even when something it does not own still holds the process, and says what", async () => {
    const child = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        MAIN_WITH_HELD_HANDLE,
        new URL("./command.js", import.meta.url).href,
        data,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    const exited = new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
    try {
      for (let i = 0; i < 400 && !/sandboxes (\S+)/.test(out); i++)
        await new Promise((r) => setTimeout(r, 50));
      assert.match(out, /management API/, err);
      const t0 = Date.now();
      child.kill("SIGTERM");
      const code = await Promise.race([
        exited,
        new Promise((r) => setTimeout(() => r("still running"), 15_000)),
      ]);
      assert.equal(code, 0, err);
      assert.ok(Date.now() - t0 < 10_000);
      assert.match(err, /stopped; still open after 3 s: .*TCPServerWrap.*; exiting/);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it(`exits within seconds after bwrap${docker ? " and docker" : ""} sandboxes were used, with one running and one starting`, async () => {
    let keyOut = "";
    await runServeCommand(["keys", "create", "t", "--data", data], (s) => {
      keyOut += s;
    });
    const apiKey = /(e2b_[0-9a-f]{40})/.exec(keyOut)?.[1] as string;
    const child = spawn(
      process.execPath,
      ["--input-type=module", "-e", MAIN, new URL("./command.js", import.meta.url).href, data],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    const exited = new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
    try {
      for (let i = 0; i < 400 && !/sandboxes (\S+)/.test(out); i++)
        await new Promise((r) => setTimeout(r, 50));
      const m = /management API (\S+)\s+sandboxes (\S+)/.exec(out);
      assert.ok(m, out + err);
      const o = { apiKey, apiUrl: m[1] as string, sandboxUrl: m[2] as string };
      const templates = docker ? ["base", "docker"] : ["base"];
      for (const t of templates) {
        const sb = await Sandbox.create(t, o);
        assert.equal((await sb.commands.run("echo hi")).stdout, "hi\n");
        await sb.commands.run("sleep 60", { background: true });
        await sb.files.watchDir(".", () => {});
        await sb.pty.create({ cols: 80, rows: 24, onData: () => {} });
        await sb.kill();
      }
      const running = await Sandbox.create(templates.at(-1) as string, o);
      await running.commands.run("sleep 60", { background: true });
      const starting = Sandbox.create(templates.at(-1) as string, o).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
      const t0 = Date.now();
      child.kill("SIGTERM");
      const code = await Promise.race([
        exited,
        new Promise((r) => setTimeout(() => r("still running"), 20_000)),
      ]);
      const ms = Date.now() - t0;
      assert.equal(code, 0, `exit code after SIGTERM (${ms} ms): ${err}`);
      assert.ok(ms < 10_000, `stopped in ${ms} ms`);
      assert.match(out, /stopping/);
      await starting;
      if (docker) {
        const left = await (await dockerClient()).listContainers({
          filters: { label: ["hands.session"] },
        });
        assert.deepEqual(
          left.filter((c) => (c.Labels["hands.session"] ?? "").includes(running.sandboxId)),
          [],
          "no container of the service is left",
        );
      }
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
