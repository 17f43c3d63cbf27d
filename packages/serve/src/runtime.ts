// One live E2B-style sandbox: a Hands sandbox (bwrap or docker) whose first command is the
// in-sandbox agent, plus the table of processes the agent runs. The workspace folder holds the
// user's home (`home/`, mounted at /home/user on both backends) and the agent's socket
// (`.hands-agent/`). The sandbox's user is `user`, as in E2B's templates.
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, lstatSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import {
  type AllowListProxy,
  createSandbox,
  type EgressPolicy,
  type Sandbox,
  type SandboxKind,
  startAllowListProxy,
} from "@hands/sandbox";
import { AgentClient, type AgentEvent } from "./agent/client.js";
import { AGENT_SOURCE } from "./agent/source.js";
import { PortBridge } from "./port-bridge.js";
import type { SandboxUser } from "./sandbox-users.js";
import { SUDO_SCRIPT } from "./sudo.js";

export const E2B_HOME = "/home/user";
export const E2B_USER = "user";
const IN_SANDBOX_WORKSPACE = "/workspace";
const AGENT_DIR = ".hands-agent";
const START_TIMEOUT_MS = 15_000;
const PYTHON_SCRIPT = '#!/bin/sh\nexec python3 "$@"\n';

export interface RuntimeOptions {
  kind: Exclude<SandboxKind, "local">;
  /** Host folder of this sandbox's files (created by the caller, kept across pause). */
  workspace: string;
  id: string;
  envs: Record<string, string>;
  internet: boolean;
  limits: { memoryBytes: number; cpus: number };
  /** Host uid/gid the sandbox runs as when the service runs as root (never root itself). */
  sandboxUser?: SandboxUser;
  runtime?: string;
  image?: string;
  /**
   * E2B egress rules: the sandbox's only way out is the allow-list proxy, deciding by these
   * (setEgress changes them while it runs). Absent: `internet` decides (host network or none).
   */
  egress?: EgressPolicy;
}

export interface ProcessConfig {
  cmd: string;
  args: string[];
  envs: Record<string, string>;
  cwd?: string;
}

export type ProcessListener = (ev: AgentEvent) => void;

export interface PtySize {
  cols: number;
  rows: number;
}

export interface ProcessEntry {
  pid: number;
  config: ProcessConfig;
  tag?: string;
  /** Started on a pseudo-terminal: one output stream (sent as fd 1), input goes to the terminal. */
  pty: boolean;
  listeners: Set<ProcessListener>;
}

/**
 * Lays out a sandbox folder (idempotent: resume reuses it). The folder and the home are private
 * to the sandbox's user (0700); the agent's folder is the service's, and only passable.
 */
export function prepareWorkspace(workspace: string, user?: SandboxUser): void {
  const home = join(workspace, "home");
  // The sandbox owns its folder: a paused one may have left `home` (or the agent's folder) as a
  // symlink or a file. Nothing of it runs now, so what is checked here is what gets mounted
  // (bwrap and dockerd would follow a link on the host); chown/chmod below never follow one.
  for (const d of [home, join(workspace, AGENT_DIR)]) {
    const st = lstatSync(d, { throwIfNoEntry: false });
    if (st && !st.isDirectory()) {
      const aside = `${d}.replaced-${randomBytes(4).toString("hex")}`;
      renameSync(d, aside);
      rmSync(aside, { force: true, recursive: false });
    }
  }
  mkdirSync(home, { recursive: true, mode: 0o700 });
  mkdirSync(join(workspace, AGENT_DIR), { recursive: true, mode: 0o711 });
  if (user) {
    chownSync(workspace, user.uid, user.gid);
    chownSync(home, user.uid, user.gid);
  }
  chmodSync(workspace, 0o700);
  chmodSync(join(workspace, AGENT_DIR), 0o711);
}

export class SandboxRuntime {
  readonly processes = new Map<number, ProcessEntry>();
  private readonly watchers = new Map<string, (ev: AgentEvent) => void>();
  private agentRun: Promise<unknown> | undefined;
  private stopping = false;
  /** Connections to ports inside the sandbox (getHost traffic). */
  bridge: PortBridge | undefined;
  /** The sandbox's memory limit (the code interpreter sizes its kernel bound by it). */
  memoryBytes = 0;
  /** Every process stopped where it stands (paused with its memory). */
  frozen = false;
  /** The egress proxy and the rules it reads for every connection (sandboxes with rules). */
  private egress: { proxy: AllowListProxy; policy: EgressPolicy } | undefined;

  private constructor(
    readonly sandbox: Sandbox,
    readonly agent: AgentClient,
    /** The sandbox's environment (envVars of the create), added to every process's. */
    public envs: Record<string, string>,
    /** The user's home inside the sandbox (relative paths start here). */
    readonly home: string,
  ) {
    agent.on("event", (ev: AgentEvent) => this.dispatch(ev));
  }

  static async start(o: RuntimeOptions): Promise<SandboxRuntime> {
    prepareWorkspace(o.workspace, o.sandboxUser);
    const sockPath = join(o.workspace, AGENT_DIR, "agent.sock");
    const nonce = randomBytes(16).toString("hex");
    // The host listens before the sandbox exists, in a folder the sandbox user cannot write:
    // nothing in the sandbox can put a symlink or a listener of its own in the way.
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(sockPath, () => resolve());
    });
    chmodSync(sockPath, 0o777);
    // A stale socket file of a previous run (resume) is the service's: replaced.
    const bridgePath = join(o.workspace, AGENT_DIR, "bridge.sock");
    rmSync(bridgePath, { force: true });
    const bridge = await PortBridge.listen(bridgePath).catch((e) => {
      server.close();
      throw e;
    });
    const hello = waitForAgent(server, nonce);
    hello.promise.catch(() => {});
    let sandbox: Sandbox | undefined;
    let egress: { proxy: AllowListProxy; policy: EgressPolicy } | undefined;
    try {
      if (o.egress) {
        const holder = { policy: o.egress } as { proxy: AllowListProxy; policy: EgressPolicy };
        holder.proxy = await startAllowListProxy({ allow: [], egress: () => holder.policy });
        egress = holder;
      }
      sandbox = await createSandbox({
        kind: o.kind,
        workspace: o.workspace,
        id: o.id,
        network: egress ? "proxy" : o.internet ? "host" : "none",
        ...(egress ? { proxySocket: egress.proxy.socketPath, proxyEnv: egress.proxy.env } : {}),
        limits: { memoryBytes: o.limits.memoryBytes, cpus: o.limits.cpus },
        account: { name: E2B_USER, home: E2B_HOME, homeFolder: join(o.workspace, "home") },
        // E2B's sandboxes may create folders at `/`: bwrap's root tmpfs stays writable (its pages
        // count against the memory limit). Docker's root stays read-only (its writable layer
        // would have no size limit on this host).
        writableRoot: true,
        // E2B's templates also have `python` (Debian names it python3 only).
        programs: { sudo: SUDO_SCRIPT, python: PYTHON_SCRIPT },
        ...(o.runtime ? { runtime: o.runtime } : {}),
        ...(o.image ? { image: o.image } : {}),
      });
      // The source travels in the environment, not argv: the host's `ps` shows every argv.
      // umask 022, as E2B's sandboxes (files 0644, folders 0755): the sandbox's folder and home
      // are 0700 on the host, so no other host user reaches them whatever their modes.
      const run = sandbox.exec(
        `umask 022; exec python3 -c 'import os; exec(os.environ["HANDS_AGENT_SOURCE"])'`,
        {
          env: {
            HANDS_AGENT_SOURCE: AGENT_SOURCE,
            HANDS_AGENT_SOCKET: `${IN_SANDBOX_WORKSPACE}/${AGENT_DIR}/agent.sock`,
            HANDS_AGENT_NONCE: nonce,
            HANDS_AGENT_BRIDGE: `${IN_SANDBOX_WORKSPACE}/${AGENT_DIR}/bridge.sock`,
            HANDS_AGENT_HOME: E2B_HOME,
          },
          timeoutMs: 2 ** 31 - 1,
          maxOutputBytes: 64 * 1024,
        },
      );
      const socket = await Promise.race([
        hello.promise,
        run.then((r) => {
          throw new Error(`sandbox agent exited before it started: ${r.stderr.slice(0, 2000) || r.exitCode}`);
        }),
      ]);
      const rt = new SandboxRuntime(sandbox, new AgentClient(socket), o.envs, E2B_HOME);
      rt.agentRun = run.catch(() => undefined);
      rt.bridge = bridge;
      rt.egress = egress;
      rt.memoryBytes = o.limits.memoryBytes;
      return rt;
    } catch (e) {
      bridge.close();
      await egress?.proxy.close().catch(() => {});
      await sandbox?.destroy().catch(() => {});
      throw e;
    } finally {
      hello.cancel();
      server.close();
    }
  }

  /** Whether egress goes through the rule-checking proxy (rules can change only then). */
  get hasEgressProxy(): boolean {
    return this.egress !== undefined;
  }

  /** New egress rules, in force for the next connection (ones already open stay). */
  setEgress(policy: EgressPolicy): void {
    if (!this.egress) throw new Error("this sandbox has no egress proxy");
    this.egress.policy = policy;
  }

  get alive(): boolean {
    return this.agent.alive && !this.stopping;
  }

  private dispatch(ev: AgentEvent): void {
    if (ev.ev === "out" || ev.ev === "exit") {
      const p = this.processes.get(ev.pid);
      if (!p) return;
      if (ev.ev === "exit") this.processes.delete(ev.pid);
      for (const l of p.listeners) l(ev);
    } else if (ev.ev === "fs" || ev.ev === "fs_end") {
      this.watchers.get(ev.wid)?.(ev);
    }
  }

  async startProcess(
    config: ProcessConfig,
    opts: { tag?: string; stdin: boolean; user: string; pty?: PtySize },
    listener: ProcessListener,
  ): Promise<ProcessEntry> {
    let entry: ProcessEntry | undefined;
    await this.agent.call<{ pid: number }>(
      "start",
      {
        cmd: config.cmd,
        args: config.args,
        envs: config.envs,
        sandboxEnvs: this.envs,
        cwd: config.cwd,
        stdin: opts.stdin,
        user: opts.user,
        ...(opts.pty ? { pty: opts.pty } : {}),
      },
      (r) => {
        entry = {
          pid: r.pid,
          config,
          ...(opts.tag ? { tag: opts.tag } : {}),
          pty: opts.pty !== undefined,
          listeners: new Set([listener]),
        };
        this.processes.set(r.pid, entry);
      },
    );
    return entry as ProcessEntry;
  }

  /** `entries`: each event but a removal carries the entry as it is then (envd 0.6.3's includeEntry). */
  watch(
    path: string,
    recursive: boolean,
    onEvent: (ev: AgentEvent) => void,
    entries = false,
  ): Promise<string> {
    const wid = randomBytes(8).toString("hex");
    this.watchers.set(wid, onEvent);
    return this.agent.call("watch", { wid, path, recursive, entries }).then(
      () => wid,
      (e) => {
        this.watchers.delete(wid);
        throw e;
      },
    );
  }

  unwatch(wid: string): void {
    if (!this.watchers.delete(wid)) return;
    this.agent.call("unwatch", { wid }).catch(() => {});
  }

  /**
   * Stops every process where it stands, memory kept (a pause that keeps memory), or resumes
   * them. False when the backend cannot (then nothing changed).
   */
  async freeze(on: boolean): Promise<boolean> {
    if (this.stopping || !this.sandbox.freeze) return false;
    const done = await this.sandbox.freeze(on);
    if (done) this.frozen = on;
    return done;
  }

  /** Stops everything in the sandbox; the workspace folder stays (pause) unless the caller removes it. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    // A frozen process cannot even be killed: thawed first (bounded: a kill must not hang).
    if (this.frozen)
      await Promise.race([
        this.sandbox.freeze?.(false).catch(() => {}),
        new Promise((r) => setTimeout(r, 5000).unref()),
      ]);
    this.agent.close();
    this.bridge?.close();
    await this.sandbox.destroy().catch(() => {});
    await this.egress?.proxy.close().catch(() => {});
    // Bounded: a backend whose command stream outlives the sandbox must not hold up a kill.
    await Promise.race([this.agentRun, new Promise((r) => setTimeout(r, 5000).unref())]);
    for (const p of this.processes.values())
      for (const l of p.listeners)
        l({ ev: "exit", pid: p.pid, exited: false, code: -1, signal: "SIGKILL", sandboxGone: true });
    this.processes.clear();
    for (const w of this.watchers.values()) w({ ev: "fs_end", wid: "", err: "sandbox stopped" });
    this.watchers.clear();
  }
}

function waitForAgent(server: Server, nonce: string): { promise: Promise<Socket>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<Socket>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error("sandbox agent did not connect in time")), START_TIMEOUT_MS);
    server.on("connection", (socket) => {
      let buf = "";
      socket.setEncoding("utf8");
      const onData = (d: string) => {
        buf += d;
        if (buf.length > 4096) socket.destroy();
        const nl = buf.indexOf("\n");
        if (nl < 0) return;
        socket.off("data", onData);
        let ok = false;
        try {
          ok = (JSON.parse(buf.slice(0, nl)) as { hello?: unknown }).hello === nonce;
        } catch {}
        if (!ok) {
          socket.destroy();
          return;
        }
        clearTimeout(timer);
        resolve(socket);
      };
      socket.on("data", onData);
      socket.on("error", () => {});
    });
  });
  return { promise, cancel: () => clearTimeout(timer) };
}
