// A real `hands serve` on loopback ports (bwrap backend, no warm pool) and a tenant key, for the
// tests of `--sandbox e2b`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningServe, startServe } from "@hands/serve";

export interface LoopbackServe {
  serve: RunningServe;
  key: string;
  /** The SDK's connection options for `key`. */
  sdk: { apiKey: string; apiUrl: string; sandboxUrl: string };
  close(): Promise<void>;
}

export async function startLoopbackServe(tenant: string): Promise<LoopbackServe> {
  const dataDir = mkdtempSync(join(tmpdir(), "hs-"));
  const serve = await startServe({
    dataDir,
    apiListen: { host: "127.0.0.1", port: 0 },
    sandboxListen: { host: "127.0.0.1", port: 0 },
    warm: {},
    reapIntervalMs: 200,
  });
  const { key } = await serve.keys.create(tenant);
  return {
    serve,
    key,
    sdk: { apiKey: key, apiUrl: serve.apiUrl, sandboxUrl: serve.sandboxUrl },
    async close() {
      await serve.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
