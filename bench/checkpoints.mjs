#!/usr/bin/env node
// Checkpoint cost per turn (the shadow-git snapshots behind /undo), on two trees: a copy of this
// repository's packages/ without node_modules, and a generated tree of 5,000 source files.
//   npm run build && npm run bench:checkpoints -- [--runs 9] [--json]
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { openCheckpoints } from "@hands/agent";

const argv = process.argv.slice(2);
const RUNS = Number(argv[argv.indexOf("--runs") + 1]) || 9;
const asJson = argv.includes("--json");
const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const scratch = mkdtempSync(join(tmpdir(), "hands-bench-cp-"));

function packagesCopy() {
  const dest = join(scratch, "packages");
  cpSync(join(repo, "packages"), dest, {
    recursive: true,
    filter: (src) => !src.split("/").includes("node_modules"),
  });
  return dest;
}

/** 100 folders of 50 TypeScript-like files, 1–10 KB each (about 28 MB). */
function generated() {
  const dest = join(scratch, "gen5k");
  for (let d = 0; d < 100; d++) {
    mkdirSync(join(dest, `mod${d}`), { recursive: true });
    for (let f = 0; f < 50; f++)
      writeFileSync(
        join(dest, `mod${d}`, `file${f}.ts`),
        `export const value${f} = ${d};\n`.repeat(40 + ((d * 50 + f) % 300)),
      );
  }
  return dest;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = async (fn) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

/** A turn's start until a tool may change files. */
const turnStart = (cps) => {
  cps.begin("t");
  return cps.beforeChange();
};

/** Touches `k` files the way a command would (new content, new mtime). */
function change(ws, files, k, round) {
  for (let i = 0; i < k; i++)
    writeFileSync(join(ws, files[(round * k + i) % files.length]), `// round ${round}\n`);
}

async function measure(name, ws) {
  const all = readdirSync(ws, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  const files = all
    .filter((e) => e.name.endsWith(".ts"))
    .map((e) => relative(ws, join(e.parentPath, e.name)));
  const r = {
    tree: name,
    files: all.length,
    cold: [],
    seeded: [],
    unchanged: [],
    changed10: [],
    end10: [],
    undo10: [],
  };
  for (let run = 0; run < RUNS; run++) {
    const dir = join(scratch, `data-${name}-${run}`, "checkpoints");
    const a = await openCheckpoints({ workspace: ws, dir, sessionId: "a" });
    // First turn of the first session in this workspace: every file is hashed.
    r.cold.push(await ms(() => turnStart(a)));
    await a.end();
    // A later session in the same workspace starts from the newest index.
    const b = await openCheckpoints({ workspace: ws, dir, sessionId: "b" });
    r.seeded.push(await ms(() => turnStart(b)));
    await b.end();
    r.unchanged.push(await ms(() => turnStart(b)));
    await b.end();
    change(ws, files, 10, run);
    r.changed10.push(await ms(() => turnStart(b)));
    change(ws, files, 10, run + 1000);
    r.end10.push(await ms(() => b.end()));
    r.undo10.push(await ms(() => b.undo()));
    await b.close();
    rmSync(dirname(dir), { recursive: true, force: true });
  }
  for (const k of ["cold", "seeded", "unchanged", "changed10", "end10", "undo10"])
    r[k] = Math.round(median(r[k]) * 10) / 10;
  return r;
}

try {
  const results = [await measure("packages/", packagesCopy()), await measure("generated 5k", generated())];
  if (asJson) console.log(JSON.stringify({ runs: RUNS, results }, null, 2));
  else {
    console.log(`checkpoint cost, median of ${RUNS} (ms)`);
    console.log("tree           files  cold  new-session  unchanged  10-changed  end(10)  undo(10)");
    for (const r of results)
      console.log(
        `${r.tree.padEnd(13)} ${String(r.files).padStart(6)} ${String(r.cold).padStart(5)} ${String(r.seeded).padStart(12)} ${String(r.unchanged).padStart(10)} ${String(r.changed10).padStart(11)} ${String(r.end10).padStart(8)} ${String(r.undo10).padStart(9)}`,
      );
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
