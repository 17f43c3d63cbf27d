// Start-up shared by the tests of the editor and tool-server front ends (`hands acp`,
// `hands mcp-server`): a scratch folder removed when the file ends, the flags that point the
// bin at the scripted model server (cli-process.ts), the bin as a child process, and waiting for a condition.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { BIN } from "./cli-process.js";

/** A real (symlink-free) temp folder, removed after the test file. */
export function scratchFolder(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface BinProcess {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** `hands args…` as a child process with piped stdio, its stderr collected. */
export function spawnBin(
  args: string[],
  env: NodeJS.ProcessEnv,
  stdin: "pipe" | "ignore" = "pipe",
): BinProcess {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: [stdin, "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  return { child, stderr: () => stderr, exited };
}

/** Resolves once `check()` holds; fails after `ms`. */
export async function waitFor(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
