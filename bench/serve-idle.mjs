#!/usr/bin/env node
// What held idle sandboxes cost `hands serve`: busy clients (create → commands.run → kill, in a
// loop) share a node of --capacity sandboxes with idle clients (create, then walk away without a
// kill: the sandbox is held until its timeout). For each timeout T the idle sandboxes get, busy
// throughput (sandboxes completed per minute), refusals and the idle sandboxes held are measured
// over --seconds. Little's law says idle clients hold rate × T sandboxes; this shows what that does.
// `node bench/serve-idle.mjs [--capacity 10 --busy 4 --idle-every 2000 --seconds 60 --timeouts 5,15,45]`
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox } from "e2b";
import { startServe } from "../packages/serve/dist/index.js";

const arg = (name, d) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const CAPACITY = Number(arg("capacity", 10));
const BUSY = Number(arg("busy", 4));
const IDLE_EVERY = Number(arg("idle-every", 2000));
const SECONDS = Number(arg("seconds", 60));
const TIMEOUTS = String(arg("timeouts", "5,15,45")).split(",").map(Number);

async function round(timeoutS) {
  const dataDir = mkdtempSync(join(tmpdir(), "hsi-"));
  const s = await startServe({
    dataDir,
    warm: {},
    capacity: CAPACITY,
    queueTimeoutMs: 5000,
    reapIntervalMs: 500,
  });
  const { key } = await s.keys.create("bench", "k", { maxSandboxes: 1000, maxCpus: 1000, maxMemoryMB: 1e7 });
  const opts = { apiKey: key, apiUrl: s.apiUrl, sandboxUrl: s.sandboxUrl };
  const until = Date.now() + SECONDS * 1000;
  let done = 0;
  let refused = 0;
  let idleMade = 0;
  let idleRefused = 0;
  let heldMax = 0;
  const busy = async () => {
    while (Date.now() < until) {
      try {
        const sb = await Sandbox.create("base", { ...opts, timeoutMs: 60_000 });
        await sb.commands.run("true");
        await sb.kill();
        done++;
      } catch {
        refused++;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  const idle = async () => {
    const pending = [];
    while (Date.now() < until) {
      pending.push(
        Sandbox.create("base", { ...opts, timeoutMs: timeoutS * 1000 }).then(
          () => idleMade++,
          () => idleRefused++,
        ),
      );
      await new Promise((r) => setTimeout(r, IDLE_EVERY));
    }
    await Promise.all(pending);
  };
  const sampler = setInterval(async () => {
    const n = (await s.store.countByState()).running ?? 0;
    heldMax = Math.max(heldMax, n);
  }, 1000);
  const load0 = loadavg()[0];
  await Promise.all([idle(), ...Array.from({ length: BUSY }, busy)]);
  clearInterval(sampler);
  await s.close();
  rmSync(dataDir, { recursive: true, force: true });
  const r = {
    timeoutS,
    busyPerMin: (done / SECONDS) * 60,
    busyDone: done,
    busyRefused: refused,
    idleMade,
    idleRefused,
    runningMax: heldMax,
    load: `${load0.toFixed(1)}→${loadavg()[0].toFixed(1)}`,
  };
  console.log(JSON.stringify(r));
  return r;
}

console.log(
  `capacity ${CAPACITY}, ${BUSY} busy clients, one idle sandbox every ${IDLE_EVERY} ms, ${SECONDS} s per round`,
);
for (const t of TIMEOUTS) await round(t);
