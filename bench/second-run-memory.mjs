#!/usr/bin/env node
// A second run's memory path before its first request, phase by phase, in process (CPU ms,
// median of --runs children): a first `hands` run makes the memory file (and what that task
// taught the workspace), then each child opens it as the second run does (`new Memory`),
// recalls what earlier tasks taught (`recallWorkspace`) and assembles step 1 (what the request
// waits for), then waits for what step 1 stores after its request has gone. `--tree DIR` runs
// another checkout's build (its bin and packages/memory/dist) for an A/B.
// Usage: node bench/second-run-memory.mjs [--runs 9] [--tree /work/main]
import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startFakeModel } from "./fake-model-server.mjs";
import { handsFlags, median } from "./harness-run.mjs";

const argv = process.argv.slice(2);
const opt = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const tree = resolve(opt("--tree") ?? join(fileURLToPath(import.meta.url), "..", ".."));

if (argv[0] === "child") {
  const ws = argv[1];
  const m = await import(pathToFileURL(join(tree, "packages", "memory", "dist", "index.js")).href);
  const scope = `second-run-${process.pid}`;
  const out = {};
  let c = process.cpuUsage();
  const mark = (k) => {
    const d = process.cpuUsage(c);
    out[k] = (d.user + d.system) / 1000;
    c = process.cpuUsage();
  };
  const memory = new m.Memory({
    path: join(ws, ".data", "memory.db"),
    scope,
    policy: { workingBudget: 20_000 },
  });
  mark("open the store (new Memory)");
  const learned = await memory.recallWorkspace(realpathSync(ws), "say done", 800);
  mark("recallWorkspace");
  const preamble = learned.items.map((i) => `- ${i.text}`).join("\n");
  const asm = new m.ContextAssembler(memory, {
    budget: 20_000,
    feedback: new m.FeedbackTracker(memory),
    ...(preamble ? { preamble } : {}),
  });
  c = process.cpuUsage();
  await asm.assemble(
    [
      { role: "system", content: "You are a coding agent. ".repeat(60) },
      { role: "user", content: "say done" },
    ],
    1,
    1,
  );
  mark("assemble step 1 (before the request)");
  out["chunks stored before the request"] = memory.store.count({ scope });
  c = process.cpuUsage();
  await (asm.written?.() ?? asm.flush());
  mark("step 1 stored (after the request)");
  out["lessons recalled"] = learned.items.length;
  console.log(JSON.stringify(out));
} else {
  const runs = Number(opt("--runs") ?? 9) || 9;
  const ws = mkdtempSync(join(tmpdir(), "second-run-memory-"));
  try {
    const model = await startFakeModel({ steps: 1, file: "unused" });
    const bin = join(tree, "packages", "cli", "bin", "hands.js");
    const code = await new Promise((r) =>
      spawn(bin, [...handsFlags(model.url, ws), "say done"], {
        cwd: ws,
        env: { ...process.env, HANDS_DATA_DIR: join(ws, ".data") },
        stdio: "ignore",
      }).on("close", r),
    );
    await model.close();
    if (code !== 0) throw new Error(`the first run failed (exit ${code})`);
    const rows = [];
    for (let i = 0; i < runs; i++)
      rows.push(
        await new Promise((r, reject) => {
          let o = "";
          const child = spawn(
            process.execPath,
            [fileURLToPath(import.meta.url), "child", ws, "--tree", tree],
            {
              stdio: ["ignore", "pipe", "inherit"],
            },
          );
          child.stdout.on("data", (d) => (o += d));
          child.on("close", (exit) =>
            exit === 0 ? r(JSON.parse(o)) : reject(new Error(`child exit ${exit}`)),
          );
        }),
      );
    console.log(`${tree}: median of ${runs} (CPU ms; counts as they are)`);
    for (const k of Object.keys(rows[0]))
      console.log(
        `  ${k.padEnd(40)}${median(rows.map((r) => r[k]))
          .toFixed(2)
          .padStart(8)}`,
      );
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}
