// Shared set-up for the service's tests: a real `hands serve` on loopback ports with its own data
// folder, a tenant key, and the E2B SDK's environment pointed at it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningServe, type ServeOptions, startServe } from "./server.js";

export interface TestServe extends RunningServe {
  dataDir: string;
  key: string;
  /** SDK connection options for another key. */
  opts(key?: string): { apiKey: string; apiUrl: string; sandboxUrl: string };
  stop(): Promise<void>;
}

export async function startTestServe(options: Partial<ServeOptions> = {}): Promise<TestServe> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "hs-"));
  // No warm pool unless a test asks for one: its background starts would race with what tests count.
  const s = await startServe({ reapIntervalMs: 200, warm: {}, ...options, dataDir });
  const { key } = await s.keys.create("tenant-a");
  process.env.E2B_API_KEY = key;
  process.env.E2B_API_URL = s.apiUrl;
  process.env.E2B_SANDBOX_URL = s.sandboxUrl;
  return {
    ...s,
    dataDir,
    key,
    opts: (k = key) => ({ apiKey: k, apiUrl: s.apiUrl, sandboxUrl: s.sandboxUrl }),
    async stop() {
      await s.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Raw HTTP to the service, for what the SDK would never send. */
export async function raw(
  url: string,
  init: RequestInit & { headers?: Record<string, string> } = {},
): Promise<{ status: number; text: string; json: () => unknown; headers: Headers }> {
  const r = await fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(15_000) });
  const text = await r.text();
  return { status: r.status, text, json: () => JSON.parse(text), headers: r.headers };
}
