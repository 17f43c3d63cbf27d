// The `local` backend: runs commands as ordinary child processes of this Node process.
//
// It does NOT isolate anything. Commands run as the current user with the user's rights and
// can read or change any file that user can; the workspace confinement here applies only to
// this sandbox's own file API and to the `cwd` option. What it does provide: a scrubbed
// environment, one process group per command (killed as a whole on timeout, abort, destroy
// and when the command returns), and output that is capped while it streams.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { accessSync, constants, statSync } from "node:fs";
import { mkdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { basename, delimiter, dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { StringDecoder } from "node:string_decoder";
import { confinePath, realpathOrSelf } from "./confine.js";
import { scrubEnv } from "./env.js";
import { LocalHelper } from "./local-helper.js";
import { type LongLivedOptions, type LongLivedProcess, spawnLocalLongLived } from "./long-lived.js";
import { DEFAULT_MAX_OUTPUT_BYTES, OutputBuffer } from "./output-buffer.js";
import { DEFAULT_TIMEOUT_MS, KILL_GRACE_MS } from "./timeouts.js";
import type { ExecOptions, ExecResult, Sandbox, SandboxKind } from "./types.js";

export const LOCAL_SANDBOX_WARNING =
  "The local sandbox does not isolate anything: commands run as your user, with your rights, " +
  "on your real files and network. Only the environment is scrubbed of secrets. " +
  "Use the bwrap or docker backend for untrusted work.";

export { DEFAULT_TIMEOUT_MS, KILL_GRACE_MS } from "./timeouts.js";

/** After the shell exits, how long background processes may keep its output pipes open. */
const DRAIN_MS = 100;

let cachedShell: string | undefined;

/** The shell used for commands: bash if there is one, else sh. */
export function findShell(): string {
  if (cachedShell) return cachedShell;
  const candidates = ["/bin/bash", "/usr/bin/bash"];
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) if (dir) candidates.push(join(dir, "bash"));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      cachedShell = c;
      return c;
    } catch {
      // try the next one
    }
  }
  cachedShell = "/bin/sh";
  return cachedShell;
}

function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface LocalSandboxOptions {
  workspace: string;
  /** Extra environment for every command (added after scrubbing). */
  env?: Record<string, string>;
  /** Environment to scrub and pass on (default: process.env). */
  baseEnv?: Record<string, string | undefined>;
  id?: string;
}

interface Running {
  kill: (reason: "destroy") => void;
  done: Promise<unknown>;
}

/**
 * Runs commands in the workspace, each in its own process group: in a job forked by one
 * persistent bash helper (local-helper.ts) when the shell is bash, else with `sh -c`.
 *
 * **Not isolated**: see `LOCAL_SANDBOX_WARNING`. Background processes a command starts are
 * killed when the command returns (they share its process group); start them with `setsid`
 * to keep them running — they are then outside this sandbox's control (and, holding the
 * helper's output, may write into later results until they exit).
 */
export class LocalSandbox implements Sandbox {
  readonly id: string;
  readonly kind: SandboxKind = "local";
  readonly workspace: string;
  readonly isolated = false;
  readonly warning = LOCAL_SANDBOX_WARNING;
  private readonly extraEnv: Record<string, string>;
  private readonly baseEnv: Record<string, string | undefined>;
  private readonly running = new Set<Running>();
  private readonly longLived = new Set<LongLivedProcess>();
  private destroyed = false;
  /** Runs the commands when the shell is bash (it speaks the helper's script); else a spawn each. */
  private readonly helper: LocalHelper | undefined;

  constructor(options: LocalSandboxOptions) {
    const ws = realpathOrSelf(options.workspace);
    let isDir = false;
    try {
      isDir = statSync(ws).isDirectory();
    } catch {
      isDir = false;
    }
    if (!isDir) throw new Error(`sandbox workspace is not a directory: ${options.workspace}`);
    this.workspace = ws;
    this.id = options.id ?? `local-${randomUUID().slice(0, 8)}`;
    this.extraEnv = { ...(options.env ?? {}) };
    this.baseEnv = options.baseEnv ?? process.env;
    const shell = findShell();
    this.helper = shell.endsWith("bash") ? new LocalHelper(shell, ws, () => this.commandEnv()) : undefined;
  }

  /** Number of commands still running. */
  get runningCount(): number {
    return this.running.size;
  }

  private assertAlive(): void {
    if (this.destroyed) throw new Error(`sandbox ${this.id} has been destroyed`);
  }

  /** The environment a command sees (scrubbed base + hints + sandbox env + `extra`). */
  commandEnv(extra?: Record<string, string>): Record<string, string> {
    return { ...scrubEnv(this.baseEnv), ...this.extraEnv, ...(extra ?? {}) };
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    this.assertAlive();
    const cwd = options.cwd ? await confinePath(this.workspace, options.cwd) : this.workspace;
    let cwdStat: Awaited<ReturnType<typeof stat>> | undefined;
    try {
      cwdStat = await stat(cwd);
    } catch {
      cwdStat = undefined;
    }
    if (!cwdStat?.isDirectory()) throw new Error(`cwd is not a directory in the workspace: ${options.cwd}`);
    this.assertAlive();

    if (this.helper) return this.execInHelper(this.helper, options.cwd ? cwd : undefined, command, options);

    const start = performance.now();
    const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    const out = new OutputBuffer(maxBytes);
    const err = new OutputBuffer(maxBytes);
    if (options.signal?.aborted) {
      return {
        stdout: "",
        stderr: "",
        exitCode: null,
        signal: null,
        timedOut: false,
        aborted: true,
        truncated: false,
        durationMs: 0,
      };
    }

    const child = spawn(findShell(), ["-c", command], {
      cwd,
      env: this.commandEnv(options.env),
      detached: true, // own process group (and session: no controlling terminal)
      stdio: [options.stdin !== undefined ? "pipe" : "ignore", "pipe", "pipe"],
      windowsHide: true,
    });

    let running: Running | undefined;
    const done = new Promise<ExecResult>((resolvePromise) => {
      let timedOut = false;
      let aborted = false;
      let exited = false;
      let exitCode: number | null = null;
      let exitSignal: string | null = null;
      let spawnError: Error | undefined;
      let stdoutOpen = true;
      let stderrOpen = true;
      let finished = false;
      let killing = false;
      const timers: NodeJS.Timeout[] = [];
      const outDecoder = new StringDecoder("utf8");
      const errDecoder = new StringDecoder("utf8");

      const killGroup = (sig: NodeJS.Signals) => {
        if (child.pid === undefined) return;
        try {
          process.kill(-child.pid, sig);
        } catch {
          // group already gone
        }
      };
      // SIGTERM now, SIGKILL after the grace period; returns once SIGKILL was sent.
      const terminate = () => {
        if (killing) return;
        killing = true;
        killGroup("SIGTERM");
        timers.push(setTimeout(() => killGroup("SIGKILL"), KILL_GRACE_MS));
      };

      const finish = () => {
        if (finished) return;
        finished = true;
        for (const t of timers) clearTimeout(t);
        options.signal?.removeEventListener("abort", onAbort);
        // Whatever is left in the group (background jobs that closed their output) goes too.
        if (child.pid !== undefined && groupExists(child.pid)) {
          killGroup("SIGTERM");
          const pid = child.pid;
          setTimeout(() => {
            try {
              process.kill(-pid, "SIGKILL");
            } catch {
              // gone
            }
          }, KILL_GRACE_MS).unref();
        }
        const tailOut = outDecoder.end();
        const tailErr = errDecoder.end();
        if (tailOut) options.onStdout?.(tailOut);
        if (tailErr) options.onStderr?.(tailErr);
        let stderr = err.toString();
        if (spawnError) stderr += `${stderr ? "\n" : ""}failed to start the command: ${spawnError.message}`;
        resolvePromise({
          stdout: out.toString(),
          stderr,
          exitCode: spawnError ? 127 : exitCode,
          signal: exitSignal,
          timedOut,
          aborted,
          truncated: out.truncated || err.truncated,
          durationMs: Math.round(performance.now() - start),
          stdoutBytes: out.totalBytes,
          stderrBytes: err.totalBytes,
        });
      };

      const maybeFinish = () => {
        if (exited && !stdoutOpen && !stderrOpen) finish();
      };

      const onExit = () => {
        if (!stdoutOpen && !stderrOpen) return finish();
        // Background processes may hold the pipes open: give them a moment, then kill the
        // group, then stop waiting for the pipes altogether.
        timers.push(
          setTimeout(() => {
            terminate();
            timers.push(
              setTimeout(() => {
                child.stdout?.destroy();
                child.stderr?.destroy();
                finish();
              }, KILL_GRACE_MS + 200),
            );
          }, DRAIN_MS),
        );
      };

      const onAbort = () => {
        if (exited) return;
        aborted = true;
        terminate();
      };
      running = {
        kill: () => {
          aborted = true;
          terminate();
        },
        done: Promise.resolve(),
      };

      child.stdout?.on("data", (chunk: Buffer) => {
        out.push(chunk);
        if (options.onStdout) {
          const s = outDecoder.write(chunk);
          if (s) options.onStdout(s);
        }
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        err.push(chunk);
        if (options.onStderr) {
          const s = errDecoder.write(chunk);
          if (s) options.onStderr(s);
        }
      });
      child.stdout?.on("close", () => {
        stdoutOpen = false;
        maybeFinish();
      });
      child.stderr?.on("close", () => {
        stderrOpen = false;
        maybeFinish();
      });
      if (!child.stdout) stdoutOpen = false;
      if (!child.stderr) stderrOpen = false;

      child.on("error", (e) => {
        // Spawning failed (no exit event will follow).
        spawnError = e;
        if (child.pid === undefined) {
          exited = true;
          stdoutOpen = false;
          stderrOpen = false;
          finish();
        }
      });
      child.on("exit", (code, sig) => {
        exited = true;
        exitCode = code;
        exitSignal = sig;
        onExit();
      });

      if (options.stdin !== undefined && child.stdin) {
        child.stdin.on("error", () => {
          // The command may exit without reading its input (EPIPE): not an error for us.
        });
        child.stdin.end(options.stdin);
      }

      const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      if (Number.isFinite(timeoutMs) && timeoutMs > 0) {
        timers.push(
          setTimeout(() => {
            if (exited) return;
            timedOut = true;
            terminate();
          }, timeoutMs),
        );
      }
      options.signal?.addEventListener("abort", onAbort, { once: true });
    });

    const entry: Running = { kill: (r) => running?.kill(r), done };
    this.running.add(entry);
    try {
      return await done;
    } finally {
      this.running.delete(entry);
    }
  }

  /**
   * A command in a job of the persistent helper (local-helper.ts). Destroy aborts it; a command
   * stopped by a timeout or an abort reports the signal, not an exit code, as a spawned one did.
   */
  private async execInHelper(
    helper: LocalHelper,
    cwd: string | undefined,
    command: string,
    options: ExecOptions,
  ): Promise<ExecResult> {
    const ac = new AbortController();
    const onAbort = () => ac.abort();
    if (options.signal?.aborted) ac.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const entry: Running = { kill: () => ac.abort(), done: Promise.resolve() };
    const done = helper.exec(command, {
      ...options,
      signal: ac.signal,
      env: options.env && Object.keys(options.env).length > 0 ? options.env : undefined,
      cwd,
    });
    entry.done = done;
    this.running.add(entry);
    try {
      const r = await done;
      if ((r.timedOut || r.aborted) && r.signal) r.exitCode = null;
      return r;
    } finally {
      this.running.delete(entry);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  async readFile(path: string): Promise<Buffer> {
    this.assertAlive();
    const full = await confinePath(this.workspace, path);
    return readFile(full);
  }

  /** Writes atomically (temp file + rename), creating parent folders. */
  async writeFile(path: string, data: string | Uint8Array): Promise<void> {
    this.assertAlive();
    const full = await confinePath(this.workspace, path);
    const dir = dirname(full);
    await mkdir(dir, { recursive: true });
    // The folders we just created may not change where the path resolves, but check again
    // in case something raced us with a symlink.
    const again = await confinePath(this.workspace, path);
    if (again !== full) throw new Error(`path changed while writing: ${path}`);
    const tmp = join(dir, `.${basename(full)}.${randomUUID().slice(0, 8)}.tmp`);
    try {
      await writeFile(tmp, data);
      await rename(tmp, full);
    } catch (e) {
      await unlink(tmp).catch(() => {});
      throw e;
    }
  }

  /** Kills every command still running in this sandbox; later calls fail. */
  /** A process that keeps running (a language server, long-lived.ts); destroy ends it. */
  async spawnLongLived(argv: string[], options: LongLivedOptions = {}): Promise<LongLivedProcess> {
    this.assertAlive();
    const p = spawnLocalLongLived(this.workspace, argv, this.commandEnv(options.env));
    this.longLived.add(p);
    void p.exited.then(() => this.longLived.delete(p));
    return p;
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const p of this.longLived) p.kill();
    const all = [...this.running];
    for (const r of all) r.kill("destroy");
    await Promise.all(all.map((r) => r.done.catch(() => {})));
    await this.helper?.destroy();
  }
}
