#!/usr/bin/env node
// Is every command's output delivered whole under load? A real `hands serve` on loopback, the
// official e2b SDK, S sandboxes at once, each running C short `echo` commands one after another,
// in rounds until N commands have run; every result is checked: exit code 0, stdout exactly what
// was echoed, stderr empty. By default two busy loops run beside it for the whole run (a loaded
// machine is when a command's exit can overtake its last output). Exits 1 if any output was lost.
// `npm run bench:serve-output [-- --commands 10000 --sandboxes 40 --per-sandbox 20 --busy 2
//  --template base --json]`
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startServe } from "../packages/serve/dist/index.js";

const arg = (name, d) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const COMMANDS = Number(arg("commands", 10_000));
const SANDBOXES = Number(arg("sandboxes", 40));
const PER_SANDBOX = Number(arg("per-sandbox", 20));
const BUSY = Number(arg("busy", 2));
const TEMPLATE = arg("template", "base");
const JSON_OUT = process.argv.includes("--json");

const { Sandbox } = await import("e2b");

const busy = Array.from({ length: BUSY }, () =>
  spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }),
);
const stopBusy = () => {
  for (const b of busy) b.kill("SIGKILL");
};
process.once("exit", stopBusy);

const dataDir = mkdtempSync(join(tmpdir(), "hsb-out-"));
const s = await startServe({ dataDir, warm: {}, capacity: SANDBOXES + 10 });
const { key } = await s.keys.create("bench", "k", { maxSandboxes: 1000, maxCpus: 1000, maxMemoryMB: 1e7 });
const opts = { apiKey: key, apiUrl: s.apiUrl, sandboxUrl: s.sandboxUrl };

// Creates are not what is measured: a few at a time, so a loaded machine does not time them out.
async function createAll(n) {
  const boxes = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < n) {
        next++;
        boxes.push(await Sandbox.create(TEMPLATE, { ...opts, timeoutMs: 600_000 }));
      }
    }),
  );
  return boxes;
}

const counts = { ok: 0, empty: 0, wrong: 0, errors: 0 };
const samples = [];
const errorKinds = new Map();
let ran = 0;
let round = 0;
let runMs = 0;
const t0 = performance.now();
try {
  while (ran < COMMANDS) {
    round++;
    const n = Math.min(SANDBOXES, Math.ceil((COMMANDS - ran) / PER_SANDBOX));
    const boxes = await createAll(n);
    const tr = performance.now();
    await Promise.all(
      boxes.map(async (sb, i) => {
        for (let j = 0; j < PER_SANDBOX && ran < COMMANDS; j++) {
          ran++;
          const want = `${round}.${i}-${j}`;
          try {
            const r = await sb.commands.run(`echo ${want}`, { timeoutMs: 120_000 });
            if (r.exitCode === 0 && r.stdout === `${want}\n` && r.stderr === "") counts.ok++;
            else {
              if (r.stdout === "") counts.empty++;
              else counts.wrong++;
              if (samples.length < 10)
                samples.push({ want, exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr });
            }
          } catch (e) {
            counts.errors++;
            const k = String(e?.message).slice(0, 100);
            errorKinds.set(k, (errorKinds.get(k) ?? 0) + 1);
          }
        }
      }),
    );
    runMs += performance.now() - tr;
    await Promise.all(boxes.map((b) => b.kill().catch(() => {})));
    if (!JSON_OUT)
      process.stdout.write(
        `round ${round}: ${ran}/${COMMANDS} commands, lost so far ${counts.empty + counts.wrong}, errors ${counts.errors}\n`,
      );
  }
} finally {
  await s.close();
  rmSync(dataDir, { recursive: true, force: true });
  stopBusy();
}
const lost = counts.empty + counts.wrong;
const result = {
  commands: ran,
  sandboxesAtOnce: SANDBOXES,
  perSandbox: PER_SANDBOX,
  busyLoops: BUSY,
  template: TEMPLATE,
  ...counts,
  lost,
  commandsPerSecond: Math.round((ran / runMs) * 1000),
  wallSeconds: Math.round((performance.now() - t0) / 1000),
  errorKinds: Object.fromEntries(errorKinds),
  samples,
};
if (JSON_OUT) console.log(JSON.stringify(result, null, 2));
else {
  console.log(
    `${ran} commands (${SANDBOXES} sandboxes at once × ${PER_SANDBOX}, ${BUSY} busy loops, ${TEMPLATE}): ` +
      `${counts.ok} whole, ${counts.empty} empty stdout, ${counts.wrong} wrong stdout, ${counts.errors} errors; ` +
      `${result.commandsPerSecond} commands/s while running, ${result.wallSeconds} s in all`,
  );
  if (samples.length) console.log("lost:", samples);
  if (errorKinds.size) console.log("errors:", result.errorKinds);
}
process.exit(lost || counts.errors ? 1 : 0);
