// `npm run dashboard:screens`: screenshots of each dashboard page (docs/dashboard/*.png, shown in
// the README), taken in headless Chromium on data made by real scripted runs and a real
// hands serve, the same fixtures the end-to-end tests use.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Sandbox } from "e2b";
import { startDashboard } from "../server.js";
import { launchBrowser } from "./browser.js";
import { makeFixtures } from "./fixtures.js";
import { startRealServe } from "./serve.js";

const OUT = fileURLToPath(new URL("../../../../docs/dashboard/", import.meta.url));

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), "hands-dash-screens-"));
  chmodSync(scratch, 0o711);
  const [fx, serve] = await Promise.all([makeFixtures(scratch), startRealServe(join(scratch, "serve"))]);
  const dash = await startDashboard({ dataDir: fx.dataDir, serve: { url: serve.apiUrl, apiKey: serve.key } });
  const browser = await launchBrowser({ width: 1400, height: 900 });
  try {
    const created = await fetch(`${serve.apiUrl}/sandboxes`, {
      method: "POST",
      headers: { "x-api-key": serve.key, "content-type": "application/json" },
      body: JSON.stringify({ templateID: "base", timeout: 600, metadata: { session: "demo" } }),
    });
    if (created.status !== 201) throw new Error(`sandbox create: ${created.status} ${await created.text()}`);
    // Some work in it, so its figures and trail have something to show.
    const { sandboxID } = (await created.json()) as { sandboxID: string };
    const sb = await Sandbox.connect(sandboxID, {
      apiKey: serve.key,
      apiUrl: serve.apiUrl,
      sandboxUrl: serve.sandboxUrl,
    });
    await sb.commands.run("python3 --version");
    await sb.commands.run("python3 -c 'while True: pass'", { background: true });
    mkdirSync(OUT, { recursive: true });
    const { page } = browser;
    const shot = async (name: string) => {
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(OUT, `${name}.png`) });
      process.stdout.write(`${join(OUT, `${name}.png`)}\n`);
    };
    await page.goto(dash.openUrl);
    await page.waitForSelector("[data-testid=run-row]");
    await shot("runs");

    await page.goto(`${dash.url}#/run/${fx.fib}`);
    await page.waitForSelector("[data-testid=step-row]");
    await page.locator('[data-testid=step-row][data-step="2"] button.step-line').click();
    await page.locator('[data-testid=step-row][data-step="2"] [data-testid=show-sent]').click();
    await page.waitForSelector("[data-testid=sent-messages]");
    await shot("run");

    await page.goto(`${dash.url}#/compare/${fx.fib}/${fx.bigOutput}`);
    await page.waitForSelector("[data-testid=compare-table]");
    await shot("compare");

    await page.goto(`${dash.url}#/memory`);
    await page.locator('[data-testid=memory-cell][data-layer="working"]').first().click();
    await page.locator("[data-testid=chunk-row]").first().click();
    await page.waitForSelector("[data-testid=chunk-panel]");
    await shot("memory");
    // The snapshot list, one replayed (the page afresh: no chunk panel open).
    await page.reload();
    await page.waitForSelector("[data-testid=snapshot-row]");
    await page.locator(`[data-testid=snapshot-row]`).last().getByText("replay").click();
    await page.waitForSelector("[data-testid=replay-result]");
    await page.locator("[data-testid=memory-replay]").scrollIntoViewIfNeeded();
    await shot("memory-snapshots");

    await page.goto(`${dash.url}#/sandboxes`);
    await page.waitForSelector("[data-testid=sandbox-cpu]");
    await page.locator("[data-testid=sandbox-row] button.link").first().click();
    await page.waitForSelector("[data-testid=serve-sandbox-trail]");
    await page.waitForTimeout(3500);
    await shot("sandboxes");

    await page.goto(`${dash.url}#/evals`);
    await page.waitForSelector("[data-testid=eval-task]");
    await shot("evals");
    if (browser.errors.length) throw new Error(`the pages logged errors:\n${browser.errors.join("\n")}`);
  } finally {
    await browser.close();
    await dash.close();
    await serve.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`dashboard:screens: ${(err as Error).stack ?? err}\n`);
  process.exitCode = 1;
});
