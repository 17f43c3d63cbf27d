#!/usr/bin/env node
// The e2b sandbox backend (`hands --sandbox e2b`) against a `hands serve` (bwrap) on loopback:
// what the workspace sync and the output-capping wrapper add to each command, next to the SDK's
// own `commands.run('true')`. Figures: create (sandbox + copy of a workspace of FILES files),
// exec('true') with nothing changed, exec after the host changed one file, and a command that
// writes one file that is copied back — p50/p99 of RUNS each.
// `node bench/e2b-sandbox.mjs [-- --runs 50 --files 1000 --json]`
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Sandbox } from "e2b";
import { E2BSandbox } from "../packages/sandbox/dist/index.js";
import { startServe } from "../packages/serve/dist/index.js";

const arg = (name, d) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};
const RUNS = arg("runs", 50);
const FILES = arg("files", 1000);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const summary = (xs) => ({ p50: +pct(xs, 50).toFixed(1), p99: +pct(xs, 99).toFixed(1) });
async function timed(n, f) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await f(i);
    out.push(performance.now() - t);
  }
  return out;
}

const dataDir = mkdtempSync(join(tmpdir(), "hs-bench-"));
const ws = mkdtempSync(join(tmpdir(), "hands-e2b-bench-"));
const serve = await startServe({
  dataDir,
  apiListen: { host: "127.0.0.1", port: 0 },
  sandboxListen: { host: "127.0.0.1", port: 0 },
  warm: {},
});
try {
  const { key } = await serve.keys.create("bench");
  const conn = { apiKey: key, apiUrl: serve.apiUrl, sandboxUrl: serve.sandboxUrl };
  for (let i = 0; i < FILES; i++) {
    mkdirSync(join(ws, `d${i % 20}`), { recursive: true });
    writeFileSync(join(ws, `d${i % 20}`, `f${i}.txt`), `file ${i}\n`.repeat(20));
  }
  const raw = await Sandbox.create("base", conn);
  const sdkTrue = await timed(RUNS, () => raw.commands.run("true"));
  await raw.kill();

  let sb;
  const create = await timed(3, async () => {
    await sb?.destroy();
    sb = await E2BSandbox.create({ workspace: ws, e2b: conn });
  });
  const execTrue = await timed(RUNS, () => sb.exec("true"));
  const hostEdit = await timed(RUNS, (i) => {
    writeFileSync(join(ws, "d0", "f0.txt"), `edit ${i}\n`);
    return sb.exec("true");
  });
  const remoteWrite = await timed(RUNS, (i) => sb.exec(`echo ${i} > out.txt`));
  await sb.destroy();
  const result = {
    files: FILES,
    runs: RUNS,
    "SDK commands.run('true')": summary(sdkTrue),
    [`create + copy of ${FILES} files`]: summary(create),
    "exec('true'), nothing changed": summary(execTrue),
    "exec('true') after a host edit": summary(hostEdit),
    "exec writing a file copied back": summary(remoteWrite),
  };
  if (process.argv.includes("--json")) console.log(JSON.stringify(result));
  else for (const [k, v] of Object.entries(result)) console.log(`${k}: ${JSON.stringify(v)}`);
} finally {
  await serve.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(ws, { recursive: true, force: true });
}
