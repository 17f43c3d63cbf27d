// The Sandbox interface: where the agent's commands run. Backends: local (no isolation),
// bwrap, docker and e2b (a remote E2B-protocol service). File paths given to a sandbox are relative to its workspace.

export type SandboxKind = "local" | "bwrap" | "docker" | "e2b";

export interface ExecOptions {
  /** Working directory relative to the workspace root (default: the root). */
  cwd?: string;
  /** Extra environment variables for this command. */
  env?: Record<string, string>;
  /** Kill the whole process tree after this many milliseconds (default 60,000). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Bytes kept per stream (head and tail); the middle is dropped and `truncated` set. */
  maxOutputBytes?: number;
  stdin?: string;
  /**
   * bwrap/docker: keep the processes this command leaves running (a server started with `&`).
   * Otherwise they are killed before the next command. Either way their later output reaches
   * no result: send it to a file.
   */
  keepBackground?: boolean;
  onStdout?: (chunk: string) => void;
  onStderr?: (chunk: string) => void;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  /** null when the process was killed by a signal. */
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  truncated: boolean;
  durationMs: number;
  /** Total bytes the command wrote to stdout (including any dropped middle). */
  stdoutBytes?: number;
  /** Total bytes the command wrote to stderr (including any dropped middle). */
  stderrBytes?: number;
  /** bwrap/docker: processes the command left running (PIDs inside the sandbox). */
  background?: Array<{ pid: number; name: string }>;
  /** How many more were left running than `background` lists. */
  backgroundMore?: number;
  /** True when the command was stopped for adding more to the workspace than its quota. */
  quotaExceeded?: boolean;
  /** True when the kernel killed the command for exceeding the sandbox's memory limit. */
  oomKilled?: boolean;
  /** True when the sandbox's PID limit refused a fork during the command (the cgroup's pids events). */
  pidsLimited?: boolean;
}

export interface Sandbox {
  readonly id: string;
  readonly kind: SandboxKind;
  /** Host path of the workspace this sandbox works in. */
  readonly workspace: string;
  /** False for `local`: commands run as the user, with the user's rights. */
  readonly isolated: boolean;
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  readFile(path: string): Promise<Buffer>;
  writeFile(path: string, data: string | Uint8Array): Promise<void>;
  destroy(): Promise<void>;
  /**
   * Stops (true) or resumes (false) every process of the sandbox where it stands, memory kept
   * (bwrap: the cgroup freezer; docker: `pause`). Resolves false when this sandbox cannot.
   */
  freeze?(on: boolean): Promise<boolean>;
}

/**
 * The sandbox's user as its programs know it (`whoami`, `~`, /etc/passwd): its name, its home,
 * and the host folder mounted read-write as that home. The caller makes sure `homeFolder` is a
 * real folder (no symlink) while nothing of the sandbox runs.
 */
export interface SandboxAccount {
  name: string;
  /** An absolute path under /home. */
  home: string;
  homeFolder: string;
}

/** A name and home that are safe in a passwd line and as a mount point. */
export function checkAccount(a: SandboxAccount): void {
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(a.name)) throw new Error(`invalid sandbox user name: ${a.name}`);
  if (!/^\/home\/[A-Za-z0-9._-]+$/.test(a.home) || a.home.includes("/.."))
    throw new Error(`a sandbox user's home must be /home/NAME: ${a.home}`);
}

export interface SandboxOptions {
  kind: SandboxKind;
  /** Host folder that becomes the sandbox's workspace. */
  workspace: string;
  /** Extra environment for every command (after scrubbing). */
  env?: Record<string, string>;
  id?: string;
  /** bwrap/docker: "none" (default), "host", or "proxy" (allow-list proxy, see proxySocket). */
  network?: "none" | "host" | "proxy";
  /** Host path of the allow-list proxy's Unix socket, mounted at /run/hands-proxy.sock. */
  proxySocket?: string;
  /** Environment that points tools at the proxy (HTTP_PROXY, …). */
  proxyEnv?: Record<string, string>;
  limits?: { memoryBytes?: number; pids?: number; cpus?: number };
  /** e2b: the service, template and sync limits (connection from E2B_* variables otherwise). */
  e2b?: import("./e2b.js").E2BOptions;
  /** docker: image tag (default: the offline-built hands-sandbox image). */
  image?: string;
  /** docker: OCI runtime, e.g. "runsc". */
  runtime?: string;
  /**
   * bwrap/docker: workspace paths mounted read-only, whether or not they exist (default
   * `.hands`, `AGENTS.md`, `CLAUDE.md`: Hands' settings and the agent's instructions).
   */
  protectedPaths?: readonly string[];
  /**
   * bwrap/docker: the most disk space a session may add to its workspace (default 1 GiB,
   * DEFAULT_WORKSPACE_QUOTA_BYTES; 0 turns the check off). A command going over is stopped.
   */
  workspaceQuotaBytes?: number;
  /** bwrap/docker: the sandbox's user and home (default `hands`, a private /home/hands). */
  account?: SandboxAccount;
  /**
   * bwrap: the root folder stays writable (a tmpfs whose pages count against the sandbox's
   * memory limit), so commands may create folders at `/` as on a VM. Default: read-only.
   */
  writableRoot?: boolean;
  /**
   * bwrap/docker: scripts installed read-only on the sandbox's PATH (name → text), e.g. a
   * `sudo` for templates that expect one. They run as the sandbox's user like anything else.
   */
  programs?: Record<string, string>;
  /** bwrap: a template's root filesystem (template.ts) instead of the host's /usr. */
  rootfs?: string;
}

/** Where `programs` are: first on bwrap's PATH; docker's login shells reset PATH, so there /usr/local/bin. */
export const PROGRAMS_DIR = "/run/hands/bin";

/** A program name that is one plain file name. */
export function checkProgramName(name: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) throw new Error(`invalid program name: ${name}`);
}

/** Optional abilities of isolating backends (bwrap, docker). */
export interface SessionSandbox extends Sandbox {
  readonly createdAt: number;
  lastUsedAt: number;
  /** A folder of the workspace as a tar archive. */
  download(path?: string): Promise<Buffer>;
  /** Unpacks a tar archive into a folder of the workspace (confined). */
  upload(path: string, tar: Uint8Array): Promise<void>;
  snapshot(): Promise<Buffer>;
  restore(snapshot: Uint8Array): Promise<void>;
}
