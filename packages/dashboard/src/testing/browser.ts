// Headless Chromium for the dashboard's tests: Debian's own /usr/bin/chromium (installed by
// scripts/test-env.sh), driven by playwright-core, never a downloaded browser; a fresh profile
// each launch.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM = process.env.HANDS_CHROMIUM ?? "/usr/bin/chromium";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Messages the pages logged as errors, and uncaught exceptions: a test fails on any. */
  errors: string[];
  close(): Promise<void>;
}

export async function launchBrowser(viewport = { width: 1400, height: 900 }): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), "hands-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport,
  });
  const errors: string[] = [];
  const watch = (page: Page) => {
    page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
    page.on("console", (m) => {
      if (
        m.type() === "error" &&
        !/Failed to load resource: the server responded with a status of (4|5)\d\d/.test(m.text())
      )
        errors.push(`console: ${m.text()}`);
    });
  };
  context.on("page", watch);
  const page = context.pages()[0] ?? (await context.newPage());
  watch(page);
  return {
    context,
    page,
    errors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
