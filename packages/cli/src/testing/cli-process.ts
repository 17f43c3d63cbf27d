// Runs the real `hands` bin as a child process for end-to-end tests, with an environment
// that holds no model settings of the machine's, so each test chooses what the CLI sees.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../bin/hands.js", import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The process environment without OPENAI_/ANTHROPIC_/HANDS_ settings; data, config and cache under `scratch`. */
export function cleanEnv(scratch: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(OPENAI_|ANTHROPIC_|HANDS_)/.test(k)) env[k] = v;
  return {
    ...env,
    HANDS_DATA_DIR: join(scratch, "data"),
    XDG_CONFIG_HOME: join(scratch, "config"),
    XDG_CACHE_HOME: join(scratch, "cache"),
    NO_COLOR: "1",
    ...extra,
  };
}

/** The model flags for the scripted server; `sandbox` null leaves the CLI's default. */
export function scriptedModelFlags(model: { url: string }, sandbox: string | null = "local"): string[] {
  return [
    "--base-url",
    model.url,
    "--model",
    "m",
    "--api-key",
    "k",
    ...(sandbox ? ["--sandbox", sandbox] : []),
    "--no-memory",
  ];
}

/** One-shot flags against a scripted model: JSON events on stdout, `cwd` as the workspace. */
export function scriptedRunArgs(modelUrl: string, cwd: string): string[] {
  return ["--json", "--quiet", "--base-url", modelUrl, "--model", "m", "--api-key", "k", "--cwd", cwd];
}

/** Runs `hands args…` to its end, collecting stdout and stderr; `input` is piped to its stdin. */
export function runHands(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
  input?: string,
): Promise<CliRun> {
  return runBin(BIN, args, env, cwd, input);
}

/** The same with another copy of the bin (e.g. one with a bundle of its own). */
export function runBin(
  bin: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
  input?: string,
): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env,
      cwd,
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    if (input !== undefined) child.stdin?.end(input);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => {
      stdout += d;
    });
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
