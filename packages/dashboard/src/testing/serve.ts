// A real `hands serve` for the sandboxes page's tests: the CLI's own command, a tenant key made
// with `hands serve keys create`, the management API on a free loopback port, bwrap sandboxes.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { HANDS_BIN, handsEnv } from "./hands-cli.js";

export interface TestServe {
  apiUrl: string;
  key: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

function hands(
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; out: () => string; err: () => string } {
  const child = spawn(process.execPath, [HANDS_BIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    err += d;
  });
  return { child, out: () => out, err: () => err };
}

export async function startRealServe(dir: string): Promise<TestServe> {
  mkdirSync(dir, { recursive: true });
  const env = handsEnv(dir);
  const keys = hands(["serve", "keys", "create", "dashboard-tests", "--data", dir], env);
  const code = await new Promise((r) => keys.child.once("close", r));
  const key = /^(e2b_[0-9a-f]{40})$/m.exec(keys.out())?.[1];
  if (code !== 0 || !key) throw new Error(`hands serve keys create failed (${code}): ${keys.err()}`);
  const serve = hands(
    ["serve", "--data", dir, "--api", "127.0.0.1:0", "--sandbox-address", "127.0.0.1:0"],
    env,
  );
  const exited = new Promise<number | null>((r) => serve.child.once("close", r));
  for (let i = 0; i < 400 && !/management API (\S+)/.test(serve.out()) && serve.child.exitCode === null; i++)
    await new Promise((r) => setTimeout(r, 50));
  const apiUrl = /management API (\S+)/.exec(serve.out())?.[1];
  if (!apiUrl) {
    serve.child.kill("SIGKILL");
    throw new Error(`hands serve did not start: ${serve.err()}`);
  }
  return {
    apiUrl,
    key,
    child: serve.child,
    async stop() {
      if (serve.child.exitCode === null) serve.child.kill("SIGTERM");
      await exited;
    },
  };
}
