// A long-lived process with stdio pipes, beside a sandbox's commands: a language server, say.
// `exec` runs one command to its end and captures its output; this starts a program that keeps
// running and talks over stdin/stdout until it is killed (or the sandbox is destroyed). It runs
// where the sandbox's commands run, with their limits: bwrap starts a second bubblewrap with the
// session's mounts, user and cgroup; local a plain child process in the workspace. Backends
// without it (docker, e2b) say so.
import { type ChildProcess, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import type { Sandbox } from "./types.js";

export interface LongLivedOptions {
  /** Host folders mounted read-only at the given absolute paths (ignored by local: same paths). */
  readOnlyBinds?: Array<{ host: string; path: string }>;
  /** Extra environment (after the sandbox's own). */
  env?: Record<string, string>;
}

export interface LongLivedProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Where the workspace is as the process sees it (/workspace in bwrap, the host path locally). */
  readonly workspacePath: string;
  /** Settles once the process has ended (never rejects). */
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  /** Ends it at once (SIGKILL of the whole sandboxed tree). */
  kill(): void;
}

/** What a backend offers to start one (bwrap's and local's sandboxes have it). */
export interface LongLivedSpawner {
  spawnLongLived(argv: string[], options?: LongLivedOptions): Promise<LongLivedProcess>;
}

export function canSpawnLongLived(sandbox: Sandbox): sandbox is Sandbox & LongLivedSpawner {
  return typeof (sandbox as Partial<LongLivedSpawner>).spawnLongLived === "function";
}

/** Starts `argv` in the sandbox, or throws a clear error when its backend cannot. */
export function spawnLongLived(
  sandbox: Sandbox,
  argv: string[],
  options: LongLivedOptions = {},
): Promise<LongLivedProcess> {
  if (!canSpawnLongLived(sandbox))
    return Promise.reject(new Error(`the ${sandbox.kind} sandbox cannot run a long-lived process`));
  return sandbox.spawnLongLived(argv, options);
}

/** Wraps a spawned child (its three pipes) as a LongLivedProcess. */
export function longLivedChild(child: ChildProcess, workspacePath: string): LongLivedProcess {
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.once("error", () => resolve({ code: null, signal: null }));
    // "close", not "exit": by then its stderr has been read to the end (why it died).
    child.once("close", (code, signal) => resolve({ code, signal }));
  });
  child.stdin?.on("error", () => {});
  return {
    stdin: child.stdin as Writable,
    stdout: child.stdout as Readable,
    stderr: child.stderr as Readable,
    workspacePath,
    exited,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

/** local: a child process in the workspace with the given (already scrubbed) environment. */
export function spawnLocalLongLived(
  workspace: string,
  argv: string[],
  env: Record<string, string>,
): LongLivedProcess {
  const [file, ...args] = argv;
  if (!file) throw new Error("no program to run");
  const child = spawn(file, args, { cwd: workspace, env, stdio: ["pipe", "pipe", "pipe"] });
  return longLivedChild(child, workspace);
}
