// Real `hands` runs for the dashboard's tests and benches: the CLI's own bin as a child process,
// against the scripted model server (a real HTTP server that checks every request as a real
// one would), with its data folder under a scratch directory.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const HANDS_BIN = fileURLToPath(new URL("../../../cli/bin/hands.js", import.meta.url));

/** The environment without the machine's model settings; data and config under `scratch`. */
export function handsEnv(scratch: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(OPENAI_|ANTHROPIC_|HANDS_|E2B_)/.test(k)) env[k] = v;
  return {
    ...env,
    HANDS_DATA_DIR: join(scratch, "data"),
    XDG_CONFIG_HOME: join(scratch, "config"),
    XDG_CACHE_HOME: join(scratch, "cache"),
    NO_COLOR: "1",
    ...extra,
  };
}

export interface HandsProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  done: Promise<number | null>;
}

/** Starts the `hands` bin with `args`, collecting what it prints. */
export function spawnHands(args: string[], env: NodeJS.ProcessEnv): HandsProcess {
  const child = spawn(process.execPath, [HANDS_BIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    err += d;
  });
  const done = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, done };
}

/** Starts a one-shot `hands args…` against the model server at `modelUrl`. */
export function startHands(
  args: string[],
  o: { scratch: string; modelUrl: string; workspace: string; env?: Record<string, string> },
): HandsProcess {
  mkdirSync(o.workspace, { recursive: true });
  return spawnHands(
    ["--model", "scripted-model", "--cwd", o.workspace, "--sandbox", "local", ...args],
    handsEnv(o.scratch, { OPENAI_BASE_URL: o.modelUrl, OPENAI_API_KEY: "sk-test", ...o.env }),
  );
}

/** Runs `hands args…` to its end; throws with its stderr when it exits otherwise than `expectCode`. */
export async function runHands(
  args: string[],
  o: {
    scratch: string;
    modelUrl: string;
    workspace: string;
    env?: Record<string, string>;
    expectCode?: number;
  },
): Promise<string> {
  const p = startHands(args, o);
  const code = await p.done;
  if (code !== (o.expectCode ?? 0)) throw new Error(`hands ${args.join(" ")} exited ${code}:\n${p.stderr()}`);
  return p.stdout();
}
