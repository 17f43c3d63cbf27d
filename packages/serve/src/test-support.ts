// Shared set-up for the service's tests: a real `hands serve` on loopback ports with its own data
// folder, a tenant key, and the E2B SDK's environment pointed at it.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkDocker, dockerClient, imageExists, imageTag } from "@hands/sandbox";
import pg from "pg";
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

const TEST_DATABASE_URL = process.env.HANDS_TEST_DATABASE_URL ?? "postgres://hands@127.0.0.1:55432/postgres";
let serverStarted = false;

/** An admin connection to the test server; starts it (scripts/postgres.sh) if nothing answers. */
async function adminClient(): Promise<pg.Client> {
  for (let attempt = 0; ; attempt++) {
    const c = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 5000 });
    try {
      await c.connect();
      return c;
    } catch (e) {
      await c.end().catch(() => {});
      if (attempt > 0 || serverStarted || process.env.HANDS_TEST_DATABASE_URL) throw e;
      serverStarted = true;
      const script = fileURLToPath(new URL("../../../scripts/postgres.sh", import.meta.url));
      const r = spawnSync("bash", [script], { encoding: "utf8" });
      if (r.status !== 0)
        throw new Error(`PostgreSQL is not running and scripts/postgres.sh failed: ${r.stderr}`);
    }
  }
}

/** A fresh database on the test PostgreSQL server (a real one), dropped by drop(). */
export async function testDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `hs_${randomBytes(6).toString("hex")}`;
  const admin = await adminClient();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = await adminClient();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A `hands serve` node in a process of its own (so a test can kill it), on loopback ports. */
export interface NodeProcess {
  name: string;
  apiUrl: string;
  sandboxUrl: string;
  dataDir: string;
  child: ChildProcess;
  opts(key: string): { apiKey: string; apiUrl: string; sandboxUrl: string };
  /** SIGKILL: the node dies without a word, as a crashed machine would. */
  kill(): Promise<void>;
  /** SIGTERM (a clean stop); the data folder is removed unless kept for a restart. */
  stop(o?: { keepData?: boolean }): Promise<void>;
}

const NODE_MAIN = `
const { startServe } = await import(process.argv[1]);
const s = await startServe(JSON.parse(process.argv[2]));
process.stdout.write(JSON.stringify({ apiUrl: s.apiUrl, sandboxUrl: s.sandboxUrl }) + "\\n");
process.once("SIGTERM", () => s.close().then(() => process.exit(0)));
`;

export async function startNodeProcess(name: string, options: Partial<ServeOptions>): Promise<NodeProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), `hs-${name}-`));
  const serverModule = new URL("./server.js", import.meta.url).href;
  const o = { reapIntervalMs: 200, warm: {}, node: name, dataDir, ...options };
  const child = spawn(
    process.execPath,
    ["--input-type=module", "-e", NODE_MAIN, serverModule, JSON.stringify(o)],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += String(d);
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const addr = await new Promise<{ apiUrl: string; sandboxUrl: string }>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += String(d);
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)));
    });
    child.once("exit", (code) => reject(new Error(`node ${name} exited (${code}): ${stderr}`)));
  });
  const wipe = () => rmSync(dataDir, { recursive: true, force: true });
  return {
    name,
    ...addr,
    dataDir,
    child,
    opts: (apiKey) => ({ apiKey, apiUrl: addr.apiUrl, sandboxUrl: addr.sandboxUrl }),
    async kill() {
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    },
    async stop(so = {}) {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      if (!so.keepData) wipe();
    },
  };
}

/** Why the docker backend (with `runtime`, e.g. runsc) cannot run here, or false when it can. */
export async function dockerSkip(runtime?: string): Promise<string | false> {
  const d = await checkDocker();
  if (!d.ok) return d.reason;
  if (!(await imageExists(imageTag())))
    return `the sandbox image ${imageTag()} is not built (scripts/test-env.sh builds it)`;
  if (runtime) {
    const info = (await (await dockerClient()).info()) as { Runtimes?: Record<string, unknown> };
    if (!info.Runtimes?.[runtime]) return `docker has no "${runtime}" runtime registered`;
  }
  return false;
}
