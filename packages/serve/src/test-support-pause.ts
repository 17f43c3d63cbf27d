// A pause that keeps memory and processes (E2B's default keepMemory), per backend, through the
// official SDK (e2b-pause-memory*.test.ts): a counter held only in a shell's memory stands still
// while paused and goes on from where it stood after connect; the paused sandbox's commands are
// listed and connectable again; a kill of a frozen sandbox leaves nothing behind; a timeout's
// pause with autoResume is woken by traffic to a server that kept running; a frozen pause gives
// its memory back after the service's limit, or when a create needs its slot.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { listCgroups } from "@hands/sandbox";
import { Sandbox } from "e2b";
import { raw, startTestServe, type TestServe } from "./test-support.js";

const COUNTER = "n=0; while true; do n=$((n+1)); echo $n > /home/user/count; sleep 0.05; done";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function count(sb: Sandbox): Promise<number> {
  return Number((await sb.files.read("/home/user/count")).trim());
}

async function untilCounting(sb: Sandbox): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const n = await count(sb).catch(() => 0);
    if (n > 3) return n;
    await sleep(50);
  }
  throw new Error("the counter did not start");
}

export function pauseMemorySuite(template: string, skip: string | false): void {
  describe(`pause keeps memory and processes (${template})`, { skip, timeout: 180_000 }, () => {
    let s: TestServe;
    const made: Sandbox[] = [];
    before(async () => {
      s = await startTestServe();
      process.env.E2B_DOMAIN = "localhost";
    });
    after(async () => {
      for (const sb of made) await sb.kill().catch(() => {});
      await s?.stop();
    });

    it("freezes a counter held in a shell's memory while paused; it goes on after connect, its command listed", async () => {
      const sb = await Sandbox.create(template, { envs: { KEPT: "in-memory" } });
      made.push(sb);
      const counter = await sb.commands.run(COUNTER, { background: true, timeoutMs: 0 });
      const sleeper = await sb.commands.run("sleep 3600", { background: true, timeoutMs: 0 });
      await untilCounting(sb);
      assert.equal(await sb.pause(), true);
      assert.equal(await sb.isRunning(), false);
      // Nothing of it runs while paused: the counter's file stands still.
      const pausedInfo = await Sandbox.getInfo(sb.sandboxId);
      assert.equal(pausedInfo.state, "paused");
      await sleep(500);
      const back = await Sandbox.connect(sb.sandboxId);
      const atResume = await count(back);
      await sleep(400);
      const later = await count(back);
      assert.ok(later > atResume, `the counter did not go on after resume (${atResume} → ${later})`);
      // The 500 ms paused at one step per 50 ms would add ~10 steps: frozen, it moved only while running.
      const steps = later - atResume;
      assert.ok(steps < 40, `implausible: ${steps} steps in 400 ms`);
      const pids = (await back.commands.list()).map((p) => p.pid);
      assert.ok(pids.includes(counter.pid), `the counter ${counter.pid} is not listed: ${pids}`);
      assert.ok(pids.includes(sleeper.pid), `sleep ${sleeper.pid} is not listed: ${pids}`);
      const again = await back.commands.connect(sleeper.pid);
      assert.equal(again.pid, sleeper.pid);
      // The shell's own memory: n went on from where it stood (a fresh shell would count from 1).
      assert.ok(atResume > 3);
      assert.equal((await back.commands.run("echo $KEPT")).stdout, "in-memory\n");
    });

    it("a paused sandbox's commands are refused until it is resumed; kill of a frozen sandbox leaves no process or group", async () => {
      const before_ = new Set(listCgroups());
      const sb = await Sandbox.create(template);
      await sb.commands.run("sleep 3600", { background: true, timeoutMs: 0 });
      await sb.pause();
      await assert.rejects(sb.commands.run("true", { requestTimeoutMs: 10_000 }));
      assert.equal(await sb.kill(), true);
      await sleep(300);
      const left = listCgroups().filter((c) => !before_.has(c));
      assert.deepEqual(left, [], "a frozen sandbox's cgroup outlived its kill");
      const info = await raw(`${s.apiUrl}/sandboxes/${sb.sandboxId}`, { headers: { "x-api-key": s.key } });
      assert.equal(info.status, 404);
    });

    it("a timeout's pause keeps a server running; traffic with autoResume wakes it", async () => {
      const sb = await Sandbox.create(template, {
        timeoutMs: 2500,
        lifecycle: { onTimeout: "pause", autoResume: true },
      });
      made.push(sb);
      await sb.commands.run(
        `python3 -c 'import http.server,random; v=str(random.random()).encode()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(s): s.send_response(200); s.end_headers(); s.wfile.write(v)
    def log_message(s,*a): pass
http.server.HTTPServer(("127.0.0.1",8000),H).serve_forever()'`,
        { background: true, timeoutMs: 0 },
      );
      const get = () =>
        raw(`${s.sandboxUrl}/`, {
          headers: {
            "e2b-sandbox-id": sb.sandboxId,
            "e2b-sandbox-port": "8000",
            "e2b-traffic-access-token": sb.trafficAccessToken ?? "",
          },
        });
      let first = await get();
      for (let i = 0; first.status !== 200 && i < 100; i++) {
        await sleep(100);
        first = await get();
      }
      assert.equal(first.status, 200, first.text);
      for (let i = 0; (await Sandbox.getInfo(sb.sandboxId)).state !== "paused"; i++) {
        assert.ok(i < 100, "the timeout did not pause the sandbox");
        await sleep(100);
      }
      const woken = await get();
      assert.equal(woken.status, 200, woken.text);
      assert.equal(woken.text, first.text, "the server's random value changed: it was restarted, not kept");
      assert.equal((await Sandbox.getInfo(sb.sandboxId)).state, "running");
    });
  });
}

/** The limits on a frozen pause: the service's time limit, and a create that needs its slot. */
export function frozenLimitSuite(template: string, skip: string | false): void {
  describe(`a frozen pause gives its memory back (${template})`, { skip, timeout: 120_000 }, () => {
    let s: TestServe;
    before(async () => {
      s = await startTestServe({ frozenLimitMs: 400, capacity: 1 });
    });
    after(async () => {
      await s?.stop();
    });

    it("after the service's limit, and when a create needs its slot, the pause keeps files only", async () => {
      const a = await Sandbox.create(template);
      await a.files.write("kept.txt", "files stay");
      await a.commands.run("sleep 3600", { background: true, timeoutMs: 0 });
      await a.pause();
      // The only slot is the frozen sandbox's: a create takes it, a's pause becomes files-only.
      const b = await Sandbox.create(template);
      await b.commands.run("sleep 3600", { background: true, timeoutMs: 0 });
      await b.kill();
      const a2 = await Sandbox.connect(a.sandboxId);
      assert.equal(await a2.files.read("kept.txt"), "files stay");
      assert.deepEqual(await a2.commands.list(), [], "the evicted pause kept its processes");
      // Frozen past frozenLimitMs: the reaper ends its processes, files stay.
      await a2.commands.run("sleep 3600", { background: true, timeoutMs: 0 });
      await a2.pause();
      await sleep(1000);
      const a3 = await Sandbox.connect(a.sandboxId);
      assert.deepEqual(await a3.commands.list(), []);
      assert.equal(await a3.files.read("kept.txt"), "files stay");
      await a3.kill();
    });
  });
}
