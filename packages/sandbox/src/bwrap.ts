// The `bwrap` backend: a persistent shell inside bubblewrap namespaces (PID, mount, IPC, UTS,
// network, user), limited by a cgroup of its own and by rlimits. The workspace is the host
// folder bind-mounted at /workspace, so the agent's file tools and the commands see the same
// files; everything else the sandbox sees of the host is read-only system folders.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { chown } from "node:fs/promises";
import { performance } from "node:perf_hooks";
import type { Writable } from "node:stream";
import {
  type BwrapArgsOptions,
  bwrapArgs,
  type NetworkMode,
  programFiles,
  SANDBOX_PATH,
  SECCOMP_FD,
  SESSION_SHELL,
  sandboxEnv,
  seccompProgramFile,
  WORKSPACE_PATH,
} from "./bwrap-args.js";
import { Cgroup, DEFAULT_LIMITS, detectCgroups, type Limits } from "./cgroups.js";
import { realpathOrSelf } from "./confine.js";
import { FileBackedSandbox } from "./file-backed.js";
import { FileApi } from "./files.js";
import { releaseHostUser, sandboxHostUser } from "./host-user.js";
import { type LongLivedOptions, type LongLivedProcess, longLivedChild } from "./long-lived.js";
import { DEFAULT_MAX_OUTPUT_BYTES, OutputBuffer } from "./output-buffer.js";
import { findDescendantByNsPid, processState } from "./proc.js";
import { ProtectedPathsGuard } from "./protected-paths.js";
import { FORWARDER, PROXY_ENV } from "./proxy.js";
import { checkBwrap } from "./sandbox-kind.js";
import { SESSION_COMMAND, SESSION_ENV, SESSION_SCRIPT } from "./session-script.js";
import { endedNote, ShellSession } from "./shell-session.js";
import { DEFAULT_TIMEOUT_MS } from "./timeouts.js";
import {
  type ExecOptions,
  type ExecResult,
  PROGRAMS_DIR,
  type Sandbox,
  type SandboxAccount,
  type SandboxKind,
} from "./types.js";
import { DEFAULT_WORKSPACE_QUOTA_BYTES, execWithQuota, WorkspaceQuota } from "./workspace-quota.js";

export const DEFAULT_TMP_BYTES = 256 * 1024 * 1024;
export const DEFAULT_FILE_SIZE_BYTES = 512 * 1024 * 1024;
/** Size of /dev/shm (as Docker's default): shared memory counts against the memory limit too. */
export const SHM_BYTES = 64 * 1024 * 1024;

export interface BwrapSandboxOptions {
  workspace: string;
  id?: string;
  env?: Record<string, string>;
  network?: NetworkMode;
  proxySocket?: string;
  limits?: Partial<Limits>;
  /** Size of the private /tmp and home (bytes each). */
  tmpBytes?: number;
  /** Largest file a command may write (RLIMIT_FSIZE). */
  fileSizeBytes?: number;
  /** Extra environment for every command (proxy settings, …). */
  proxyEnv?: Record<string, string>;
  /** Workspace paths mounted read-only (default DEFAULT_PROTECTED_PATHS). */
  protectedPaths?: readonly string[];
  /** Most disk space a session may add to the workspace (0: no check). */
  workspaceQuotaBytes?: number;
  /** The sandbox's user and home (types.ts SandboxAccount). */
  account?: SandboxAccount;
  /** The root folder stays a writable tmpfs (charged to the memory limit). */
  writableRoot?: boolean;
  /** Scripts on the sandbox's PATH (types.ts SandboxOptions.programs). */
  programs?: Record<string, string>;
  /** A template's root filesystem (template.ts) instead of the host's system folders. */
  rootfs?: string;
}

/** tmpfs pages count against the memory limit: keep scratch space well below it. */
export function defaultTmpBytes(limits: Limits): number {
  return Math.min(DEFAULT_TMP_BYTES, Math.floor(limits.memoryBytes / 4));
}

/**
 * A session's cgroup is named at random, not after the sandbox: cgroup names are world-readable
 * (/proc/PID/cgroup, /sys/fs/cgroup) and a service's sandbox id must not be.
 */
function cgroupName(): string {
  return `s-${randomUUID().slice(0, 13)}`;
}

/** The descriptor bubblewrap reads its arguments from (NUL-separated, see `bwrap --args`). */
export const ARGS_FD = 11;

/**
 * Shell run before bubblewrap: joins the cgroup and sets rlimits that everything inherits, and
 * closes every descriptor but the three standard ones and bubblewrap's two (its arguments and
 * the seccomp program, which bubblewrap closes once read): whatever Hands' own parent left
 * open must not reach sandboxed commands.
 */
const LAUNCHER = `for f in $HANDS_CGROUP_PROCS; do echo $$ > "$f" || exit 97; done
for f in /proc/self/fd/*; do f=\${f##*/}; case $f in 0|1|2|${ARGS_FD}) ;; *) [ -e "/proc/self/fd/$f" ] && exec {f}>&- ;; esac; done
if [ -n "$HANDS_SECCOMP" ]; then exec ${SECCOMP_FD}< "$HANDS_SECCOMP" || exit 96; fi
ulimit -c 0; ulimit -f "$HANDS_FSIZE_KB"; ulimit -n 4096
exec -c "$@"`;

/**
 * Starts bubblewrap with `args`, then `command` inside. Only the (constant) command is on the
 * command line: the arguments — host paths naming the workspace, the environment, the session
 * script — travel through a pipe (`--args`), so no other user sees them in `ps`.
 */
async function launch(
  cg: Cgroup | undefined,
  fileSizeBytes: number,
  args: string[],
  command: string[],
  workspace: string,
  holder: object,
): Promise<ChildProcess> {
  // Never host root: see host-user.ts.
  const user = sandboxHostUser(workspace, holder);
  // The launcher joins the cgroup itself: let that user write the group's process lists.
  if (user && cg) await Promise.all(cg.procFiles.map((f) => chown(f, user.uid, user.gid)));
  const stdio: Array<"pipe" | "ignore"> = ["pipe", "pipe", "pipe"];
  while (stdio.length < ARGS_FD) stdio.push("ignore");
  stdio.push("pipe");
  const child = spawn(
    "/bin/bash",
    ["--norc", "--noprofile", "-c", LAUNCHER, "hands-launch", "bwrap", "--args", String(ARGS_FD), ...command],
    {
      ...(user ?? {}),
      // bubblewrap's own environment is visible to the sandbox as /proc/1/environ: keep it bare.
      env: {
        PATH: "/usr/sbin:/usr/bin:/sbin:/bin",
        HANDS_CGROUP_PROCS: cg ? cg.procFiles.join(" ") : "",
        HANDS_FSIZE_KB: String(Math.max(1, Math.floor(fileSizeBytes / 1024))),
        HANDS_SECCOMP: seccompProgramFile() ?? "",
      },
      stdio,
    },
  );
  const argsPipe = (child.stdio as unknown as Writable[])[ARGS_FD] as Writable;
  // bubblewrap that fails before it reads its arguments closes the pipe: its stderr says why.
  argsPipe.on("error", () => {});
  argsPipe.end(Buffer.from(args.map((a) => `${a}\0`).join("")));
  return child;
}

export class BwrapSandbox extends FileBackedSandbox implements Sandbox {
  readonly id: string;
  readonly kind: SandboxKind = "bwrap";
  readonly workspace: string;
  readonly isolated = true;
  readonly limits: Limits;
  readonly network: NetworkMode;
  readonly createdAt = Date.now();
  lastUsedAt = Date.now();
  protected readonly files: FileApi;
  private readonly argsOptions: BwrapArgsOptions;
  private readonly fileSizeBytes: number;
  private cgroup: Cgroup | undefined;
  private child: ChildProcess | undefined;
  private session: ShellSession | undefined;
  private shellHostPid: number | undefined;
  private readonly protectedPaths: ProtectedPathsGuard;
  private readonly quota: WorkspaceQuota | undefined;

  private constructor(options: BwrapSandboxOptions) {
    super();
    this.workspace = realpathOrSelf(options.workspace);
    if (!statSync(this.workspace, { throwIfNoEntry: false })?.isDirectory())
      throw new Error(`sandbox workspace is not a directory: ${options.workspace}`);
    this.id = options.id ?? `bwrap-${randomUUID().slice(0, 8)}`;
    this.limits = { ...DEFAULT_LIMITS, ...(options.limits ?? {}) };
    this.network = options.network ?? "none";
    this.fileSizeBytes = options.fileSizeBytes ?? DEFAULT_FILE_SIZE_BYTES;
    this.files = new FileApi(this.workspace);
    this.protectedPaths = new ProtectedPathsGuard(this.workspace, options.protectedPaths);
    const quota = options.workspaceQuotaBytes ?? DEFAULT_WORKSPACE_QUOTA_BYTES;
    this.quota = quota > 0 ? new WorkspaceQuota(this.workspace, quota) : undefined;
    this.argsOptions = {
      workspace: this.workspace,
      network: this.network,
      tmpBytes: options.tmpBytes ?? defaultTmpBytes(this.limits),
      env: sandboxEnv({
        ...networkEnv(this.network, options.proxyEnv),
        ...(options.programs ? { PATH: `${PROGRAMS_DIR}:${SANDBOX_PATH}` } : {}),
        ...(options.env ?? {}),
      }),
      ...(options.proxySocket ? { proxySocket: options.proxySocket } : {}),
      ...(options.account ? { account: options.account } : {}),
      ...(options.programs ? { programs: programFiles(options.programs) } : {}),
      ...(options.writableRoot ? { writableRoot: true } : {}),
      ...(options.rootfs ? { rootfs: options.rootfs } : {}),
    };
  }

  /** Starts a session: cgroup, bubblewrap, the session shell. */
  static async create(options: BwrapSandboxOptions): Promise<BwrapSandbox> {
    const check = checkBwrap();
    if (!check.ok) throw new Error(check.reason);
    const sb = new BwrapSandbox(options);
    try {
      await sb.start();
    } catch (e) {
      releaseHostUser(sb.workspace, sb);
      throw e;
    }
    return sb;
  }

  /** The folder name of the session's cgroup (random, not the id), when it has one. */
  get cgroupName(): string | undefined {
    return this.cgroup?.dirs[0]?.split("/").pop();
  }

  /** Every process of the session stopped or resumed at once (its cgroup's freezer). */
  async freeze(on: boolean): Promise<boolean> {
    return this.cgroup ? this.cgroup.freeze(on) : false;
  }

  /** Whether limits are enforced by a cgroup (false: rlimits only). */
  get cgroupLimits(): boolean {
    return this.cgroup !== undefined;
  }

  private async start(): Promise<void> {
    if (!this.cgroup && detectCgroups() !== "none")
      this.cgroup = await Cgroup.create(cgroupName(), this.limits);
    const readOnly = this.protectedPaths.prepare();
    const child = await launch(
      this.cgroup,
      this.fileSizeBytes,
      [...bwrapArgs({ ...this.argsOptions, readOnly }), "--setenv", SESSION_ENV, SESSION_SCRIPT],
      [SESSION_SHELL, ...SESSION_COMMAND],
      this.workspace,
      this,
    );
    this.child = child;
    this.shellHostPid = undefined;
    let startErr = "";
    const collect = (c: Buffer) => {
      if (startErr.length < 4000) startErr += c.toString("utf8");
    };
    child.stderr?.on("data", collect);
    const session = new ShellSession({
      stdin: child.stdin as NonNullable<typeof child.stdin>,
      stdout: child.stdout as NonNullable<typeof child.stdout>,
      stderr: child.stderr as NonNullable<typeof child.stderr>,
      interrupt: async (shellPid) => {
        if (child.pid === undefined) return;
        this.shellHostPid ??= findDescendantByNsPid(child.pid, shellPid);
        if (this.shellHostPid) process.kill(this.shellHostPid, "SIGUSR1");
      },
      stopped: () => (this.shellHostPid ? processState(this.shellHostPid) === "T" : undefined),
      kill: () => {
        if (this.shellHostPid) process.kill(this.shellHostPid, "SIGKILL");
      },
    });
    this.session = session;
    try {
      const shellPid = await session.ready;
      if (child.pid !== undefined) this.shellHostPid = findDescendantByNsPid(child.pid, shellPid);
    } catch (e) {
      child.kill("SIGKILL");
      throw new Error(`bubblewrap sandbox did not start: ${startErr.trim() || (e as Error).message}`);
    } finally {
      child.stderr?.off("data", collect);
    }
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    this.assertAlive();
    this.lastUsedAt = Date.now();
    // A protected path replaced on the host loses its read-only mount: start afresh.
    const remount = this.session?.alive === true && this.protectedPaths.changed();
    const ended = this.session && !this.session.alive ? endedNote(this.session) : undefined;
    if (!this.session?.alive || remount) await this.restart();
    const session = this.session as ShellSession;
    const cwd = options.cwd ? await this.files.sandboxCwd(options.cwd, WORKSPACE_PATH) : undefined;
    const oomBefore = this.cgroup ? this.cgroup.oomKillsNow() : 0;
    const pidsBefore = this.cgroup ? this.cgroup.pidsLimitHitsNow() : 0;
    const r = await execWithQuota(this.quota, { ...options, ...(cwd ? { cwd } : {}) }, (o) =>
      session.exec(command, o),
    );
    if (this.cgroup && (r.exitCode === 137 || r.exitCode === null) && this.cgroup.oomKillsNow() > oomBefore)
      markOom(r, this.limits);
    if (this.cgroup && r.exitCode !== 0 && this.cgroup.pidsLimitHitsNow() > pidsBefore) r.pidsLimited = true;
    this.protectedPaths.finish(r, remount);
    if (ended) r.stderr += `${r.stderr ? "\n" : ""}${ended}`;
    this.lastUsedAt = Date.now();
    return r;
  }

  /**
   * A process that keeps running beside the session shell (long-lived.ts): a second bubblewrap
   * with the same mounts, user and environment, in the same cgroup (so within the same limits,
   * and removed with it).
   */
  async spawnLongLived(argv: string[], options: LongLivedOptions = {}): Promise<LongLivedProcess> {
    this.assertAlive();
    if (!this.session?.alive) await this.restart();
    const extra: string[] = [];
    for (const b of options.readOnlyBinds ?? []) extra.push("--ro-bind", b.host, b.path);
    for (const [k, v] of Object.entries(options.env ?? {})) extra.push("--setenv", k, v);
    const readOnly = this.protectedPaths.prepare();
    const args = [...bwrapArgs({ ...this.argsOptions, readOnly }), ...extra];
    const child = await launch(this.cgroup, this.fileSizeBytes, args, argv, this.workspace, this);
    return longLivedChild(child, WORKSPACE_PATH);
  }

  /** The shell died (killed, or a command ended it): start a fresh one (state is lost). */
  private async restart(): Promise<void> {
    this.child?.kill("SIGKILL");
    if (this.cgroup) await this.cgroup.remove();
    this.cgroup = undefined;
    await this.start();
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await exited;
    }
    // --die-with-parent takes the namespace down; the cgroup catches anything that lingers.
    if (this.cgroup) await this.cgroup.remove();
    this.protectedPaths.release();
    releaseHostUser(this.workspace, this);
  }
}

export function markOom(r: ExecResult, limits: Limits): void {
  r.oomKilled = true;
  if (r.exitCode === null) r.signal ??= "SIGKILL";
  r.stderr += `${r.stderr ? "\n" : ""}[killed: out of memory (limit ${Math.round(limits.memoryBytes / 1048576)} MiB)]`;
}

/** How a one-shot command reaches its shell: in the environment (removed at once), not argv. */
const ONCE_ENV = "HANDS_COMMAND";
const ONCE_COMMAND = ["/bin/bash", "-c", `__h_cmd=$${ONCE_ENV}; unset ${ONCE_ENV}; eval "$__h_cmd"`];

/** One command in a fresh bubblewrap sandbox, without a session shell (fastest one-shot). */
export async function runBwrapOnce(
  options: BwrapSandboxOptions,
  command: string,
  execOptions: ExecOptions = {},
): Promise<ExecResult> {
  const check = checkBwrap();
  if (!check.ok) throw new Error(check.reason);
  const workspace = realpathOrSelf(options.workspace);
  const limits = { ...DEFAULT_LIMITS, ...(options.limits ?? {}) };
  const cg = detectCgroups() !== "none" ? await Cgroup.create(cgroupName(), limits) : undefined;
  const start = performance.now();
  const prot = new ProtectedPathsGuard(workspace, options.protectedPaths);
  const readOnly = prot.prepare();
  const maxBytes = execOptions.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const out = new OutputBuffer(maxBytes);
  const err = new OutputBuffer(maxBytes);
  const holder = {};
  const args = bwrapArgs({
    workspace,
    network: options.network ?? "none",
    tmpBytes: options.tmpBytes ?? defaultTmpBytes(limits),
    env: sandboxEnv({
      ...networkEnv(options.network ?? "none", options.proxyEnv),
      ...(options.env ?? {}),
      ...(execOptions.env ?? {}),
    }),
    ...(options.proxySocket ? { proxySocket: options.proxySocket } : {}),
    readOnly,
  });
  const child = await launch(
    cg,
    options.fileSizeBytes ?? DEFAULT_FILE_SIZE_BYTES,
    [...args, "--setenv", ONCE_ENV, command],
    ONCE_COMMAND,
    workspace,
    holder,
  ).catch((e: unknown) => {
    releaseHostUser(workspace, holder);
    throw e;
  });
  child.stdout?.on("data", (c: Buffer) => {
    out.push(c);
    execOptions.onStdout?.(c.toString("utf8"));
  });
  child.stderr?.on("data", (c: Buffer) => {
    err.push(c);
    execOptions.onStderr?.(c.toString("utf8"));
  });
  child.stdin?.on("error", () => {});
  child.stdin?.end(execOptions.stdin ?? "");
  let timedOut = false;
  let aborted = false;
  const timeoutMs = execOptions.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, timeoutMs);
  const onAbort = () => {
    aborted = true;
    child.kill("SIGKILL");
  };
  execOptions.signal?.addEventListener("abort", onAbort, { once: true });
  const [code, sig] = await new Promise<[number | null, NodeJS.Signals | null]>((r) =>
    child.once("close", (c, s) => r([c, s])),
  );
  clearTimeout(timer);
  execOptions.signal?.removeEventListener("abort", onAbort);
  const result: ExecResult = {
    stdout: out.toString(),
    stderr: err.toString(),
    exitCode: code,
    signal: sig ?? (code !== null && code > 128 ? `SIG${code - 128}` : null),
    timedOut,
    aborted,
    truncated: out.truncated || err.truncated,
    durationMs: Math.round(performance.now() - start),
    stdoutBytes: out.totalBytes,
    stderrBytes: err.totalBytes,
  };
  if (cg) {
    if (code === 137 && (await cg.oomKills()) > 0) markOom(result, limits);
    await cg.remove();
  }
  prot.finish(result);
  prot.release();
  releaseHostUser(workspace, holder);
  return result;
}

/** Environment for the allow-list proxy (the forwarder's code and the proxy variables). */
export function networkEnv(network: NetworkMode, extra?: Record<string, string>): Record<string, string> {
  return network === "proxy"
    ? { ...PROXY_ENV, HANDS_FORWARDER: FORWARDER, ...(extra ?? {}) }
    : { ...(extra ?? {}) };
}
