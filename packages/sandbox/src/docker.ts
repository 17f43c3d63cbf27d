// The `docker` backend: one container per session (kept alive by `sleep infinity` under an
// init), the same persistent session shell as bwrap running in one long `exec` whose stdout
// and stderr are demultiplexed, and the workspace bind-mounted at /workspace. dockerode is
// loaded only when this backend is used (it is a large import).
import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { posix } from "node:path";
import { PassThrough } from "node:stream";
import type Dockerode from "dockerode";
import { defaultTmpBytes, markOom, networkEnv, SHM_BYTES } from "./bwrap.js";
import {
  accountEtc,
  type NetworkMode,
  programFiles,
  SESSION_RELAY,
  SESSION_SHELL,
  sandboxEnv,
  WORKSPACE_PATH,
} from "./bwrap-args.js";
import { DEFAULT_LIMITS, eventCount, type Limits, pruneCgroups } from "./cgroups.js";
import { realpathOrSelf } from "./confine.js";
import {
  DOCKER_COPY_BYTES,
  DOCKER_COPY_ROOT,
  type DockerCopies,
  spawnDockerLongLived,
} from "./docker-long-lived.js";
import { FileBackedSandbox } from "./file-backed.js";
import { FileApi } from "./files.js";
import { releaseHostUser, sandboxHostUser } from "./host-user.js";
import { imageTag } from "./image.js";
import type { LongLivedOptions, LongLivedProcess } from "./long-lived.js";
import { bootId, nsPid, ownerGone, processStartTime, processState } from "./proc.js";
import { ProtectedPathsGuard } from "./protected-paths.js";
import { writePrivateFile } from "./runtime-dir.js";
import { dockerSeccompProfile } from "./seccomp.js";
import { SESSION_COMMAND, SESSION_ENV, SESSION_SCRIPT } from "./session-script.js";
import { endedNote, ShellSession } from "./shell-session.js";
import { startOrDestroy } from "./start-or-destroy.js";
import {
  checkAccount,
  type ExecOptions,
  type ExecResult,
  type Sandbox,
  type SandboxAccount,
  type SandboxKind,
} from "./types.js";
import { DEFAULT_WORKSPACE_QUOTA_BYTES, execWithQuota, WorkspaceQuota } from "./workspace-quota.js";

export const LABEL_SESSION = "hands.session";
export const LABEL_CREATED = "hands.created_at";
export const LABEL_OWNER_PID = "hands.owner_pid";
/** The owner's start time and the machine's boot id: a reused PID is not the owner. */
export const LABEL_OWNER_START = "hands.owner_start";
export const LABEL_OWNER_BOOT = "hands.owner_boot";

export interface DockerSandboxOptions {
  workspace: string;
  id?: string;
  env?: Record<string, string>;
  network?: NetworkMode;
  proxySocket?: string;
  proxyEnv?: Record<string, string>;
  limits?: Partial<Limits>;
  image?: string;
  /** An OCI runtime such as "runsc" (gVisor), when installed. */
  runtime?: string;
  tmpBytes?: number;
  fileSizeBytes?: number;
  /** Workspace paths mounted read-only (default DEFAULT_PROTECTED_PATHS). */
  protectedPaths?: readonly string[];
  /** Most disk space a session may add to the workspace (0: no check). */
  workspaceQuotaBytes?: number;
  /** Shared client (one per process is enough). */
  docker?: Dockerode;
  /** The sandbox's user and home (types.ts SandboxAccount): its passwd lines and a bind at its home. */
  account?: SandboxAccount;
  /** Scripts on the sandbox's PATH (types.ts SandboxOptions.programs), in /usr/local/bin. */
  programs?: Record<string, string>;
}

const accountFiles = new Map<string, { passwd: string; group: string }>();

/** passwd/group files naming the container's uid as the account (once per process and uid). */
function accountEtcFiles(a: SandboxAccount, uid: number, gid: number): { passwd: string; group: string } {
  const key = `${a.name}:${a.home}:${uid}:${gid}`;
  let f = accountFiles.get(key);
  if (!f) {
    const lines = accountEtc(a.name, a.home, uid, gid);
    const tag = `${uid}-${gid}-${accountFiles.size}`;
    f = {
      passwd: writePrivateFile(`passwd-${tag}`, lines.passwd),
      group: writePrivateFile(`group-${tag}`, lines.group),
    };
    accountFiles.set(key, f);
  }
  return f;
}

let client: Dockerode | undefined;

/** A Docker Engine client (DOCKER_HOST or the default socket); dockerode loads on first use. */
export async function dockerClient(): Promise<Dockerode> {
  if (client) return client;
  const mod = await import("dockerode");
  client = new mod.default();
  return client;
}

/** Whether a Docker Engine answers, and the reason when not. */
export async function checkDocker(): Promise<{ ok: boolean; reason: string }> {
  try {
    const d = await dockerClient();
    await d.ping();
    return { ok: true, reason: "" };
  } catch (e) {
    return {
      ok: false,
      reason: `no Docker Engine answers (${(e as Error).message}); start dockerd or set DOCKER_HOST`,
    };
  }
}

/** The uid:gid the container runs as: never root (see host-user.ts). */
function containerUser(ws: string, holder: object): { user: string; uid: number; gid: number } {
  const u = sandboxHostUser(ws, holder);
  const st = statSync(ws);
  const uid = u?.uid ?? st.uid;
  const gid = u?.gid ?? st.gid;
  return { user: `${uid}:${gid}`, uid, gid };
}

let reaped = false;

/**
 * Once per process, in the background: containers whose owning process died without
 * destroying them (a killed agent) are removed, and so are empty session cgroups.
 */
function reapAtStartup(): void {
  if (reaped) return;
  reaped = true;
  void reapDeadContainers({}).catch(() => {});
  pruneCgroups();
}

/**
 * Removes containers labelled as Hands sessions whose owner is verifiably gone (see
 * proc.ts ownerGone), or older than `maxAgeMs`; `live` are sessions the caller still uses
 * (then this process's other containers are leftovers too). Returns their session ids.
 */
export async function reapDeadContainers(options: {
  live?: Set<string> | undefined;
  maxAgeMs?: number;
  onReap?: (session: string, what: string) => void;
}): Promise<string[]> {
  const docker = await dockerClient();
  const list = await docker.listContainers({ all: true, filters: { label: [LABEL_SESSION] } });
  const me = { pid: String(process.pid), start: processStartTime(process.pid), boot: bootId() };
  const gone: string[] = [];
  for (const c of list) {
    const session = c.Labels[LABEL_SESSION] ?? "";
    if (options.live?.has(session)) continue;
    const labels = {
      pid: c.Labels[LABEL_OWNER_PID],
      start: c.Labels[LABEL_OWNER_START],
      boot: c.Labels[LABEL_OWNER_BOOT],
    };
    const age = Date.now() - Date.parse(c.Labels[LABEL_CREATED] ?? "");
    // This very process: only the caller knows which of its sessions are live.
    const mine = labels.pid === me.pid && labels.start === me.start && labels.boot === me.boot;
    const orphan = mine ? options.live !== undefined : ownerGone(labels);
    const old = options.maxAgeMs !== undefined && age > options.maxAgeMs;
    if (!orphan && !old) continue;
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => {});
    gone.push(session);
    options.onReap?.(session, `container ${c.Id.slice(0, 12)}`);
  }
  return gone;
}

let profile: string | undefined;

/** The seccomp rules of seccomp.ts as Docker's option (none on an unknown architecture). */
function dockerSeccomp(): string[] {
  profile ??= dockerSeccompProfile() ?? "";
  return profile ? [`seccomp=${profile}`] : [];
}

export class DockerSandbox extends FileBackedSandbox implements Sandbox {
  readonly id: string;
  readonly kind: SandboxKind = "docker";
  readonly workspace: string;
  readonly isolated = true;
  readonly limits: Limits;
  readonly createdAt = Date.now();
  lastUsedAt = Date.now();
  protected readonly files: FileApi;
  private container: Dockerode.Container | undefined;
  private containerId = "";
  private session: ShellSession | undefined;
  /** The session's hijacked connection to the engine (ended with the container, see destroy). */
  private sessionStream: NodeJS.ReadWriteStream | undefined;
  private readonly protectedPaths: ProtectedPathsGuard;
  private readonly quota: WorkspaceQuota | undefined;

  private constructor(
    private readonly options: DockerSandboxOptions,
    private readonly docker: Dockerode,
  ) {
    super();
    this.workspace = realpathOrSelf(options.workspace);
    if (!statSync(this.workspace, { throwIfNoEntry: false })?.isDirectory())
      throw new Error(`sandbox workspace is not a directory: ${options.workspace}`);
    this.id = options.id ?? `docker-${randomUUID().slice(0, 8)}`;
    this.limits = { ...DEFAULT_LIMITS, ...(options.limits ?? {}) };
    this.files = new FileApi(this.workspace);
    this.protectedPaths = new ProtectedPathsGuard(this.workspace, options.protectedPaths);
    const quota = options.workspaceQuotaBytes ?? DEFAULT_WORKSPACE_QUOTA_BYTES;
    this.quota = quota > 0 ? new WorkspaceQuota(this.workspace, quota) : undefined;
  }

  static async create(options: DockerSandboxOptions): Promise<DockerSandbox> {
    const docker = options.docker ?? (await dockerClient());
    reapAtStartup();
    const sb = new DockerSandbox(options, docker);
    return startOrDestroy(sb, () => sb.start());
  }

  /** The container's id (for `docker` commands and the reaper). */
  get container_id(): string {
    return this.containerId;
  }

  /** Every process of the container stopped or resumed (the Engine's pause: its freezer). */
  async freeze(on: boolean): Promise<boolean> {
    if (!this.container) return false;
    if (on) await this.container.pause();
    else await this.container.unpause();
    return true;
  }

  private async start(): Promise<void> {
    const o = this.options;
    const { user, uid, gid } = containerUser(this.workspace, this);
    const tmp = o.tmpBytes ?? defaultTmpBytes(this.limits);
    const fsize = o.fileSizeBytes ?? 512 * 1024 * 1024;
    const network = o.network ?? "none";
    const readOnly = this.protectedPaths.prepare();
    const binds = [
      `${this.workspace}:${WORKSPACE_PATH}`,
      ...readOnly.map((b) => `${b.host}:${posix.join(WORKSPACE_PATH, b.rel)}:ro`),
    ];
    if (network === "proxy" && o.proxySocket) binds.push(`${o.proxySocket}:/run/hands-proxy.sock`);
    if (o.account) {
      checkAccount(o.account);
      const etc = accountEtcFiles(o.account, uid, gid);
      binds.push(
        `${o.account.homeFolder}:${o.account.home}`,
        `${etc.passwd}:/etc/passwd:ro`,
        `${etc.group}:/etc/group:ro`,
      );
    }
    for (const [name, file] of Object.entries(programFiles(o.programs ?? {})))
      binds.push(`${file}:/usr/local/bin/${name}:ro`);
    const env = sandboxEnv({ ...networkEnv(network, o.proxyEnv), ...(o.env ?? {}) });
    const image = o.image ?? imageTag();
    const container = await this.docker.createContainer({
      Image: image,
      Cmd: ["sleep", "infinity"],
      User: user,
      WorkingDir: WORKSPACE_PATH,
      Hostname: "hands",
      Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      Labels: {
        [LABEL_SESSION]: this.id,
        [LABEL_CREATED]: new Date(this.createdAt).toISOString(),
        [LABEL_OWNER_PID]: String(process.pid),
        [LABEL_OWNER_START]: processStartTime(process.pid) ?? "",
        [LABEL_OWNER_BOOT]: bootId(),
      },
      NetworkDisabled: network !== "host",
      HostConfig: {
        Binds: binds,
        NetworkMode: network === "host" ? "host" : "none",
        Init: true,
        CapDrop: ["ALL"],
        SecurityOpt: ["no-new-privileges", ...dockerSeccomp()],
        ReadonlyRootfs: true,
        Tmpfs: {
          "/tmp": `rw,nosuid,nodev,size=${tmp},mode=1777`,
          "/home/hands": `rw,nosuid,nodev,size=${tmp},uid=${uid},mode=700`,
          // With an account (E2B's templates): root's home is a folder the user may use too.
          ...(o.account ? { "/root": `rw,nosuid,nodev,size=${tmp},uid=${uid},mode=700` } : {}),
          "/run": `rw,nosuid,nodev,size=1m,uid=${uid},mode=755`,
          // Root-owned: the execute-only session programs (see installSessionPrograms).
          "/run/hands": "rw,exec,nosuid,nodev,size=4m,mode=755",
          // Root-owned, filled on demand: the programs of long-lived processes (docker-long-lived.ts).
          [DOCKER_COPY_ROOT]: `rw,exec,nosuid,nodev,size=${DOCKER_COPY_BYTES},mode=755`,
        },
        ShmSize: SHM_BYTES,
        Memory: this.limits.memoryBytes,
        MemorySwap: this.limits.memoryBytes,
        NanoCpus: Math.round(this.limits.cpus * 1e9),
        PidsLimit: this.limits.pids,
        Ulimits: [
          { Name: "core", Soft: 0, Hard: 0 },
          { Name: "fsize", Soft: fsize, Hard: fsize },
          { Name: "nofile", Soft: 4096, Hard: 4096 },
        ],
        ...(o.runtime ? { Runtime: o.runtime } : {}),
      },
    });
    this.container = container;
    this.containerId = container.id;
    await container.start();
    await this.installSessionPrograms(o.runtime === "runsc");
    await this.startSession();
  }

  /**
   * Execute-only, root-owned copies of the image's bash and cat: started from them, the
   * session shell and its relays are not dumpable, so no sandboxed process can reach their
   * pipes through /proc/PID/fd, ptrace or process_vm_readv (see runtime-dir.ts). gVisor's
   * `runsc exec` must read a program to load it ("failed to load …: permission denied" for an
   * execute-only one), so there they stay readable, and dumpable: gVisor's own kernel then
   * stands between the sandbox and the host, but not between its processes.
   */
  private async installSessionPrograms(gvisor: boolean): Promise<void> {
    const container = this.container as Dockerode.Container;
    const exec = await container.exec({
      Cmd: [
        "/bin/sh",
        "-c",
        `cp /bin/bash ${SESSION_SHELL} && cp /bin/cat ${SESSION_RELAY} && chmod ${gvisor ? "0555" : "0111"} ${SESSION_SHELL} ${SESSION_RELAY}`,
      ],
      User: "0:0",
      AttachStdout: true,
      AttachStderr: true,
    });
    const stream = await exec.start({ hijack: true, stdin: false });
    let out = "";
    stream.on("data", (c: Buffer) => {
      out += c.toString("utf8");
    });
    await new Promise((r) => {
      stream.once("end", r);
      stream.once("close", r);
    });
    const info = await exec.inspect();
    if (info.ExitCode !== 0)
      throw new Error(`docker sandbox: could not install the session shell: ${out.trim().slice(0, 500)}`);
  }

  private async startSession(): Promise<void> {
    const container = this.container as Dockerode.Container;
    const exec = await container.exec({
      Cmd: [SESSION_SHELL, ...SESSION_COMMAND],
      Env: [`${SESSION_ENV}=${SESSION_SCRIPT}`],
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    const stream = await exec.start({ hijack: true, stdin: true });
    (this.sessionStream as { destroy?: () => void } | undefined)?.destroy?.();
    this.sessionStream = stream;
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    this.docker.modem.demuxStream(stream, stdout, stderr);
    stream.on("end", () => {
      stdout.end();
      stderr.end();
    });
    stream.on("close", () => {
      stdout.end();
      stderr.end();
    });
    this.session = new ShellSession({
      stdin: stream,
      stdout,
      stderr,
      interrupt: async (pid) => {
        // Signal from the host when the engine runs here: a fork bomb may leave no PID free
        // for a `docker exec`. Otherwise ask through the engine.
        if (hostPid && nsPid(hostPid) === pid) {
          process.kill(hostPid, "SIGUSR1");
          return;
        }
        const k = await container.exec({ Cmd: ["kill", "-USR1", String(pid)] });
        const s = await k.start({ hijack: true, stdin: false });
        s.resume();
        await new Promise((r) => s.once("end", r));
      },
      // Seen only when the engine runs on this host (its PID is the shell's, checked once).
      stopped: () => (hostPid ? processState(hostPid) === "T" : undefined),
      kill: () => {
        if (hostPid) process.kill(hostPid, "SIGKILL");
      },
    });
    let hostPid = 0;
    const shellPid = await this.session.ready;
    hostPid = (await exec.inspect().catch(() => undefined))?.Pid ?? 0;
    if (hostPid && nsPid(hostPid) !== shellPid) hostPid = 0;
  }

  /** The session shell ended (its state is gone): start over in a fresh container. */
  private async revive(): Promise<void> {
    await this.container?.remove({ force: true }).catch(() => {});
    await this.start();
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    this.assertAlive();
    this.lastUsedAt = Date.now();
    const remount = this.session?.alive === true && this.protectedPaths.changed();
    const ended = this.session && !this.session.alive ? endedNote(this.session) : undefined;
    if (!this.session?.alive || remount) await this.revive();
    const cwd = options.cwd ? await this.files.sandboxCwd(options.cwd, WORKSPACE_PATH) : undefined;
    const before = this.oomKills();
    const pidsBefore = this.pidsLimitHits();
    const session = this.session as ShellSession;
    const r = await execWithQuota(this.quota, { ...options, ...(cwd ? { cwd } : {}) }, (o) =>
      session.exec(command, o),
    );
    if ((r.exitCode === 137 || r.exitCode === null) && this.oomKills() > before) markOom(r, this.limits);
    if (r.exitCode !== 0 && this.pidsLimitHits() > pidsBefore) r.pidsLimited = true;
    this.protectedPaths.finish(r, remount);
    if (ended) r.stderr += `${r.stderr ? "\n" : ""}${ended}`;
    this.lastUsedAt = Date.now();
    return r;
  }

  /** OOM kills in the container's memory cgroup, when the engine runs on this host. */
  private oomKills(): number {
    return this.cgroupEvents("memory", "oom_kill");
  }

  /** Forks the container's PID limit refused (pids.events "max"), when the engine runs on this host. */
  private pidsLimitHits(): number {
    return this.cgroupEvents("pids", "max");
  }

  /** A counter of the container's cgroup, in whichever layout (v1, v2 under systemd or not) the host has. */
  private cgroupEvents(controller: "memory" | "pids", key: string): number {
    const id = this.containerId;
    const events = `${controller}.events`;
    return eventCount(
      [
        `/sys/fs/cgroup/${controller}/docker/${id}/${controller === "memory" ? "memory.oom_control" : events}`,
        `/sys/fs/cgroup/system.slice/docker-${id}.scope/${events}`,
        `/sys/fs/cgroup/docker/${id}/${events}`,
      ],
      key,
    );
  }

  /** A process beside the session shell, in the same container (docker-long-lived.ts). */
  async spawnLongLived(argv: string[], options: LongLivedOptions = {}): Promise<LongLivedProcess> {
    this.assertAlive();
    if (!this.session?.alive) await this.revive();
    const container = this.container as Dockerode.Container;
    if (this.copies.container !== this.containerId)
      this.copies = { container: this.containerId, paths: new Set() };
    const demux = (s: NodeJS.ReadableStream, out: PassThrough, err: PassThrough) =>
      this.docker.modem.demuxStream(s, out, err);
    return spawnDockerLongLived(container, demux, this.copies, WORKSPACE_PATH, argv, options);
  }

  private copies: DockerCopies & { container: string } = { container: "", paths: new Set() };

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.container) await this.container.remove({ force: true }).catch(() => {});
    // dockerd does not always close a hijacked exec connection when its container goes: left
    // open, it would keep the process alive after everything else stopped.
    (this.sessionStream as { destroy?: () => void } | undefined)?.destroy?.();
    this.sessionStream = undefined;
    this.protectedPaths.release();
    releaseHostUser(this.workspace, this);
  }
}
