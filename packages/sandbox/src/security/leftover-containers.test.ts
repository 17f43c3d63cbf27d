// Attack: an agent killed with SIGKILL never destroys its docker container, which then runs
// on (a busy loop inside was seen 8 minutes later). The next Hands process to start a docker
// session reaps it — and only it: containers of live owners (other sessions on this machine,
// other engineers' test runs) are left alone, which takes the owner's PID *and* start time.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { bootId, ownerGone, processStartTime } from "../proc.js";
import { explicitlySkipped, makeSandbox, requireBackend, tempWorkspace } from "../testing.js";

const INDEX = join(dirname(fileURLToPath(import.meta.url)), "..", "index.js");

describe("security: containers of killed agents (docker)", { skip: explicitlySkipped("docker") }, () => {
  test("SIGKILL the owner: the next start-up removes its container, not live ones", async () => {
    await requireBackend("docker");
    const { dockerClient, LABEL_SESSION } = await import("../docker.js");
    const docker = await dockerClient();
    const ws = await tempWorkspace();
    const script = `const m = await import(${JSON.stringify(INDEX)});
const sb = await m.createSandbox({ kind: "docker", workspace: ${JSON.stringify(ws.dir)} });
await sb.exec("(while :; do :; done) &", { keepBackground: true });
process.stdout.write("READY " + sb.id + "\\n");
setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const id = await new Promise<string>((resolve, reject) => {
      let seen = "";
      child.stdout.on("data", (c: Buffer) => {
        seen += c.toString();
        const m = /READY (\S+)\n/.exec(seen);
        if (m?.[1]) resolve(m[1]);
      });
      child.once("exit", (code) => reject(new Error(`child exited early (${code})`)));
    });
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const left = () => docker.listContainers({ all: true, filters: { label: [`${LABEL_SESSION}=${id}`] } });
    assert.equal((await left()).length, 1, "the killed agent's container should still be there");
    // Start-up: this process's first docker session reaps in the background.
    const sb = await makeSandbox("docker", ws.dir);
    try {
      for (let i = 0; i < 100 && (await left()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal((await left()).length, 0, "the dead owner's container was not reaped");
      const mine = await docker.listContainers({
        all: true,
        filters: { label: [`${LABEL_SESSION}=${sb.id}`] },
      });
      assert.equal(mine.length, 1, "a live session's container was reaped");
      assert.equal((await sb.exec("echo alive")).stdout, "alive\n");
    } finally {
      await sb.destroy();
      await ws.cleanup();
    }
  });

  test("an owner is gone only when its PID is free or now belongs to a later process", () => {
    const me = { pid: String(process.pid), start: processStartTime(process.pid) ?? "", boot: bootId() };
    assert.equal(ownerGone(me), false);
    assert.equal(ownerGone({ ...me, start: "1" }), true, "a reused PID is not the owner");
    assert.equal(ownerGone({ ...me, pid: "999999999" }), true);
    assert.equal(ownerGone({ ...me, boot: "another-boot" }), false, "another boot proves nothing");
  });
});
