// The `e2b` backend: commands run in a sandbox of any E2B-protocol service (E2B's cloud, or
// `hands serve`), driven through the official `e2b` SDK (loaded only when this backend is used).
//
// The workspace: the host folder stays the real one. At start it is copied into the sandbox
// (REMOTE_WORKSPACE), then before every command what changed on the host is pushed and after
// it what the command changed is pulled back (e2b-sync.ts), so the user's files end up changed
// and the agent's file tools keep working on the host. node_modules and similar folders are not
// copied (SYNC_EXCLUDES); sizes are bounded (SyncLimits).
//
// Lifecycle: the sandbox is created with a short timeout that a heartbeat keeps extending while
// this process lives, so a crashed or killed run's sandbox ends on the service's side within
// that time; destroy() kills it at once. A sandbox that is gone (killed, expired) makes the
// command's result say so; the next command starts a new one from the host workspace.
import { randomBytes, randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { performance } from "node:perf_hooks";
import type { CommandHandle, Sandbox as SdkSandbox } from "e2b";
import { realpathOrSelf } from "./confine.js";
import { describeE2BError, e2bError, isSandboxGone } from "./e2b-errors.js";
import {
  execScript,
  killTreeCommand,
  manifestCommand,
  packCommand,
  parseExecOutput,
  parseManifest,
  pushCommand,
} from "./e2b-script.js";
import { DEFAULT_SYNC_LIMITS, nulList, type SyncLimits, WorkspaceSync } from "./e2b-sync.js";
import { FileApi } from "./files.js";
import { DEFAULT_MAX_OUTPUT_BYTES } from "./output-buffer.js";
import { DEFAULT_PROTECTED_PATHS } from "./protected-paths.js";
import { signalName } from "./shell-session.js";
import { startOrDestroy } from "./start-or-destroy.js";
import { DEFAULT_TIMEOUT_MS } from "./timeouts.js";
import type { ExecOptions, ExecResult, Sandbox, SandboxKind } from "./types.js";

/** The template a sandbox starts from when none is chosen (E2B's and `hands serve`'s default). */
export const DEFAULT_E2B_TEMPLATE = "base";
/** Where the workspace copy lives inside the sandbox (E2B's default user is "user"). */
export const REMOTE_WORKSPACE = "/home/user/workspace";
/** The sandbox's lifetime on the service, extended by the heartbeat while this process runs. */
export const DEFAULT_E2B_TTL_MS = 5 * 60_000;
/** Time the wrapper has to report after SIGTERM before the command is given up. */
const STOP_GRACE_MS = 5_000;

export interface E2BOptions {
  /** Default E2B_API_KEY. */
  apiKey?: string;
  /** Default E2B_API_URL, else https://api.<domain>. */
  apiUrl?: string;
  /** Default E2B_SANDBOX_URL, else the SDK's https://sandbox.<domain>. */
  sandboxUrl?: string;
  /** Default E2B_DOMAIN, else e2b.app. */
  domain?: string;
  /** Default HANDS_E2B_TEMPLATE, else "base". */
  template?: string;
  /** The sandbox's timeout on the service (refreshed by the heartbeat). */
  ttlMs?: number;
  /** Timeout of each management / file request. */
  requestTimeoutMs?: number;
  remoteWorkspace?: string;
  sync?: Partial<SyncLimits>;
}

export interface E2BSandboxOptions {
  workspace: string;
  id?: string;
  env?: Record<string, string>;
  /** "host" lets commands reach the internet; anything else asks the service to block it. */
  network?: string;
  /** Workspace paths a command's changes never reach on the host (default DEFAULT_PROTECTED_PATHS). */
  protectedPaths?: readonly string[];
  e2b?: E2BOptions;
}

export interface E2BConnection {
  apiKey: string;
  apiUrl: string;
  sandboxUrl?: string;
  domain?: string;
  template: string;
}

/** The connection settings: options first, then E2B's own variables (and HANDS_E2B_TEMPLATE). */
export function resolveE2BConnection(
  o: E2BOptions = {},
  env: NodeJS.ProcessEnv = process.env,
): E2BConnection {
  const apiKey = o.apiKey ?? env["E2B_API_KEY"];
  if (!apiKey) throw new Error("the e2b sandbox needs an API key: set E2B_API_KEY");
  const domain = o.domain ?? env["E2B_DOMAIN"];
  const sandboxUrl = o.sandboxUrl ?? env["E2B_SANDBOX_URL"];
  return {
    apiKey,
    apiUrl: o.apiUrl ?? env["E2B_API_URL"] ?? `https://api.${domain ?? "e2b.app"}`,
    ...(sandboxUrl ? { sandboxUrl } : {}),
    ...(domain ? { domain } : {}),
    template: o.template ?? env["HANDS_E2B_TEMPLATE"] ?? DEFAULT_E2B_TEMPLATE,
  };
}

/** The SDK, imported on first use (start-up of runs that never use e2b does not pay for it). */
function loadSdk(): Promise<{ Sandbox: typeof SdkSandbox }> {
  return import("e2b");
}

export class E2BSandbox implements Sandbox {
  readonly id: string;
  readonly kind: SandboxKind = "e2b";
  readonly workspace: string;
  readonly isolated = true;
  readonly createdAt = Date.now();
  lastUsedAt = Date.now();
  private readonly conn: E2BConnection;
  private readonly files: FileApi;
  private readonly sync: WorkspaceSync;
  private readonly ttlMs: number;
  private readonly requestTimeoutMs: number;
  private readonly remoteWs: string;
  private remote: SdkSandbox | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  /** Why the last sandbox ended under us (said once, by the next command's result). */
  private lost: string | undefined;
  /** Whether a listing of the remote copy was taken since the sandbox started. */
  private remoteKnown = false;
  private destroyed = false;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(private readonly options: E2BSandboxOptions) {
    this.workspace = realpathOrSelf(options.workspace);
    if (!statSync(this.workspace, { throwIfNoEntry: false })?.isDirectory())
      throw new Error(`sandbox workspace is not a directory: ${options.workspace}`);
    this.id = options.id ?? `e2b-${randomUUID().slice(0, 8)}`;
    const o = options.e2b ?? {};
    this.conn = resolveE2BConnection(o);
    this.ttlMs = o.ttlMs ?? DEFAULT_E2B_TTL_MS;
    this.requestTimeoutMs = o.requestTimeoutMs ?? 30_000;
    this.remoteWs = o.remoteWorkspace ?? REMOTE_WORKSPACE;
    this.files = new FileApi(this.workspace);
    this.sync = new WorkspaceSync(
      this.workspace,
      this.files,
      options.protectedPaths ?? DEFAULT_PROTECTED_PATHS,
      {
        ...DEFAULT_SYNC_LIMITS,
        ...(o.sync ?? {}),
      },
    );
  }

  /** Creates the remote sandbox and copies the workspace into it. */
  static async create(options: E2BSandboxOptions): Promise<E2BSandbox> {
    const sb = new E2BSandbox(options);
    return startOrDestroy(sb, () => sb.start());
  }

  /** The remote sandbox's id on the service (empty until it started). */
  get remoteId(): string {
    return this.remote?.sandboxId ?? "";
  }

  private where() {
    return { apiUrl: this.conn.apiUrl, ...(this.remote ? { sandboxId: this.remote.sandboxId } : {}) };
  }

  private async start(): Promise<void> {
    const { Sandbox } = await loadSdk();
    const c = this.conn;
    try {
      this.remote = await Sandbox.create(c.template, {
        apiKey: c.apiKey,
        apiUrl: c.apiUrl,
        ...(c.sandboxUrl ? { sandboxUrl: c.sandboxUrl } : {}),
        ...(c.domain ? { domain: c.domain } : {}),
        timeoutMs: this.ttlMs,
        requestTimeoutMs: this.requestTimeoutMs,
        metadata: { "hands.session": this.id },
        envs: { ...(this.options.env ?? {}) },
        allowInternetAccess: this.options.network === "host",
      });
    } catch (e) {
      throw e2bError(e, this.where());
    }
    this.sync.reset();
    this.remoteKnown = false;
    // Extend the timeout while this process lives; if it dies the service ends the sandbox.
    const beat = Math.max(1000, Math.floor(this.ttlMs / 4));
    this.heartbeat = setInterval(() => void this.beat(), beat);
    this.heartbeat.unref();
    try {
      await this.push();
    } catch (e) {
      throw await this.failed(e, "could not copy the workspace into the new sandbox");
    }
  }

  private async beat(): Promise<void> {
    const r = this.remote;
    if (!r) return;
    try {
      await r.setTimeout(this.ttlMs, { requestTimeoutMs: this.requestTimeoutMs });
    } catch (e) {
      if (isSandboxGone(e) && this.remote === r) this.forget(describeE2BError(e, this.where()));
    }
  }

  /** The remote sandbox is gone: the next command starts another. */
  private forget(why: string): void {
    this.lost = why;
    this.remote = undefined;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  private get box(): SdkSandbox {
    if (!this.remote) throw new Error("the E2B sandbox is not running");
    return this.remote;
  }

  /**
   * Runs a helper command of this backend (moving `bytes`); its result must be exit 0. What it
   * prints is bounded (a process in the sandbox could write into its output): past the bound the
   * command is dropped and this fails.
   */
  private async helper(cmd: string, bytes = 0): Promise<string> {
    const bound = new OutputBound(HELPER_OUTPUT_LIMIT);
    const handle = await this.box.commands.run(cmd, {
      background: true,
      requestTimeoutMs: this.requestTimeoutMs,
      timeoutMs: this.transferTimeout(bytes) * 2,
      onStdout: bound.count,
      onStderr: bound.count,
    });
    const r = await bound.watch(handle);
    return r.stdout;
  }

  /** Time a transfer of `bytes` may take: the request timeout plus 1 s per MiB. */
  private transferTimeout(bytes: number): number {
    return this.requestTimeoutMs + Math.ceil(bytes / 1024);
  }

  /** Copies what changed on the host into the sandbox. */
  private async push(): Promise<void> {
    const { now, changes, tar } = await this.sync.planPush();
    if (!tar && changes.deleted.length === 0 && this.remoteKnown) return;
    const tag = randomBytes(6).toString("hex");
    const tarPath = tar ? `/tmp/.hands-push-${tag}.tar` : undefined;
    const delPath = changes.deleted.length > 0 ? `/tmp/.hands-del-${tag}` : undefined;
    if (tarPath && tar)
      await this.box.files.write(tarPath, toArrayBuffer(tar), {
        requestTimeoutMs: this.transferTimeout(tar.length),
      });
    if (delPath)
      await this.box.files.write(delPath, toArrayBuffer(nulList(changes.deleted)), {
        requestTimeoutMs: this.requestTimeoutMs,
      });
    const listing = await this.helper(pushCommand(this.remoteWs, tarPath, delPath), tar?.length ?? 0);
    this.sync.pushed(now, parseManifest(listing));
    this.remoteKnown = true;
  }

  /** Copies what the command changed back to the host; returns lines for its result. */
  private async pull(): Promise<string[]> {
    const remoteNow = parseManifest(await this.helper(manifestCommand(this.remoteWs)));
    const plan = await this.sync.planPull(remoteNow);
    let tar: Uint8Array | undefined;
    if (plan.fetch.length > 0) {
      const tag = randomBytes(6).toString("hex");
      const list = `/tmp/.hands-pull-${tag}`;
      const out = `/tmp/.hands-pull-${tag}.tar`;
      await this.box.files.write(list, toArrayBuffer(nulList(plan.fetch)), {
        requestTimeoutMs: this.requestTimeoutMs,
      });
      const bytes = plan.fetch.reduce((n, p) => n + (remoteNow.get(p)?.size ?? 0), 0);
      await this.helper(packCommand(this.remoteWs, list, out), bytes);
      // The archive may have grown since the listing (a process left running): read it bounded.
      const stream = await this.box.files.read(out, {
        format: "stream",
        requestTimeoutMs: this.transferTimeout(bytes),
      });
      // Per entry a header and padding; at the end tar rounds up to 10 KiB records.
      tar = await readBounded(stream, bytes + plan.fetch.length * 1536 + 20_480);
      await this.helper(`rm -f '${out}'`).catch(() => "");
    }
    return [...plan.notes, ...(await this.sync.applyPull(plan, tar, remoteNow))];
  }

  /** Commands run one at a time: each is bracketed by a sync of the workspace. */
  exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const run = this.queue.then(() => this.run(command, options));
    this.queue = run.catch(() => {});
    return run;
  }

  private async run(command: string, options: ExecOptions): Promise<ExecResult> {
    if (this.destroyed) throw new Error(`sandbox ${this.id} has been destroyed`);
    this.lastUsedAt = Date.now();
    const start = performance.now();
    if (options.signal?.aborted) return emptyResult({ aborted: true });
    const notes: string[] = [];
    if (!this.remote) {
      const why = this.lost;
      this.lost = undefined;
      await this.start();
      if (why)
        notes.push(
          `[the previous E2B sandbox was gone (${why}); this command ran in a new one, copied from the host workspace — processes and unsynced changes of the old one are lost]`,
        );
    } else {
      try {
        await this.push();
      } catch (e) {
        throw await this.failed(e, "could not copy the workspace into the sandbox");
      }
    }
    const r = await this.runWrapped(command, options);
    if (this.remote) {
      try {
        notes.push(...(await this.pull()));
      } catch (e) {
        notes.push(`[${(await this.failed(e, "the command's changes were not copied back")).message}]`);
      }
    }
    if (notes.length > 0) r.stderr += `${r.stderr ? "\n" : ""}${notes.join("\n")}`;
    r.durationMs = Math.round(performance.now() - start);
    this.lastUsedAt = Date.now();
    return r;
  }

  /**
   * A described error for `what`. When the sandbox turns out to be gone (the error says so, or
   * the service no longer runs it) the message says that, and the next command starts another.
   */
  private async failed(e: unknown, what: string): Promise<Error> {
    const box = this.remote;
    const msg = describeE2BError(e, this.where());
    const gone =
      isSandboxGone(e) ||
      // isRunning fails when the service does not answer: no proof that the sandbox is gone.
      (box ? (await box.isRunning({ requestTimeoutMs: 5000 }).catch(() => true)) === false : true);
    if (!gone || !box) return new Error(`${what}: ${msg}`, { cause: e });
    this.forget(msg);
    return new Error(
      `${what}: the E2B sandbox ${box.sandboxId} ended (killed, or its timeout passed) — files changed in it since the last command are lost; the next command starts a new sandbox from the host workspace (${msg})`,
      { cause: e },
    );
  }

  private async runWrapped(command: string, options: ExecOptions): Promise<ExecResult> {
    const box = this.box;
    const kept = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    const headBytes = Math.ceil(kept / 2);
    const token = `__HANDS_${randomBytes(12).toString("hex")}__`;
    const dir = `/tmp/.hands-exec-${token.slice(8, 20)}`;
    const cwd = options.cwd ? await this.files.sandboxCwd(options.cwd, this.remoteWs) : this.remoteWs;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    let handle: CommandHandle;
    // The wrapper prints at most two capped streams; more means a process writes into its pipe.
    // Past the bound the wrapper and everything it started are killed (awaited before we answer).
    let treeKilled: Promise<unknown> | undefined;
    const bound = new OutputBound(2 * kept + 64 * 1024, (h) => {
      treeKilled = box.commands
        .run(killTreeCommand(h.pid), { requestTimeoutMs: this.requestTimeoutMs })
        .catch(() => {});
    });
    try {
      if (options.stdin !== undefined)
        await box.files.write(`${dir}/in`, options.stdin, { requestTimeoutMs: this.requestTimeoutMs });
      handle = await box.commands.run(
        execScript({
          token,
          command,
          dir,
          cwd,
          headBytes,
          tailBytes: kept - headBytes,
          hasStdin: options.stdin !== undefined,
          keepBackground: options.keepBackground === true,
        }),
        {
          background: true,
          onStdout: bound.count,
          onStderr: bound.count,
          ...(options.env ? { envs: options.env } : {}),
          requestTimeoutMs: this.requestTimeoutMs,
          timeoutMs: (Number.isFinite(timeoutMs) ? timeoutMs : 24 * 3600_000) + STOP_GRACE_MS + 30_000,
        },
      );
    } catch (e) {
      throw await this.failed(e, "could not start the command in the sandbox");
    }

    let timedOut = false;
    let aborted = false;
    let stopSent = false;
    const stop = () => {
      if (stopSent) return;
      stopSent = true;
      // SIGTERM to the wrapper: it stops the command's whole group and still reports its output.
      void box.commands
        .run(`kill -TERM ${handle.pid}`, { requestTimeoutMs: this.requestTimeoutMs })
        .catch(() => handle.kill().catch(() => false));
    };
    const onAbort = () => {
      if (timedOut) return;
      aborted = true;
      stop();
    };
    const timers: NodeJS.Timeout[] = [];
    let giveUp: (() => void) | undefined;
    const gaveUp = new Promise<"gave-up">((resolve) => {
      giveUp = () => resolve("gave-up");
    });
    const afterStop = () =>
      timers.push(
        setTimeout(() => {
          void handle.kill().catch(() => false);
          giveUp?.();
        }, STOP_GRACE_MS),
      );
    if (Number.isFinite(timeoutMs) && timeoutMs > 0)
      timers.push(
        setTimeout(() => {
          if (aborted) return;
          timedOut = true;
          stop();
          afterStop();
        }, timeoutMs),
      );
    const abortListener = () => {
      onAbort();
      afterStop();
    };
    options.signal?.addEventListener("abort", abortListener, { once: true });
    let out: { stdout: string; stderr: string } | "gave-up";
    let failure: unknown;
    try {
      out = await Promise.race([
        bound.watch(handle).catch((e: unknown) => {
          if ((e as Error)?.name === "CommandExitError") {
            const x = e as { stdout: string; stderr: string };
            return { stdout: x.stdout, stderr: x.stderr };
          }
          throw e;
        }),
        gaveUp,
      ]);
    } catch (e) {
      failure = e;
      out = "gave-up";
    } finally {
      for (const t of timers) clearTimeout(t);
      options.signal?.removeEventListener("abort", abortListener);
    }
    await treeKilled;
    // The stream broke: a sandbox killed mid-command (the SDK's TimeoutError, as E2B cuts the
    // stream), or the connection; failed() says which from the error and the sandbox's state.
    if (failure !== undefined) throw await this.failed(failure, "the command did not finish");
    const parsed = out === "gave-up" ? undefined : parseExecOutput(out.stdout, out.stderr, token, kept);
    if (!parsed && !timedOut && !aborted) {
      // The wrapper itself was killed: most often because the whole sandbox was.
      const e = await this.failed(
        new Error("the command's wrapper was killed"),
        "the command did not finish",
      );
      if (!this.remote) throw e;
    }
    if (!parsed) {
      return emptyResult({
        timedOut,
        aborted,
        stderr:
          timedOut || aborted ? "" : "[the command's wrapper in the sandbox was killed; its output is lost]",
      });
    }
    const killed = timedOut || aborted;
    const signal =
      parsed.exitCode > 128 && parsed.exitCode < 128 + 65 ? signalName(parsed.exitCode - 128) : null;
    if (options.onStdout && parsed.stdout) options.onStdout(parsed.stdout);
    if (options.onStderr && parsed.stderr) options.onStderr(parsed.stderr);
    return {
      stdout: parsed.stdout,
      stderr: parsed.stderr,
      exitCode: killed ? null : parsed.exitCode,
      signal: killed ? (signal ?? "SIGTERM") : signal,
      timedOut,
      aborted,
      truncated: parsed.truncated,
      durationMs: 0,
      stdoutBytes: parsed.stdoutBytes,
      stderrBytes: parsed.stderrBytes,
    };
  }

  readFile(path: string): Promise<Buffer> {
    if (this.destroyed) throw new Error(`sandbox ${this.id} has been destroyed`);
    return this.files.readFile(path);
  }

  /** Writes on the host; the next command's sync copies it into the sandbox. */
  writeFile(path: string, data: string | Uint8Array): Promise<void> {
    if (this.destroyed) throw new Error(`sandbox ${this.id} has been destroyed`);
    return this.files.writeFile(path, data);
  }

  /** Kills the remote sandbox (the service would end it after its timeout anyway). */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    const r = this.remote;
    this.remote = undefined;
    if (r) await r.kill({ requestTimeoutMs: this.requestTimeoutMs }).catch(() => false);
  }
}

/** Most a helper command may print (a listing of 100,000 entries is far below). */
const HELPER_OUTPUT_LIMIT = 64 * 1024 * 1024;

/**
 * Counts what a command sends (the SDK keeps all of it in memory) and drops the command once it
 * sent more than `limit` characters: `watch` then fails instead of waiting for the rest.
 */
class OutputBound {
  private seen = 0;
  private handle: CommandHandle | undefined;
  private fail: ((e: Error) => void) | undefined;
  private over = false;

  constructor(
    private readonly limit: number,
    /** How the command is stopped (default: SIGKILL through the SDK). */
    private readonly stop: (h: CommandHandle) => void = (h) => void h.kill().catch(() => false),
  ) {}

  readonly count = (chunk: string): void => {
    this.seen += chunk.length;
    if (this.seen > this.limit && !this.over) {
      this.over = true;
      this.drop();
    }
  };

  private drop(): void {
    if (!this.handle || !this.fail) return;
    const h = this.handle;
    this.stop(h);
    void h.disconnect().catch(() => {});
    this.fail(
      new Error(`a process in the sandbox sent more than ${this.limit} characters of output; it was stopped`),
    );
  }

  /** The command's result, or the error once it sent too much. */
  watch(handle: CommandHandle): ReturnType<CommandHandle["wait"]> {
    this.handle = handle;
    const dropped = new Promise<never>((_, reject) => {
      this.fail = reject;
    });
    if (this.over) this.drop();
    return Promise.race([handle.wait(), dropped]);
  }
}

/** Reads a stream into memory, failing once it is longer than `limit` bytes. */
async function readBounded(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw new Error(`the sandbox's archive of changed files grew past ${limit} bytes while it was read`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

function toArrayBuffer(b: Buffer): ArrayBuffer {
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}

function emptyResult(o: { timedOut?: boolean; aborted?: boolean; stderr?: string }): ExecResult {
  return {
    stdout: "",
    stderr: o.stderr ?? "",
    exitCode: null,
    signal: o.timedOut || o.aborted ? "SIGKILL" : null,
    timedOut: o.timedOut ?? false,
    aborted: o.aborted ?? false,
    truncated: false,
    durationMs: 0,
  };
}
