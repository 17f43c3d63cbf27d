// Long-lived processes in a real docker sandbox: talk over stdio, read the copied read-only
// folder (which the sandbox's user cannot change), refuse a copy outside its root, end on kill.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { DOCKER_COPY_ROOT } from "./docker-long-lived.js";
import { spawnLongLived } from "./long-lived.js";
import { explicitlySkipped, makeSandbox, requireBackend, tempWorkspace } from "./testing.js";
import type { Sandbox } from "./types.js";

describe("docker: long-lived processes", { skip: explicitlySkipped("docker") }, () => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  let host: Awaited<ReturnType<typeof tempWorkspace>>;
  let sandbox: Sandbox;
  before(async () => {
    await requireBackend("docker");
    ws = await tempWorkspace();
    host = await tempWorkspace();
    mkdirSync(join(host.dir, "pkg", "lib"), { recursive: true });
    writeFileSync(join(host.dir, "pkg", "lib", "hello.txt"), "from the host\n");
    sandbox = await makeSandbox("docker", ws.dir);
  });
  after(async () => {
    await sandbox?.destroy();
    await ws?.cleanup();
    await host?.cleanup();
  });

  test("stdio round trip, a copied read-only folder, kill ends it", { timeout: 60_000 }, async () => {
    const p = await spawnLongLived(
      sandbox,
      [
        "sh",
        "-c",
        `cat ${DOCKER_COPY_ROOT}/pkg/lib/hello.txt; id -u; touch ${DOCKER_COPY_ROOT}/pkg/x 2>&1; cat`,
      ],
      { readOnlyBinds: [{ host: join(host.dir, "pkg"), path: `${DOCKER_COPY_ROOT}/pkg` }] },
    );
    assert.equal(p.workspacePath, "/workspace");
    let out = "";
    p.stdout.on("data", (c: Buffer) => {
      out += c.toString("utf8");
    });
    p.stdin.write("echoed back\n");
    const deadline = Date.now() + 20_000;
    while (!out.includes("echoed back") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.match(out, /^from the host\n/);
    assert.doesNotMatch(out, /^0$/m, "not root");
    assert.match(out, /Permission denied/);
    assert.match(out, /echoed back/);
    p.kill();
    const e = await Promise.race([p.exited, new Promise((r) => setTimeout(r, 10_000, "still running"))]);
    assert.notEqual(e, "still running");
    const ps = await sandbox.exec("ps -eo args | grep -c '^cat$' || true");
    assert.equal(ps.stdout.trim(), "0");
  });

  test("ten copies in a row all arrive (the host's tar may finish before the engine is ready)", {
    timeout: 60_000,
  }, async () => {
    for (let i = 0; i < 10; i++) {
      const p = await spawnLongLived(sandbox, ["cat", `${DOCKER_COPY_ROOT}/copy${i}/lib/hello.txt`], {
        readOnlyBinds: [{ host: join(host.dir, "pkg"), path: `${DOCKER_COPY_ROOT}/copy${i}` }],
      });
      let out = "";
      p.stdout.on("data", (c: Buffer) => {
        out += c.toString("utf8");
      });
      const e = await Promise.race([p.exited, new Promise((r) => setTimeout(r, 10_000, "still running"))]);
      assert.notEqual(e, "still running", `copy ${i}`);
      assert.equal(out, "from the host\n", `copy ${i}`);
    }
  });

  test("a copy outside the copy root is refused", async () => {
    await assert.rejects(
      spawnLongLived(sandbox, ["true"], { readOnlyBinds: [{ host: host.dir, path: "/workspace/x" }] }),
      /must be a direct child of \/run\/hands\/lsp/,
    );
  });
});
