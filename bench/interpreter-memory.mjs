#!/usr/bin/env node
// What one code context costs in memory, per language, and whether a sandbox holds as many as
// the service allows (issue 29: Deno at ~200 MB per context against a bound of one per 128 MB).
// A real `hands serve` (bwrap) and the official @e2b/code-interpreter SDK: in a 2 GB sandbox one
// context per language is created and runs a cell; after each, the sandbox's memory cgroup
// charge (what its OOM killer judges) and the resident size of the context's new processes are
// read. Then, in a sandbox of --memory MB (512), as many contexts of one language as the bound
// lets in, each running a cell: did every cell answer, and what did the cgroup peak at?
//   node bench/interpreter-memory.mjs [--memory 512] [--languages python,js,r,bash] [--json]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const argv = process.argv.slice(2);
const flag = (n, d) => (argv.includes(`--${n}`) ? argv[argv.indexOf(`--${n}`) + 1] : d);
const MEMORY = Number(flag("memory", "512"));
const LANGS = flag("languages", "python,js,ts,r,bash").split(",");
const CELL = { python: "1+1", js: "1+1", ts: "1+1", r: "1+1", bash: "echo 2" };

const { startServe } = await import("../packages/serve/dist/index.js");
const { Sandbox } = await import("@e2b/code-interpreter");

const dataDir = mkdtempSync(join(tmpdir(), "hs-ci-mem-"));
const serve = await startServe({
  dataDir,
  warm: {},
  templates: {
    big: { backend: "bwrap", cpus: 1, memoryMB: 2048 },
    small: { backend: "bwrap", cpus: 1, memoryMB: MEMORY },
  },
});
const { key } = await serve.keys.create("bench", "k", { maxSandboxes: 10, maxCpus: 10, maxMemoryMB: 1e6 });
const opts = { apiKey: key, apiUrl: serve.apiUrl, sandboxUrl: serve.sandboxUrl };

/** The sandbox's memory cgroup, read on the host (v1 or v2). */
function cgroupFiles(sb) {
  const name = serve.service.runtime(sb.sandboxId)?.sandbox.cgroupName;
  if (!name) throw new Error("no cgroup for the sandbox");
  const v1 = `/sys/fs/cgroup/memory/hands/${name}`;
  try {
    readFileSync(`${v1}/memory.usage_in_bytes`);
    return {
      usage: `${v1}/memory.usage_in_bytes`,
      peak: `${v1}/memory.max_usage_in_bytes`,
      events: `${v1}/memory.oom_control`,
    };
  } catch {
    const v2 = `/sys/fs/cgroup/hands/${name}`;
    return { usage: `${v2}/memory.current`, peak: `${v2}/memory.peak`, events: `${v2}/memory.events` };
  }
}
const mb = (b) => Math.round((b / 1048576) * 10) / 10;
const readBytes = (f) => Number(readFileSync(f, "utf8").trim());
const oomKills = (f) => Number(/oom_kill (\d+)/.exec(readFileSync(f, "utf8"))?.[1] ?? 0);

async function processes(sb) {
  const r = await sb.commands.run("ps -eo pid=,rss=,args=");
  const out = new Map();
  for (const line of r.stdout.trim().split("\n")) {
    const m = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    if (m) out.set(Number(m[1]), { rss: Number(m[2]) * 1024, args: m[3] });
  }
  return out;
}

const result = { memoryMB: MEMORY, perLanguage: [], fill: [] };
try {
  // 1. One context per language, in a sandbox big enough for all of them.
  const sb = await Sandbox.create("big", { ...opts, timeoutMs: 600_000 });
  const cg = cgroupFiles(sb);
  let before = await processes(sb);
  let charged = readBytes(cg.usage);
  result.baseMB = mb(charged);
  for (const lang of LANGS) {
    const t0 = performance.now();
    const ctx = await sb.createCodeContext({ language: lang });
    const ex = await sb.runCode(CELL[lang], { context: ctx, timeoutMs: 120_000 });
    const seconds = (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 500));
    const now = await processes(sb);
    const fresh = [...now].filter(([pid]) => !before.has(pid) && !now.get(pid).args.startsWith("ps "));
    const rss = fresh.reduce((a, [, p]) => a + p.rss, 0);
    const usage = readBytes(cg.usage);
    result.perLanguage.push({
      language: lang,
      answered: ex.error ? `error ${ex.error.name}` : (ex.text ?? ex.logs.stdout.join("")).trim(),
      startAndCellSeconds: Math.round(seconds * 10) / 10,
      cgroupDeltaMB: mb(usage - charged),
      rssMB: mb(rss),
      processes: fresh.map(([, p]) => `${mb(p.rss)} MB ${p.args.slice(0, 60)}`),
    });
    before = now;
    charged = usage;
  }
  await sb.kill();

  // 2. Fill a --memory sandbox with contexts of one language, up to the bound.
  for (const lang of LANGS) {
    const small = await Sandbox.create("small", { ...opts, timeoutMs: 600_000 });
    const f = cgroupFiles(small);
    const row = { language: lang, created: 0, answered: 0, refused: 0, errors: [], peakMB: 0, oomKills: 0 };
    const oom0 = oomKills(f.events);
    for (let i = 0; i < 20; i++) {
      let ctx;
      try {
        ctx = await small.createCodeContext({ language: lang });
      } catch (e) {
        if (/429|most its memory allows/.test(String(e))) row.refused++;
        else row.errors.push(String(e).slice(0, 120));
        break;
      }
      row.created++;
      try {
        const ex = await small.runCode(CELL[lang], { context: ctx, timeoutMs: 120_000 });
        if (ex.error) row.errors.push(`${ex.error.name}: ${ex.error.value}`.slice(0, 120));
        else row.answered++;
      } catch (e) {
        row.errors.push(String(e).slice(0, 120));
      }
    }
    // The cells of the earlier contexts must still answer (a later start may have killed one).
    const contexts = await small.listCodeContexts();
    row.listed = contexts.length;
    let alive = 0;
    for (const c of contexts)
      if (c.language === (lang === "js" ? "javascript" : lang === "ts" ? "typescript" : lang)) {
        const ex = await small
          .runCode(CELL[lang], { context: c, timeoutMs: 120_000 })
          .catch((e) => ({ error: e }));
        if (!ex.error) alive++;
      }
    row.stillAnswering = alive;
    row.peakMB = mb(readBytes(f.peak));
    row.oomKills = oomKills(f.events) - oom0;
    result.fill.push(row);
    await small.kill();
  }
} finally {
  await serve.close();
  rmSync(dataDir, { recursive: true, force: true });
}
if (argv.includes("--json")) console.log(JSON.stringify(result, null, 2));
else {
  console.log(`base sandbox (agent only): ${result.baseMB} MB charged`);
  for (const r of result.perLanguage)
    console.log(
      `${r.language.padEnd(7)} +${r.cgroupDeltaMB} MB cgroup, ${r.rssMB} MB RSS, ${r.startAndCellSeconds} s to answer (${r.answered})\n    ${r.processes.join("\n    ")}`,
    );
  for (const r of result.fill)
    console.log(
      `${MEMORY} MB sandbox, ${r.language}: ${r.created} created, ${r.answered} answered, ${r.refused} refused (bound), ${r.stillAnswering}/${r.listed} listed still answer, peak ${r.peakMB} MB, OOM kills ${r.oomKills}${r.errors.length ? `, errors: ${r.errors.join(" | ")}` : ""}`,
    );
}
