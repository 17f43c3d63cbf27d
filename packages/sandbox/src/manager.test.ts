// Session manager: queueing at the maximum, idle/age reaping, the audit log, leftovers of a
// crashed run (a container whose owner process is gone, an empty cgroup).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Cgroup, detectCgroups, listCgroups } from "./cgroups.js";
import { LABEL_CREATED, LABEL_OWNER_PID, LABEL_SESSION } from "./docker.js";
import { SessionManager } from "./manager.js";
import { reapLeftovers } from "./reaper.js";
import { explicitlySkipped, requireBackend, TEST_LIMITS, tempWorkspace } from "./testing.js";

describe("session manager (bwrap)", { skip: explicitlySkipped("bwrap") }, () => {
  let ws: { dir: string; cleanup: () => Promise<void> };
  before(async () => {
    await requireBackend("bwrap");
    ws = await tempWorkspace();
  });
  after(() => ws?.cleanup());

  test("queues sessions beyond the maximum and audits create, exec, files and destroy", async () => {
    const audit = join(ws.dir, "..", `audit-${Date.now()}.jsonl`);
    const m = new SessionManager({ maxSessions: 2, auditPath: audit });
    const a = await m.create({ kind: "bwrap", workspace: ws.dir, limits: TEST_LIMITS });
    const b = await m.create({ kind: "bwrap", workspace: ws.dir, limits: TEST_LIMITS });
    let thirdReady = false;
    const third = m.create({ kind: "bwrap", workspace: ws.dir, limits: TEST_LIMITS }).then((s) => {
      thirdReady = true;
      return s;
    });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(thirdReady, false, "the third session must wait for a free slot");
    assert.equal((await a.exec("echo hi; exit 3")).exitCode, 3);
    await a.writeFile("f.txt", "data");
    assert.equal((await a.readFile("f.txt")).toString(), "data");
    await a.destroy();
    const c = await third;
    assert.equal(m.size, 2);
    await m.close();
    assert.equal(m.size, 0);
    const events = readFileSync(audit, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const kinds = events.map((e) => e.event);
    assert.deepEqual(kinds.filter((k) => k === "create").length, 3);
    assert.ok(events.some((e) => e.event === "exec" && e.command === "echo hi; exit 3" && e.exitCode === 3));
    assert.ok(
      events.some((e) => e.event === "file" && e.op === "write" && e.path === "f.txt" && e.bytes === 4),
    );
    assert.ok(events.some((e) => e.event === "file" && e.op === "read" && e.path === "f.txt"));
    assert.equal(kinds.filter((k) => k === "destroy").length, 3);
    assert.ok(b.id && c.id);
  });

  test("reaps idle sessions after the TTL and old ones after the maximum age", async () => {
    const m = new SessionManager({ idleTtlMs: 150, maxAgeMs: 60_000 });
    const s = await m.create({ kind: "bwrap", workspace: ws.dir, limits: TEST_LIMITS });
    assert.deepEqual(await m.reap(), []);
    await new Promise((r) => setTimeout(r, 250));
    assert.deepEqual(await m.reap(), [s.id]);
    await assert.rejects(s.exec("true"), /destroyed/);
    const m2 = new SessionManager({ idleTtlMs: 60_000, maxAgeMs: 100 });
    const s2 = await m2.create({ kind: "bwrap", workspace: ws.dir, limits: TEST_LIMITS });
    await new Promise((r) => setTimeout(r, 150));
    assert.deepEqual(await m2.reap(), [s2.id]);
    await m.close();
    await m2.close();
  });

  test("prunes cgroups a crashed run left behind", {
    skip: detectCgroups() === "none" ? "no writable cgroups" : undefined,
  }, async () => {
    const cg = await Cgroup.create(`crashed-${Date.now()}`, TEST_LIMITS);
    assert.ok(cg);
    const name = cg.dirs[0]?.split("/").pop() ?? "";
    assert.ok(listCgroups().some((d) => d.endsWith(`/${name}`)));
    const r = await reapLeftovers({ cgroupMinAgeMs: 0 });
    assert.ok(r.cgroups >= 1);
    assert.equal(
      listCgroups().some((d) => d.endsWith(`/${name}`)),
      false,
    );
  });
});

describe("reaper (docker)", { skip: explicitlySkipped("docker") }, () => {
  test("removes containers whose owning process is gone", async () => {
    await requireBackend("docker");
    const { dockerClient } = await import("./docker.js");
    const { imageTag } = await import("./image.js");
    const docker = await dockerClient();
    const id = `crashed-${Date.now()}`;
    // A container as a crashed run would leave it: labelled, owner PID no longer alive.
    const c = await docker.createContainer({
      Image: imageTag(),
      Cmd: ["sleep", "infinity"],
      Labels: {
        [LABEL_SESSION]: id,
        [LABEL_CREATED]: new Date().toISOString(),
        [LABEL_OWNER_PID]: "999999999",
      },
      HostConfig: { NetworkMode: "none" },
    });
    await c.start();
    const r = await reapLeftovers({ docker: true });
    assert.ok(r.containers.includes(id));
    // Another test's reaper may be removing it at the same moment ("removal in progress"): gone soon.
    let left = 1;
    for (let i = 0; i < 50 && left > 0; i++) {
      const list = await docker.listContainers({ all: true, filters: { label: [`${LABEL_SESSION}=${id}`] } });
      left = list.length;
      if (left > 0) await new Promise((w) => setTimeout(w, 200));
    }
    assert.equal(left, 0);
  });
});
