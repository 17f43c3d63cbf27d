// The dashboard end to end: data made by real `hands` runs against the scripted model server,
// the real server, Debian's Chromium driven by playwright-core. Each page is opened and used as
// a person would: the list filtered, a run's timeline clicked through, a live run watched as it
// writes, the memory map drilled into, a sandbox of a real `hands serve` (bwrap) killed.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type ServerTurn, startScriptedServer } from "@hands/llm";
import { SqliteStore, snapshotMarks, storedDimensions } from "@hands/memory";
import { Sandbox } from "e2b";
import type { RunSummary } from "./api-types.js";
import { cookieName } from "./auth.js";
import { type RunningDashboard, startDashboard } from "./server.js";
import { launchBrowser, type TestBrowser } from "./testing/browser.js";
import { FIB_TASK, type Fixtures, makeFixtures } from "./testing/fixtures.js";
import { startHands } from "./testing/hands-cli.js";
import { startRealServe, type TestServe } from "./testing/serve.js";

const scratch = mkdtempSync(join(tmpdir(), "hands-dash-e2e-"));
// hands serve's sandboxes run as another user, who must be able to pass through to its data folder.
chmodSync(scratch, 0o711);
let fx: Fixtures;
let dash: RunningDashboard;
let browser: TestBrowser;
let serve: TestServe;

const until = async (what: string, check: () => boolean | Promise<boolean>, ms = 15_000) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
};

/** A model that calls list_dir, then "thinks" about its second answer until the test releases it. */
async function heldModel(answer: string) {
  let release: () => void = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  const server = await startScriptedServer(async (_req, i): Promise<ServerTurn> => {
    if (i === 0) return { content: "", toolCalls: [{ name: "list_dir", arguments: {} }] };
    await held;
    return { content: answer };
  });
  return { server, release };
}

/** The runs list as the API gives it. */
async function apiRuns(): Promise<RunSummary[]> {
  const r = await fetch(`${dash.url}api/runs`, {
    headers: { cookie: `${cookieName(dash.port)}=${dash.session}` },
  });
  return (await r.json()) as RunSummary[];
}

/** fetch() will not send another Host header; node:http will. */
function statusWithHost(url: string, host: string, cookie: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host, cookie } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("hands dashboard in Chromium", { timeout: 120_000 }, () => {
  before(async () => {
    [fx, serve] = await Promise.all([makeFixtures(scratch), startRealServe(join(scratch, "serve"))]);
    dash = await startDashboard({
      dataDir: fx.dataDir,
      serve: { url: serve.apiUrl, apiKey: serve.key },
      pollMs: 100,
    });
    browser = await launchBrowser();
    // The URL with the token, once: the cookie carries it from then on.
    await browser.page.goto(dash.openUrl);
  });
  after(async () => {
    await browser?.close();
    await dash?.close();
    await serve?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  test("the token: none is refused 401, a wrong one 403, the right one becomes a cookie and leaves the URL", async () => {
    const api = `${dash.url}api/runs`;
    const cookie = cookieName(dash.port);
    assert.equal((await fetch(api)).status, 401);
    assert.equal((await fetch(dash.url)).status, 401);
    assert.equal((await fetch(`${dash.url}assets/x.js`)).status, 401);
    assert.equal((await fetch(api, { headers: { cookie: `${cookie}=guess` } })).status, 403);
    assert.equal((await fetch(`${dash.url}?token=guess`, { redirect: "manual" })).status, 403);
    // Another host name (a DNS-rebinding page) is refused even with the token.
    assert.equal(await statusWithHost(api, "evil.example", `${cookie}=${dash.session}`), 403);
    assert.equal(await statusWithHost(api, `localhost:${dash.port}`, `${cookie}=${dash.session}`), 200);
    // The browser used the one-time link (before): a second use gets nothing.
    const again = await fetch(dash.openUrl, { redirect: "manual" });
    assert.equal(again.status, 403);
    assert.equal(again.headers.get("set-cookie"), null);
    const [given] = (await browser.context.cookies(dash.url)).filter((c) => c.name === cookie);
    assert.ok(given, "the browser holds the session cookie");
    assert.deepEqual(
      [given.value, given.httpOnly, given.sameSite, given.path],
      [dash.session, true, "Strict", "/"],
    );
    assert.notEqual(given.value, dash.token, "the cookie is not the link's token");
    const ok = await fetch(api, { headers: { cookie: `${cookie}=${dash.session}` } });
    assert.equal(ok.status, 200);
    // A change needs the dashboard's own origin as well as the cookie.
    const kill = await fetch(`${dash.url}api/sandboxes/abc/kill`, {
      method: "POST",
      headers: { cookie: `${cookie}=${dash.session}`, origin: "http://evil.example" },
    });
    assert.equal(kill.status, 403);
    // In the browser the address bar no longer shows the token.
    await until("the page to move on", () => new URL(browser.page.url()).search === "");
  });

  test("runs list: every run with its status, filtered by text and status", async () => {
    const { page } = browser;
    await page.goto(`${dash.url}#/`);
    await page.waitForSelector("[data-testid=run-row]");
    const status = async (id: string) => page.getAttribute(`[data-run="${id}"]`, "data-status");
    assert.equal(await status(fx.fib), "done");
    assert.equal(await status(fx.failing), "error");
    assert.equal(await status(fx.bigOutput), "done");
    assert.equal(await status(fx.damaged), "unfinished");
    assert.match((await page.textContent(`[data-run="${fx.damaged}"]`)) ?? "", /3 unreadable/);
    await page.fill("input[type=search]", "60000");
    await until("the filter", async () => (await page.locator("[data-testid=run-row]").count()) === 1);
    assert.equal(await page.getAttribute("[data-testid=run-row]", "data-run"), fx.bigOutput);
    await page.fill("input[type=search]", "");
    await page.selectOption("select[aria-label=Status]", "error");
    await until("the status filter", async () => (await page.locator("[data-testid=run-row]").count()) === 1);
    assert.equal(await page.getAttribute("[data-testid=run-row]", "data-run"), fx.failing);
    await page.selectOption("select[aria-label=Status]", "");
  });

  test("one run: the timeline clicked through, each step's call, result, error and the chart", async () => {
    const { page } = browser;
    await page.goto(`${dash.url}#/run/${fx.fib}`);
    await page.waitForSelector("[data-testid=step-row]");
    assert.equal(await page.locator("[data-testid=step-row]").count(), 4);
    assert.ok(((await page.textContent("[data-testid=run-head]")) ?? "").includes(FIB_TASK));
    assert.equal(await page.textContent("[data-testid=run-status]"), "done");
    const step = (n: number) => page.locator(`[data-testid=step-row][data-step="${n}"]`);
    await step(1).locator("button.step-line").click();
    const one = await step(1).locator("[data-testid=step-detail]").textContent();
    assert.match(one ?? "", /write_file/);
    assert.match(one ?? "", /"path": "fib.py"/);
    assert.match(one ?? "", /allowed by mode/);
    assert.match(one ?? "", /2 messages/);
    await step(2).locator("button.step-line").click();
    assert.match(
      (await step(2).locator("[data-testid=tool-call]").textContent()) ?? "",
      /python3 fib\.py[\s\S]*55/,
    );
    // The unknown tool's error is marked on its row and shown in full.
    assert.match((await step(3).textContent()) ?? "", /tool error/);
    await step(3).locator("button.step-line").click();
    assert.match(
      (await step(3).locator("[data-testid=tool-call]").textContent()) ?? "",
      /ERROR: unknown tool "no_such_tool"/,
    );
    assert.match((await page.textContent("[data-testid=run-result]")) ?? "", /done[\s\S]*fib\(10\) is 55/);
    // The chart drew one point per step.
    assert.equal(await page.locator(".chart canvas").count(), 1);
    // Collapsing a step hides its detail again.
    await step(1).locator("button.step-line").click();
    assert.equal(await step(1).locator("[data-testid=step-detail]").count(), 0);
  });

  test("routing and sub-agents: the child's run is listed under its parent, the run shows its cost per model", async () => {
    const { page } = browser;
    await page.goto(`${dash.url}#/`);
    await page.waitForSelector(`[data-run="${fx.routed}"]`);
    const ids = await page
      .locator("[data-testid=run-row]")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-run")));
    const at = ids.indexOf(fx.routed);
    assert.equal(ids[at + 1], fx.routedChild, `the child is not right under its parent: ${ids.join(", ")}`);
    assert.equal(ids.filter((i) => i === fx.routedChild).length, 1);
    assert.equal(await page.getAttribute(`[data-run="${fx.routedChild}"]`, "data-parent"), fx.routed);
    assert.match((await page.textContent(`[data-run="${fx.routedChild}"]`)) ?? "", /sub-agent/);
    await page.selectOption("select[aria-label=Kind]", "subagent");
    await until("the kind filter", async () => (await page.locator("[data-testid=run-row]").count()) === 1);
    assert.equal(await page.getAttribute("[data-testid=run-row]", "data-run"), fx.routedChild);
    await page.selectOption("select[aria-label=Kind]", "");
    const api = (await apiRuns()).find((r) => r.id === fx.routedChild)!;
    assert.deepEqual([api.kind, api.parent], ["subagent", fx.routed]);

    await page.goto(`${dash.url}#/run/${fx.routed}`);
    await page.waitForSelector("[data-testid=cost-split]");
    const rows = await page
      .locator("[data-testid=cost-split] tbody tr")
      .evaluateAll((els) => els.map((e) => [...e.querySelectorAll("td")].map((td) => td.textContent)));
    // gpt-4.1-mini $0.40/$1.60 per M tokens: 4000 in, 80 out; gpt-4.1-nano $0.10/$0.40: 2000 in, 100 out.
    assert.deepEqual(rows, [
      ["gpt-4.1-mini", "executor", "2", "4.0k / 80", "$0.0017"],
      ["gpt-4.1-nano", "subagent", "1", "2.0k / 100", "$0.0002"],
    ]);
  });

  test("a request's messages: as the model server got them, roles, tool calls, the full text a click away", async () => {
    const { page } = browser;
    await page.goto(`${dash.url}#/run/${fx.fib}`);
    const shownAt = async (n: number) => {
      const row = page.locator(`[data-testid=step-row][data-step="${n}"]`);
      // The page may keep a step open from before (the same run, opened by an earlier test).
      if ((await row.locator("button.step-line").getAttribute("aria-expanded")) !== "true")
        await row.locator("button.step-line").click();
      await row.locator("[data-testid=show-sent]").click();
      await row.locator("[data-testid=sent-messages]").waitFor();
      return row.locator("[data-testid=sent-message]");
    };
    for (const n of [1, 3]) {
      const wire = fx.fibRequests[n - 1]!;
      const shown = await shownAt(n);
      assert.equal(await shown.count(), wire.length, `request ${n}: every message the server got`);
      assert.deepEqual(
        await shown.evaluateAll((els) => els.map((e) => e.getAttribute("data-role"))),
        wire.map((m) => m.role),
      );
      const texts = await shown.allTextContents();
      for (const [i, m] of wire.entries()) {
        if (m.content) assert.ok(texts[i]!.includes(m.content.slice(0, 300)), `request ${n} message ${i}`);
        for (const c of m.tool_calls ?? []) {
          assert.ok(texts[i]!.includes(`calls ${c.function.name}`));
          assert.ok(texts[i]!.includes(c.function.arguments.slice(0, 100)));
        }
      }
    }
    // A capped command output as the model got it: its first part shown, all of it one click on.
    await page.goto(`${dash.url}#/run/${fx.bigOutput}`);
    const wire = fx.bigRequests[1]!;
    const tool = wire.findIndex((m) => m.role === "tool");
    assert.ok(wire[tool]!.content!.length > 2000, "longer than the preview");
    const message = (await shownAt(2)).nth(tool);
    assert.ok(!((await message.textContent()) ?? "").includes(wire[tool]!.content!.slice(-100)));
    await message.getByText(/show all/).click();
    assert.equal(await message.locator("[data-testid=full-message]").textContent(), wire[tool]!.content);
  });

  test("a trace from before the messages were recorded: said so, the rest shown", async () => {
    const { page } = browser;
    await page.goto(`${dash.url}#/run/${fx.old}`);
    const step1 = page.locator('[data-testid=step-row][data-step="1"]');
    await step1.locator("button.step-line").click();
    assert.match((await step1.textContent()) ?? "", /2 messages[\s\S]*not recorded/);
    assert.equal(await step1.locator("[data-testid=show-sent]").count(), 0);
    assert.equal(await page.textContent("[data-testid=run-status]"), "done");
  });

  test("a failing model: retries and the error are on the timeline", async () => {
    const { page } = browser;
    await page.goto(`${dash.url}#/run/${fx.failing}`);
    await page.waitForSelector("[data-testid=run-result]");
    assert.match((await page.textContent("[data-testid=run-result]")) ?? "", /error: .*500/);
    const step2 = page.locator('[data-testid=step-row][data-step="2"]');
    assert.match((await step2.textContent()) ?? "", /3 retries/);
    await step2.locator("button.step-line").click();
    assert.match(
      (await step2.locator("[data-testid=step-detail]").textContent()) ?? "",
      /retry 1 after[\s\S]*upstream exploded/,
    );
    assert.match((await step2.textContent()) ?? "", /no response/);
  });

  test("a capped output: the model's part inline, the full output a click away", async () => {
    const { page } = browser;
    await page.goto(`${dash.url}#/run/${fx.bigOutput}`);
    const step1 = page.locator('[data-testid=step-row][data-step="1"]');
    await step1.locator("button.step-line").click();
    assert.match((await step1.textContent()) ?? "", /capped/);
    await step1.getByText(/show the full output/).click();
    const full = (await page.textContent("[data-testid=full-output]")) ?? "";
    assert.ok(full.includes("\n59999\n60000"), "the whole output, to its last line");
  });

  test("a damaged trace: what could not be read is listed, what could is shown", async () => {
    const { page } = browser;
    await page.goto(`${dash.url}#/run/${fx.damaged}`);
    await page.waitForSelector("[data-testid=trace-problems]");
    await page.click("[data-testid=trace-problems] summary");
    const problems = (await page.textContent("[data-testid=trace-problems]")) ?? "";
    assert.match(problems, /3 lines of this trace could not be shown/);
    assert.match(problems, /not valid JSON/);
    assert.match(problems, /unknown event type "hologram"/);
    assert.match(problems, /cut off/);
    assert.ok((await page.locator("[data-testid=step-row]").count()) >= 3);
    assert.equal(await page.textContent("[data-testid=run-status]"), "unfinished");
  });

  test("a live run: it appears in the list, and its steps appear on its page as the model answers", async () => {
    const { page } = browser;
    await page.goto(`${dash.url}#/`);
    await page.waitForSelector("[data-testid=run-row]");
    const before = await page.locator("[data-testid=run-row]").count();
    const { server, release } = await heldModel("The folder is empty.");
    const run = startHands(["what is in this folder?"], {
      scratch,
      modelUrl: server.url,
      workspace: join(scratch, "ws-live"),
    });
    try {
      await until(
        "the live run in the list",
        async () => (await page.locator("[data-testid=run-row]").count()) === before + 1,
      );
      const row = page.locator('[data-testid=run-row][data-status="running"]');
      await until("it to show as running", async () => (await row.count()) === 1);
      const id = (await row.getAttribute("data-run"))!;
      await row.locator("a").click();
      await page.waitForSelector('[data-testid=step-row][data-step="1"]');
      assert.equal(await page.textContent("[data-testid=run-status]"), "running");
      await until(
        "the live stream",
        async () => (await page.textContent("[data-testid=live-indicator]")) === "following live",
      );
      await until(
        "step 2's request",
        async () => (await page.locator('[data-testid=step-row][data-step="2"]').count()) === 1,
      );
      assert.match(
        (await page.textContent('[data-testid=step-row][data-step="2"]')) ?? "",
        /waiting for the model/,
      );
      // A long silent wait for the model: the trace has not changed for an hour, yet its
      // process is alive, so it is running — by the list and by the page.
      const past = new Date(Date.now() - 3600_000);
      utimesSync(join(fx.dataDir, "traces", `${id}.jsonl`), past, past);
      assert.equal((await apiRuns()).find((r) => r.id === id)?.status, "running");
      await page.reload();
      await page.waitForSelector('[data-testid=step-row][data-step="2"]');
      assert.equal(await page.textContent("[data-testid=run-status]"), "running");
      await until(
        "the live stream again",
        async () => (await page.textContent("[data-testid=live-indicator]")) === "following live",
      );
      release();
      await page.waitForSelector("[data-testid=run-result]");
      assert.equal(await page.textContent("[data-testid=run-status]"), "done");
      assert.match(
        (await page.textContent('[data-testid=step-row][data-step="2"]')) ?? "",
        /The folder is empty/,
      );
      assert.equal(await run.done, 0, run.stderr());
      assert.ok(page.url().endsWith(`#/run/${id}`), "no reload: the page followed the trace");
    } finally {
      release();
      run.child.kill();
      await server.close();
    }
  });

  test("a killed run (SIGKILL while the model thinks): shown as interrupted, in the list and on its page", async () => {
    const { page } = browser;
    const { server, release } = await heldModel("never seen");
    const run = startHands(["list this folder, slowly"], {
      scratch,
      modelUrl: server.url,
      workspace: join(scratch, "ws-killed"),
    });
    try {
      let id = "";
      await until("the run to show as running", async () => {
        const r = (await apiRuns()).find((x) => x.firstRequest === "list this folder, slowly");
        id = r?.id ?? "";
        return r?.status === "running" && r.steps >= 2;
      });
      await page.goto(`${dash.url}#/run/${id}`);
      await page.waitForSelector('[data-testid=step-row][data-step="2"]');
      assert.equal(await page.textContent("[data-testid=run-status]"), "running");
      run.child.kill("SIGKILL");
      assert.equal(await run.done, null, "killed by the signal");
      await until(
        "the page to say interrupted",
        async () => (await page.textContent("[data-testid=run-status]")) === "interrupted",
      );
      assert.equal(await page.locator("[data-testid=run-result]").count(), 0);
      assert.equal((await apiRuns()).find((r) => r.id === id)?.status, "interrupted");
      await page.goto(`${dash.url}#/`);
      await page.waitForSelector(`[data-run="${id}"]`);
      assert.equal(await page.getAttribute(`[data-run="${id}"]`, "data-status"), "interrupted");
    } finally {
      release();
      run.child.kill();
      await server.close();
    }
  });

  test("compare: two picked runs side by side", async () => {
    const { page } = browser;
    await page.goto(`${dash.url}#/`);
    await page.check(`[data-run="${fx.fib}"] input[type=checkbox]`);
    await page.check(`[data-run="${fx.bigOutput}"] input[type=checkbox]`);
    await page.getByText("Compare the two picked").click();
    await page.waitForSelector("[data-testid=compare-table]");
    await until(
      "both runs loaded",
      async () => !((await page.textContent("[data-testid=compare-table]")) ?? "").includes("…"),
    );
    const table = (await page.textContent("[data-testid=compare-table]")) ?? "";
    assert.match(table, /write_file ×1/);
    assert.match(table, /run_command ×1/);
  });

  test("memory map: counts by layer and importance match the file, a cell drills down to a chunk and its history", async () => {
    const { page } = browser;
    const path = join(fx.dataDir, "memory.db");
    const store = new SqliteStore({ path, dimensions: storedDimensions(path) ?? 256, readonly: true });
    const total = store.count();
    const working = store.count({ layers: ["working"] });
    store.close();
    assert.ok(total > 5, "the runs stored memory");
    await page.goto(`${dash.url}#/memory`);
    await page.waitForSelector("[data-testid=memory-cell]");
    assert.match(
      (await page.textContent("[data-testid=memory-totals]")) ?? "",
      new RegExp(`^${total} chunks`),
    );
    const cells = page.locator('[data-testid=memory-cell][data-layer="working"]');
    let sum = 0;
    for (const t of await cells.allTextContents()) sum += Number(t);
    assert.equal(sum, working);
    const first = cells.first();
    const n = Number(await first.textContent());
    await first.click();
    await page.waitForSelector("[data-testid=chunk-row]");
    assert.equal(await page.locator("[data-testid=chunk-row]").count(), n);
    await page.locator("[data-testid=chunk-row]").first().click();
    await page.waitForSelector("[data-testid=chunk-panel]");
    assert.match((await page.textContent("[data-testid=chunk-panel]")) ?? "", /history[\s\S]*created/);
    assert.match((await page.textContent("[data-testid=last-context]")) ?? "", /The last context/);
    // Replaying the log to its first move shows one chunk.
    await page.locator("[data-testid=memory-replay] input[type=range]").fill("1");
    await until("the replay", async () => {
      const texts = await page
        .locator("[data-testid=memory-replay] [data-testid=memory-cell]")
        .allTextContents();
      return texts.length === 1 && texts[0] === "1";
    });
  });

  test("memory snapshots: one per run's end, replayed from the log to its counts; a scope replayed to a step", async () => {
    const { page } = browser;
    const path = join(fx.dataDir, "memory.db");
    const store = new SqliteStore({ path, dimensions: storedDimensions(path) ?? 256, readonly: true });
    const marks = snapshotMarks(store);
    store.close();
    const fibMark = marks.find((m) => m.scope === fx.fib);
    assert.ok(fibMark, "the fib run marked a snapshot when it ended");
    assert.equal(fibMark.reason, "session end");
    assert.equal(fibMark.step, 4);
    await page.goto(`${dash.url}#/memory`);
    await page.waitForSelector("[data-testid=snapshot-row]");
    assert.equal(await page.locator("[data-testid=snapshot-row]").count(), marks.length);
    // Replaying the log to a mark rebuilds the counts recorded with it, layer by layer.
    const replayedLayers = async () => {
      const out: Record<string, number> = { working: 0, short_term: 0, long_term: 0, archived: 0 };
      for (const cell of await page.locator("[data-testid=replay-result] [data-testid=memory-cell]").all())
        out[(await cell.getAttribute("data-layer"))!]! += Number(await cell.textContent());
      return out;
    };
    for (const mark of [fibMark, marks.at(-1)!]) {
      const row = page.locator(`[data-testid=snapshot-row][data-seq="${mark.seq}"]`);
      await row.getByText("replay").click();
      await until(`the replay to #${mark.seq}`, async () =>
        ((await page.textContent("[data-testid=replay-caption]")) ?? "").includes(`after move #${mark.seq},`),
      );
      assert.deepEqual(await replayedLayers(), mark.layers);
      assert.match((await row.textContent()) ?? "", new RegExp(`session end.*#${mark.seq}.*${mark.chunks}`));
    }
    // One run's scope: its steps; replayed to its last step, the map is the one its end marked.
    await page.selectOption("select[aria-label=Scope]", fx.fib);
    await page.waitForSelector("[data-testid=replay-step]");
    assert.equal(await page.locator("[data-testid=snapshot-row]").count(), 1);
    const toStep = async (n: number) => {
      await page.fill("input[aria-label='replay to step']", String(n));
      await page.click("[data-testid=replay-step] button[type=submit]");
      await until(`the replay to step ${n}`, async () =>
        ((await page.textContent("[data-testid=replay-caption]")) ?? "").includes(`stored step ${n}:`),
      );
      return replayedLayers();
    };
    assert.deepEqual(await toStep(4), fibMark.layers);
    const first = await toStep(1);
    const sum = (l: Record<string, number>) => Object.values(l).reduce((n, x) => n + x, 0);
    assert.ok(sum(first) > 0 && sum(first) < fibMark.chunks, `step 1: ${sum(first)} of ${fibMark.chunks}`);
  });

  test("a memory file that is not a database, and a data folder with no memory: said, not a blank page", async () => {
    const other = join(scratch, "bad-data");
    mkdirSync(other, { recursive: true });
    const d = await startDashboard({ dataDir: other });
    try {
      const page = await browser.context.newPage();
      await page.goto(d.openUrl);
      await page.waitForURL(d.url);
      await page.goto(`${d.url}#/memory`);
      assert.match((await (await page.waitForSelector(".error")).textContent()) ?? "", /no memory file/);
      writeFileSync(
        join(other, "memory.db"),
        "this is not a SQLite file, just text a crash left behind\n".repeat(100),
      );
      await page.reload();
      assert.match(
        (await (await page.waitForSelector(".error")).textContent()) ?? "",
        /cannot open memory\.db read-only|could not be read/,
      );
      await page.goto(`${d.url}#/`);
      await page.waitForSelector("text=No runs yet");
      await page.close();
    } finally {
      await d.close();
    }
  });

  test("sandboxes: a real hands serve's sandbox is listed and killed", async () => {
    const { page } = browser;
    const created = await fetch(`${serve.apiUrl}/sandboxes`, {
      method: "POST",
      headers: { "x-api-key": serve.key, "content-type": "application/json" },
      body: JSON.stringify({ templateID: "base", timeout: 300, metadata: { purpose: "dashboard-e2e" } }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const { sandboxID } = (await created.json()) as { sandboxID: string };
    await page.goto(`${dash.url}#/sandboxes`);
    await page.waitForSelector("[data-testid=sandboxes-table]");
    const row = page.locator(`[data-testid=sandbox-row][data-sandbox="${sandboxID}"]`);
    await row.waitFor();
    assert.match(
      (await row.textContent()) ?? "",
      /running[\s\S]*dashboard-tests[\s\S]*bwrap[\s\S]*base[\s\S]*purpose=dashboard-e2e/,
    );
    // Work in the sandbox through the official SDK: a command (for the trail), a busy loop and
    // 48 MiB held (for the figures).
    const sb = await Sandbox.connect(sandboxID, {
      apiKey: serve.key,
      apiUrl: serve.apiUrl,
      sandboxUrl: serve.sandboxUrl,
    });
    assert.equal((await sb.commands.run("echo from-the-e2e-test")).exitCode, 0);
    const pidsShown = async () =>
      Number((await row.locator("[data-testid=sandbox-pids]").textContent()) ?? "");
    // What the sandbox runs on its own (its agent, the backend's shell): the two below add to it.
    let before = await pidsShown();
    for (let i = 0; i < 20 && !(before > 0); i++) {
      await page.waitForTimeout(500);
      before = await pidsShown();
    }
    assert.ok(before > 0, `processes shown before: ${before}`);
    await sb.commands.run("python3 -c 'while True: pass'", { background: true });
    await sb.commands.run(
      `python3 -c 'import time; b = bytearray(48 << 20); b[::4096] = b"x" * len(b[::4096]); time.sleep(600)'`,
      { background: true },
    );
    // The page refreshes every 3 s: the figures follow what runs (CPU busy, memory up, 2 more processes).
    const figures = async () => ({
      cpu: Number.parseFloat((await row.locator("[data-testid=sandbox-cpu]").textContent()) ?? ""),
      memory: (await row.locator("[data-testid=sandbox-memory]").textContent()) ?? "",
      pids: await pidsShown(),
    });
    let seen = await figures();
    for (
      let i = 0;
      i < 40 &&
      !(seen.cpu > 40 && seen.pids >= before + 2 && /^[4-9]\d\.\d MiB|^\d{3}\.\d MiB/.test(seen.memory));
      i++
    ) {
      await page.waitForTimeout(500);
      seen = await figures();
    }
    assert.ok(seen.cpu > 40 && seen.cpu <= 100, `CPU shown: ${seen.cpu}%`);
    assert.match(seen.memory, /^(?:[4-9]\d|\d{3})\.\d MiB \/ 512\.0 MiB$/, `memory shown: ${seen.memory}`);
    assert.ok(seen.pids >= before + 2, `processes shown: ${seen.pids} (before the two: ${before})`);
    const ttl = (await row.locator("[data-testid=sandbox-ttl]").textContent()) ?? "";
    assert.match(ttl, /^[34] min \d+ s$/, `time left: ${ttl}`);
    // Its audit trail, from hands serve, on a click.
    await row.locator("button.link").click();
    const serveTrail = page.locator("[data-testid=serve-sandbox-trail]");
    await serveTrail.waitFor();
    // Opened before the command's audit entry may have landed: the trail refreshes too.
    await serveTrail.filter({ hasText: "from-the-e2e-test" }).waitFor({ timeout: 10_000 });
    assert.match(
      (await serveTrail.textContent()) ?? "",
      /create[\s\S]*template[\s\S]*exec[\s\S]*echo from-the-e2e-test[\s\S]*exitCode=0/,
    );
    assert.match(
      (await page.textContent("[data-testid=serve-metrics]")) ?? "",
      /hands_serve_sandboxes\{state="running"\}\s*1/,
    );
    await row.getByText("kill").click();
    await row.waitFor({ state: "detached" });
    const after = await fetch(`${serve.apiUrl}/sandboxes/${sandboxID}`, {
      headers: { "x-api-key": serve.key },
    });
    assert.equal(after.status, 404, "the service no longer has it");
    // The sandboxes the fixture runs used, from the data folder's audit log, with their trail.
    await page.waitForSelector("[data-testid=local-sandbox]");
    assert.ok((await page.locator("[data-testid=local-sandbox]").count()) >= 2, "the runs that ran commands");
    const fib = page.locator("[data-testid=local-sandbox]", { hasText: "ws-fib" }).first();
    assert.match((await fib.textContent()) ?? "", /local[\s\S]*destroyed/);
    await fib.locator("button").click();
    await page.waitForSelector("[data-testid=sandbox-trail]");
    const trail = (await page.textContent("[data-testid=sandbox-trail]")) ?? "";
    assert.match(trail, /create[\s\S]*exec[\s\S]*command=python3 fib\.py[\s\S]*destroy/);
  });

  test("evals: each npm run eval run over time, per task, linked to its trace", async () => {
    const { page } = browser;
    await page.goto(`${dash.url}#/evals`);
    const row = page.locator(`[data-testid=eval-task][data-task="${fx.evalTask}"]`);
    await row.waitFor();
    const cells = row.locator("[data-testid=eval-cell]");
    assert.equal(await cells.count(), 2);
    assert.equal(await cells.nth(0).getAttribute("data-passed"), "true");
    assert.equal(await cells.nth(1).getAttribute("data-passed"), "false");
    assert.match(
      (await cells.nth(1).textContent()) ?? "",
      /FAIL[\s\S]*(answer does not include|exit|stdout)/,
    );
    // The failing run's cell opens that run's trace.
    await cells.nth(1).locator("a").click();
    await page.waitForSelector("[data-testid=run-result]");
    assert.match((await page.textContent("[data-testid=run-result]")) ?? "", /I did it \(but did nothing\)/);
  });

  test("the runs API agrees with the page and no page logged an error", async () => {
    const cookie = cookieName(dash.port);
    const r = await fetch(`${dash.url}api/runs`, { headers: { cookie: `${cookie}=${dash.session}` } });
    const runs = (await r.json()) as RunSummary[];
    const fib = runs.find((x) => x.id === fx.fib)!;
    assert.equal(fib.steps, 4);
    assert.equal(fib.firstRequest, FIB_TASK);
    assert.deepEqual(browser.errors, []);
  });
});
