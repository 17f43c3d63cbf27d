#!/usr/bin/env node
// `npm run bench:dashboard`: how fast the dashboard opens what large runs leave behind, in
// headless Chromium (Debian's, driven by playwright-core).
//  1. A 2,000-step trace made by a real `hands` run against the scripted model server: time
//     from navigation to the run page showing its header, chart and first timeline rows
//     (median of 5 fresh loads), then frame times while the timeline scrolls top to bottom.
//  2. A memory file of 100,000 chunks written through the memory package's own store: time
//     to the memory map's grid, and the map API on its own.
// Options: --steps N (2000), --chunks N (100000), --loads N (5). The machine's load average is
// printed with the figures: on a shared machine they move with it.
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { steps: { type: "string" }, chunks: { type: "string" }, loads: { type: "string" } },
});
const STEPS = Number(values.steps ?? 2000);
const CHUNKS = Number(values.chunks ?? 100_000);
const LOADS = Number(values.loads ?? 5);

const dist = (p) => new URL(`../packages/${p}`, import.meta.url).href;
const { startScriptedServer } = await import(dist("llm/dist/index.js"));
const { SqliteStore } = await import(dist("memory/dist/index.js"));
const { startDashboard } = await import(dist("dashboard/dist/index.js"));
const { launchBrowser } = await import(dist("dashboard/dist/testing/browser.js"));
const { runHands } = await import(dist("dashboard/dist/testing/hands-cli.js"));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))];
};

const scratch = mkdtempSync(join(tmpdir(), "hands-bench-dashboard-"));
chmodSync(scratch, 0o711);
const dataDir = join(scratch, "data");
try {
  // --- 1. the trace of a long run ---------------------------------------------------------
  let t = Date.now();
  const server = await startScriptedServer((_req, i) =>
    i < STEPS - 1
      ? { content: `step ${i + 1}: looking again`, toolCalls: [{ name: "list_dir", arguments: {} }] }
      : { content: `Done after ${STEPS} steps.` },
  );
  await runHands(["--max-steps", String(STEPS + 1), "list the folder until told to stop"], {
    scratch,
    modelUrl: server.url,
    workspace: join(scratch, "ws"),
  });
  await server.close();
  const [traceName] = readdirSync(join(dataDir, "traces"));
  const id = traceName.replace(/\.jsonl$/, "");
  const traceBytes = statSync(join(dataDir, "traces", traceName)).size;
  console.log(
    `trace: ${STEPS} steps by a real hands run in ${((Date.now() - t) / 1000).toFixed(1)} s, ${(traceBytes / 1e6).toFixed(1)} MB`,
  );

  // --- 2. a memory file of CHUNKS chunks ---------------------------------------------------
  t = Date.now();
  const memPath = join(dataDir, "memory.db");
  const store = new SqliteStore({ path: memPath, dimensions: 256 });
  const layers = ["working", "short_term", "long_term", "archived"];
  const now = Date.now();
  for (let start = 0; start < CHUNKS; start += 5000) {
    const batch = [];
    for (let i = start; i < Math.min(CHUNKS, start + 5000); i++)
      batch.push({
        kind: "created",
        time: now + i,
        reason: "bench",
        chunk: {
          id: `b${i.toString(36).padStart(10, "0")}`,
          scope: `bench-${i % 7}`,
          type: i % 3 ? "tool_result" : "agent_response",
          content: `chunk ${i}: output line ${i % 97} of a long build log`,
          createdAt: now + i,
          updatedAt: now + i,
          importance: ((i * 7919) % 1000) / 1000,
          accessCount: i % 5,
          goals: [],
          confidence: 0.6,
          verification: "unverified",
          tokens: 8 + (i % 40),
          layer: layers[(i * 31) % 4],
          sources: [],
          meta: {},
        },
      });
    store.append(batch);
  }
  store.close();
  console.log(
    `memory: ${CHUNKS} chunks written through SqliteStore in ${((Date.now() - t) / 1000).toFixed(1)} s`,
  );

  // --- measure in Chromium ---------------------------------------------------------------
  const dash = await startDashboard({ dataDir });
  const browser = await launchBrowser({ width: 1400, height: 900 });
  const { page } = browser;
  await page.goto(dash.openUrl);
  await page.waitForSelector("[data-testid=run-row]");

  const loads = [];
  for (let i = 0; i < LOADS + 1; i++) {
    await page.goto("about:blank");
    const start = Date.now();
    await page.goto(`${dash.url}#/run/${id}`);
    await page.waitForSelector("[data-testid=step-row]");
    await page.waitForSelector(".chart canvas");
    await page.waitForSelector("[data-testid=run-result]", { state: "attached", timeout: 1 }).catch(() => {});
    const ms = Date.now() - start;
    if (i > 0) loads.push(ms); // the first load warms the server's and the browser's caches
  }
  const cookie = (await browser.context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
  const traceApi = [];
  for (let i = 0; i < LOADS; i++) {
    const s = performance.now();
    await (await fetch(`${dash.url}api/runs/${id}`, { headers: { cookie } })).json();
    traceApi.push(performance.now() - s);
  }
  const rendered = await page.locator("[data-testid=step-row]").count();
  const headSteps = await page.textContent("[data-testid=run-head]");
  console.log(
    `run page, ${STEPS} steps: open ${median(loads)} ms median of ${LOADS} (${loads.join(", ")} ms), of which the trace API ${median(traceApi).toFixed(0)} ms; rows in the DOM: ${rendered}; header: ${/(\d+) steps/.exec(headSteps ?? "")?.[1]} steps`,
  );

  // Scroll the timeline top to bottom in 120 animation frames and record each frame's time.
  const frames = await page.evaluate(async () => {
    const el = document.querySelector("[data-testid=timeline]");
    const deltas = [];
    const total = el.scrollHeight - el.clientHeight;
    let last = performance.now();
    for (let i = 1; i <= 120; i++) {
      el.scrollTop = (total * i) / 120;
      await new Promise((r) => requestAnimationFrame(r));
      const t2 = performance.now();
      deltas.push(t2 - last);
      last = t2;
    }
    return { deltas, rows: document.querySelectorAll("[data-testid=step-row]").length, atEnd: el.scrollTop };
  });
  const long = frames.deltas.filter((d) => d > 50).length;
  console.log(
    `scroll: 120 frames top to bottom: frame p50 ${pct(frames.deltas, 50).toFixed(1)} ms, p95 ${pct(frames.deltas, 95).toFixed(1)} ms, max ${Math.max(...frames.deltas).toFixed(1)} ms, ${long} frames over 50 ms; rows in the DOM at the end: ${frames.rows}`,
  );

  const mapLoads = [];
  for (let i = 0; i < LOADS + 1; i++) {
    await page.goto("about:blank");
    const start = Date.now();
    await page.goto(`${dash.url}#/memory`);
    await page.waitForSelector("[data-testid=memory-cell]");
    if (i > 0) mapLoads.push(Date.now() - start);
  }
  const cells = await page.locator("[data-testid=memory-grid] [data-testid=memory-cell]").count();
  const totals = await page.textContent("[data-testid=memory-totals]");
  const api = [];
  for (let i = 0; i < LOADS; i++) {
    const s = performance.now();
    const r = await fetch(`${dash.url}api/memory/map`, { headers: { cookie } });
    await r.json();
    api.push(performance.now() - s);
  }
  console.log(
    `memory map, ${CHUNKS} chunks: page ${median(mapLoads)} ms median (${mapLoads.join(", ")} ms), API ${median(api).toFixed(0)} ms; ${cells} cells drawn; "${totals}"`,
  );
  console.log(
    `load average at the end: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  if (browser.errors.length) console.log(`page errors: ${browser.errors.join("\n")}`);
  await browser.close();
  await dash.close();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
