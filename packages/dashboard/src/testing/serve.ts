// A real `hands serve` for the sandboxes page's tests: the CLI's own command, a tenant key made
// with `hands serve keys create`, the management API on a free loopback port, bwrap sandboxes.
import type { ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { handsEnv, spawnHands } from "./hands-cli.js";

export interface TestServe {
  apiUrl: string;
  /** The sandbox address (E2B_SANDBOX_URL). */
  sandboxUrl: string;
  key: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function startRealServe(dir: string): Promise<TestServe> {
  mkdirSync(dir, { recursive: true });
  const env = handsEnv(dir);
  const keys = spawnHands(["serve", "keys", "create", "dashboard-tests", "--data", dir], env);
  const code = await keys.done;
  const key = /^(e2b_[0-9a-f]{40})$/m.exec(keys.stdout())?.[1];
  if (code !== 0 || !key) throw new Error(`hands serve keys create failed (${code}): ${keys.stderr()}`);
  const serve = spawnHands(
    ["serve", "--data", dir, "--api", "127.0.0.1:0", "--sandbox-address", "127.0.0.1:0"],
    env,
  );
  for (
    let i = 0;
    i < 400 && !/management API (\S+)/.test(serve.stdout()) && serve.child.exitCode === null;
    i++
  )
    await new Promise((r) => setTimeout(r, 50));
  const apiUrl = /management API (\S+)/.exec(serve.stdout())?.[1];
  const sandboxUrl = / sandboxes (\S+)/.exec(serve.stdout())?.[1];
  if (!apiUrl || !sandboxUrl) {
    serve.child.kill("SIGKILL");
    throw new Error(`hands serve did not start: ${serve.stderr()}`);
  }
  return {
    apiUrl,
    sandboxUrl,
    key,
    child: serve.child,
    async stop() {
      if (serve.child.exitCode === null) serve.child.kill("SIGTERM");
      await serve.done;
    },
  };
}
