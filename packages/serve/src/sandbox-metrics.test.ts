// What the dashboard's Sandboxes page reads: E2B's metrics endpoint through the official SDK
// (figures that follow what really runs in the sandbox), and the Hands audit-trail extension,
// scoped to the tenant that owns the sandbox.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { Sandbox } from "e2b";
import { raw, startTestServe, type TestServe } from "./test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;
const MB = 1024 * 1024;

describe("sandbox metrics and audit trail", { skip, timeout: 120_000 }, () => {
  let s: TestServe;
  before(async () => {
    s = await startTestServe();
  });
  after(async () => {
    await s?.stop();
  });

  it("Sandbox.getMetrics reports the CPU, memory, disk and processes of what runs in it", async () => {
    const sb = await Sandbox.create({ timeoutMs: 120_000 });
    try {
      const idle = await sb.getMetrics();
      assert.equal(idle.length, 1);
      const i = idle[0] as (typeof idle)[0];
      assert.ok(i.timestamp instanceof Date && Math.abs(i.timestamp.getTime() - Date.now()) < 10_000);
      assert.equal(i.cpuCount, 1);
      assert.equal(i.memTotal, 512 * MB);
      assert.ok(i.cpuUsedPct < 50, `idle CPU ${i.cpuUsedPct}%`);
      // A busy loop, 64 MB held, and a 3 MB file: the next readings must show each of them.
      await sb.files.write("blob.bin", new Uint8Array(3 * MB).fill(7).buffer as ArrayBuffer);
      await sb.commands.run("python3 -c 'while True: pass'", { background: true });
      await sb.commands.run(
        `python3 -c 'import time; b = bytearray(64 * 1024 * 1024); b[::4096] = b"x" * len(b[::4096]); time.sleep(600)'`,
        { background: true },
      );
      // Read until the loop has had its share of a CPU (on a loaded host its first 1.5 s may
      // not be): every 0.5 s, for up to 15 s.
      await new Promise((r) => setTimeout(r, 1500));
      let [busy] = await Sandbox.getMetrics(sb.sandboxId);
      for (let i = 0; i < 27 && (busy?.cpuUsedPct ?? 0) <= 40; i++) {
        await new Promise((r) => setTimeout(r, 500));
        [busy] = await Sandbox.getMetrics(sb.sandboxId);
      }
      assert.ok(busy);
      assert.ok(busy.cpuUsedPct > 40, `busy CPU ${busy.cpuUsedPct}%`);
      assert.ok(busy.cpuUsedPct <= 100);
      assert.ok(busy.memUsed > i.memUsed + 60 * MB, `memory ${i.memUsed} -> ${busy.memUsed}`);
      assert.ok(busy.memUsed <= busy.memTotal);
      assert.ok(busy.diskUsed >= 3 * MB, `disk ${busy.diskUsed}`);
      assert.ok(busy.diskTotal >= busy.diskUsed);
      // The process count is an extra field the SDK does not map: read it from the wire.
      const wire = await raw(`${s.apiUrl}/sandboxes/${sb.sandboxId}/metrics`, {
        headers: { "x-api-key": s.key },
      });
      const [m] = wire.json() as Array<Record<string, unknown>>;
      assert.equal(typeof m?.timestampUnix, "number");
      // The agent, the shell of each background command, and the two python processes.
      assert.ok(typeof m?.pids === "number" && m.pids >= 3, `processes ${String(m?.pids)}`);
      // start/end as the SDK sends them are accepted; garbage is a 400 in E2B's error shape.
      assert.equal(
        (await sb.getMetrics({ start: new Date(Date.now() - 60_000), end: new Date() })).length,
        1,
      );
      const bad = await raw(`${s.apiUrl}/sandboxes/${sb.sandboxId}/metrics?start=yesterday`, {
        headers: { "x-api-key": s.key },
      });
      assert.equal(bad.status, 400);
      assert.deepEqual(Object.keys(bad.json() as object).sort(), ["code", "message"]);
      // Paused: nothing runs, so there is no reading.
      await sb.pause();
      assert.deepEqual(await Sandbox.getMetrics(sb.sandboxId), []);
    } finally {
      await Sandbox.kill(sb.sandboxId);
    }
  });

  it("another tenant's sandbox has neither metrics nor an audit trail (404), and a bad key gets 401", async () => {
    const sb = await Sandbox.create();
    const other = (await s.keys.create("tenant-b")).key;
    try {
      await sb.commands.run("echo one");
      await assert.rejects(Sandbox.getMetrics(sb.sandboxId, s.opts(other)), /not found/i);
      const url = `${s.apiUrl}/hands/v1/sandboxes/${sb.sandboxId}/audit`;
      const theirs = await raw(url, { headers: { "x-api-key": other } });
      assert.equal(theirs.status, 404);
      assert.match(theirs.text, /not found/);
      assert.equal((await raw(url)).status, 401);
      assert.equal((await raw(url, { headers: { "x-api-key": "e2b_" + "0".repeat(40) } })).status, 401);
      assert.equal((await raw(`${url}?limit=0`, { headers: { "x-api-key": s.key } })).status, 400);
      assert.equal((await raw(url, { method: "POST", headers: { "x-api-key": s.key } })).status, 405);
      const mine = await raw(url, { headers: { "x-api-key": s.key } });
      assert.equal(mine.status, 200);
      const trail = mine.json() as {
        sandboxID: string;
        entries: Array<{ time: string; event: string; detail: Record<string, unknown> }>;
      };
      assert.equal(trail.sandboxID, sb.sandboxId);
      assert.deepEqual(
        trail.entries.map((e) => e.event),
        ["create", "exec"],
      );
      assert.equal(trail.entries[1]?.detail.command, "/bin/bash -l -c echo one");
      assert.ok(!Number.isNaN(Date.parse(trail.entries[0]?.time ?? "")));
      // The sandbox's tenant and backend are in its detail and the list (extra fields).
      const info = (
        await raw(`${s.apiUrl}/sandboxes/${sb.sandboxId}`, { headers: { "x-api-key": s.key } })
      ).json() as Record<string, unknown>;
      assert.equal(info.tenantName, "tenant-a");
      assert.equal(info.backend, "bwrap");
      const listed = (
        await raw(`${s.apiUrl}/v2/sandboxes`, { headers: { "x-api-key": s.key } })
      ).json() as Array<Record<string, unknown>>;
      assert.deepEqual(
        listed.filter((r) => r.sandboxID === sb.sandboxId).map((r) => [r.tenantName, r.backend]),
        [["tenant-a", "bwrap"]],
      );
      // A killed sandbox keeps its trail, ending with the kill.
      await sb.kill();
      const end = (await raw(url, { headers: { "x-api-key": s.key } })).json() as typeof trail;
      assert.deepEqual(
        end.entries.map((e) => e.event),
        ["create", "exec", "kill"],
      );
    } finally {
      await Sandbox.kill(sb.sandboxId).catch(() => {});
    }
  });
});
