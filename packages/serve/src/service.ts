// The sandbox service of one node: creates sandboxes within the tenant's quota and the node's
// capacity (queueing fairly when full), keeps their lifecycle in the store (timeouts, pause and
// resume, kill), reaps what expired — also what a previous run of the service left behind.
import { createHmac, randomBytes } from "node:crypto";
import { chownSync, existsSync, lstatSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseEgressPolicy } from "@hands/sandbox";
import type { ServeMetrics } from "./metrics.js";
import { METRICS_INTERVAL_MS, MetricsHistory } from "./metrics-history.js";
import { type Warm, WarmPool } from "./pool.js";
import { CapacityError, FairQueue } from "./queue.js";
import { prepareWorkspace, SandboxRuntime } from "./runtime.js";
import { type SandboxMetric, sampleMetrics } from "./sandbox-metrics.js";
import {
  egressOf,
  hasEgressRules,
  type SandboxSettings,
  SettingsError,
  settingsOf,
} from "./sandbox-settings.js";
import { folderKey, SandboxUsers } from "./sandbox-users.js";
import { SnapshotError, type SnapshotRecord, Snapshots } from "./snapshots.js";
import { type AuditEntry, quotaRefusal, type SandboxRow, type Store, type Tenant } from "./store.js";
import { runStartCommand } from "./templates/start-command.js";
import { copyWorkspace } from "./workspace-copy.js";

export interface TemplateSpec {
  backend: "bwrap" | "docker";
  /** docker: OCI runtime ("runsc" = gVisor). */
  runtime?: string;
  image?: string;
  cpus: number;
  memoryMB: number;
  /** Tenant templates (templates/): run in the background at start; the ready command gates it. */
  startCmd?: string;
  readyCmd?: string;
}

export const DEFAULT_TEMPLATES: Record<string, TemplateSpec> = {
  base: { backend: "bwrap", cpus: 1, memoryMB: 512 },
  bwrap: { backend: "bwrap", cpus: 1, memoryMB: 512 },
  "code-interpreter-v1": { backend: "bwrap", cpus: 1, memoryMB: 1024 },
  docker: { backend: "docker", cpus: 1, memoryMB: 512 },
  gvisor: { backend: "docker", runtime: "runsc", cpus: 1, memoryMB: 512 },
};

/** A management API failure: the HTTP status and the message of E2B's {code, message}. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorCode?: string,
  ) {
    super(message);
  }
}

export interface CreateRequest {
  templateID?: unknown;
  timeout?: unknown;
  metadata?: unknown;
  envVars?: unknown;
  allow_internet_access?: unknown;
  autoPause?: unknown;
  secure?: unknown;
  network?: unknown;
  autoPauseMemory?: unknown;
  autoResume?: unknown;
}

/** What one fork of a sandbox became: the new sandbox, or why it did not start. */
export type ForkResult = { row: SandboxRow } | { error: ApiError };

/**
 * Whether a pause keeps memory and processes (E2B's keepMemory; its default is to keep them):
 * the sandbox is frozen where it stands (cgroup freezer, docker pause) while paused.
 */
function keepsMemory(v: unknown, what: string): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v !== "boolean") throw new ApiError(400, `${what} must be a boolean`);
  return v;
}

/**
 * Every sandbox is secured (its envd needs envdAccessToken): a create that asks for less is
 * refused, not downgraded. Its other ports need trafficAccessToken unless the create asked for
 * public traffic (sandbox-settings.ts).
 */
function checkAccessRequest(body: CreateRequest): void {
  if (body.secure !== undefined && body.secure !== null && body.secure !== true)
    throw new ApiError(
      400,
      "secure must be true: every sandbox of hands serve needs its envdAccessToken (X-Access-Token) on the data plane",
    );
}

function settingsOrRefusal(body: CreateRequest, publicByDefault: boolean): SandboxSettings {
  try {
    return settingsOf(body, publicByDefault);
  } catch (e) {
    if (e instanceof SettingsError) throw new ApiError(400, e.message);
    throw e;
  }
}

export interface ServiceOptions {
  store: Store;
  dataDir: string;
  metrics: ServeMetrics;
  /** Name of this node (several nodes share one PostgreSQL store; one node: "local"). */
  node?: string;
  templates?: Record<string, TemplateSpec>;
  /** A tenant's own templates (built through E2B's Template API, templates/builds.ts). */
  tenantTemplate?: (tenantId: string, name: string) => TemplateSpec | undefined;
  /** Sandboxes running at once on this node. */
  capacity?: number;
  maxQueue?: number;
  queueTimeoutMs?: number;
  reapIntervalMs?: number;
  /** One host uid for every sandbox when the service runs as root (default: a uid per sandbox, sandbox-users.ts). */
  sandboxUid?: number;
  /**
   * How long a pause keeps memory and processes (frozen, holding its slot and its memory) before
   * it becomes a filesystem-only pause (default an hour).
   */
  frozenLimitMs?: number;
  /** How long a paused sandbox's files are kept (default 7 days). */
  pausedRetentionMs?: number;
  /** Warm sandboxes kept ready per template (default: 2 of "base"; {} for none). */
  warm?: Record<string, number>;
  /**
   * Sandboxes created without network.allowPublicTraffic get E2B's default, true (their ports
   * open without the traffic token). Default false: closed unless asked.
   */
  publicTrafficByDefault?: boolean;
  /** How often each running sandbox's metrics are read into its history (default 5 s). */
  metricsIntervalMs?: number;
}

const DEFAULT_TIMEOUT_S = 300;
const FORK_TIMEOUT_S = 15;
const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

function newSandboxId(): string {
  const bytes = randomBytes(20);
  let s = "";
  for (const b of bytes) s += ID_ALPHABET[b % ID_ALPHABET.length];
  return s;
}

function stringMap(v: unknown, what: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== "object" || Array.isArray(v))
    throw new ApiError(400, `${what} must be an object of strings`);
  const out: Record<string, string> = {};
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > 256) throw new ApiError(400, `${what} has more than 256 entries`);
  for (const [k, val] of entries) {
    if (typeof val !== "string") throw new ApiError(400, `${what}.${k} must be a string`);
    if (k.length > 1024 || val.length > 65536) throw new ApiError(400, `${what}.${k} is too long`);
    out[k] = val;
  }
  return out;
}

export class SandboxService {
  readonly store: Store;
  readonly node: string;
  readonly queue: FairQueue;
  readonly templates: Record<string, TemplateSpec>;
  private readonly tenantTemplate: ServiceOptions["tenantTemplate"];
  private readonly runtimes = new Map<string, SandboxRuntime>();
  /**
   * The rows of the sandboxes running here, as this node last wrote them: the data plane serves
   * them without a store read (their state only changes through this node, or — cut off from
   * the others — by rows the reaper's sweep then finds and stops).
   */
  private readonly liveRows = new Map<string, SandboxRow>();
  /**
   * Paused sandboxes whose processes are frozen where they stand, memory kept (a pause that keeps
   * memory). Each keeps its slot (its memory is still in use) until it is resumed, killed, or
   * turned into a filesystem-only pause: after frozenLimitMs, or when a create needs its slot.
   */
  private readonly frozen = new Map<string, { rt: SandboxRuntime; since: number }>();
  private readonly frozenLimitMs: number;
  /** Sandboxes being started, paused or killed: one lifecycle change at a time per sandbox. */
  private readonly busy = new Map<string, Promise<unknown>>();
  private readonly metrics: ServeMetrics;
  private readonly dataDir: string;
  private readonly users: SandboxUsers | undefined;
  private readonly folderKey: Buffer;
  private reaper: NodeJS.Timeout | undefined;
  private sampler: NodeJS.Timeout | undefined;
  private readonly history = new MetricsHistory();
  private closed = false;
  private readonly pool: WarmPool;
  private readonly pausedRetentionMs: number;
  private readonly publicTrafficByDefault: boolean;
  readonly snapshots: Snapshots;

  constructor(o: ServiceOptions) {
    this.store = o.store;
    this.node = o.node ?? "local";
    this.metrics = o.metrics;
    this.dataDir = o.dataDir;
    this.templates = o.templates ?? DEFAULT_TEMPLATES;
    this.tenantTemplate = o.tenantTemplate;
    this.queue = new FairQueue(o.capacity ?? 100, o.maxQueue ?? 200, o.queueTimeoutMs ?? 30_000);
    this.pausedRetentionMs = o.pausedRetentionMs ?? 7 * 24 * 3600_000;
    this.frozenLimitMs = o.frozenLimitMs ?? 3600_000;
    this.publicTrafficByDefault = o.publicTrafficByDefault === true;
    this.users = SandboxUsers.forService(join(this.dataDir, "sandboxes"), o.sandboxUid);
    this.folderKey = folderKey(this.dataDir);
    this.snapshots = new Snapshots(this.dataDir, this.folderKey, (name) => name in this.templates);
    this.snapshots.sweep();
    this.pool = new WarmPool(
      o.warm ?? { base: 2 },
      async (template) => {
        const id = newSandboxId();
        const spec = this.templates[template] as TemplateSpec;
        const rt = await this.launch(id, spec, { envs: {}, internet: false });
        return { id, rt };
      },
      async (w: Warm) => {
        await w.rt.stop();
        this.removeFiles(w.id);
      },
    );
    const every = o.reapIntervalMs ?? 1000;
    let reaping = false;
    this.reaper = setInterval(() => {
      // One pass at a time: with a remote store a pass can outlast the interval.
      if (reaping) return;
      reaping = true;
      void this.reap()
        .catch(() => {})
        .finally(() => {
          reaping = false;
        });
    }, every);
    this.reaper.unref();
    let sampling = false;
    this.sampler = setInterval(() => {
      if (sampling) return;
      sampling = true;
      void this.sampleAll().finally(() => {
        sampling = false;
      });
    }, o.metricsIntervalMs ?? METRICS_INTERVAL_MS);
    this.sampler.unref();
  }

  /**
   * A sandbox's folder. Its name is a keyed hash of the id, not the id: every local user can
   * read a sandboxed process's mount table (/proc/PID/mountinfo), which shows the folder's path.
   */
  workspaceOf(id: string): string {
    return join(this.dataDir, "sandboxes", this.folderName(id));
  }

  private folderName(id: string): string {
    return createHmac("sha256", this.folderKey).update(id).digest("hex").slice(0, 20);
  }

  /** Warm sandboxes ready to be handed over. */
  get poolSize(): number {
    return this.pool.size;
  }

  runtime(id: string): SandboxRuntime | undefined {
    return this.runtimes.get(id);
  }

  /** The row of a sandbox running on this node with a live agent, without reading the store. */
  liveRow(id: string): SandboxRow | undefined {
    return this.runtimes.get(id)?.alive ? this.liveRows.get(id) : undefined;
  }

  /** The rows of every sandbox running on this node with a live agent. */
  runningRows(): SandboxRow[] {
    return [...this.liveRows.values()].filter((r) => this.runtimes.get(r.id)?.alive);
  }

  /** Starts filling the warm pool (after recover(), which would remove its folders). */
  warmUp(): void {
    this.pool.fill();
  }

  /** After a restart: running sandboxes lost their processes (kept as paused while their time lasts), expired ones and unknown folders are removed. */
  async recover(): Promise<{ paused: string[]; removed: string[] }> {
    const paused: string[] = [];
    const removed: string[] = [];
    const now = Date.now();
    for (const s of await this.store.sandboxesOnNode(this.node, ["running"])) {
      if (s.endAt <= now) {
        this.removeFiles(s.id);
        await this.store.setState(s.id, "killed", "expired while the service was down");
        await this.store.audit({
          tenant: s.tenantId,
          sandbox: s.id,
          event: "reap",
          detail: { reason: "expired (restart)" },
        });
        this.metrics.reaps.inc({ reason: "restart" });
        removed.push(s.id);
      } else {
        await this.store.setState(s.id, "paused", "service restart");
        await this.store.audit({
          tenant: s.tenantId,
          sandbox: s.id,
          event: "pause",
          detail: { reason: "service restart" },
        });
        paused.push(s.id);
      }
    }
    const dir = join(this.dataDir, "sandboxes");
    if (existsSync(dir)) {
      // Only this node's own sandboxes keep their folders (nodes may share a disk in tests).
      const keep = new Set(
        (await this.store.sandboxesOnNode(this.node, ["running", "paused"])).map((r) =>
          this.folderName(r.id),
        ),
      );
      for (const name of readdirSync(dir)) {
        if (keep.has(name)) continue;
        rmSync(join(dir, name), { recursive: true, force: true });
        removed.push(name);
      }
    }
    return { paused, removed };
  }

  /** A template, or one of the tenant's snapshots (its files seed the new sandbox). */
  private template(id: unknown, tenant: Tenant): { name: string; spec: TemplateSpec; seed?: string } {
    const name = id === undefined || id === null || id === "" ? "base" : id;
    if (typeof name !== "string") throw new ApiError(400, "templateID must be a string");
    const spec = this.templates[name] ?? this.tenantTemplate?.(tenant.id, name);
    if (spec) return { name, spec };
    const snap = this.snapshots.find(tenant.id, name);
    const snapSpec = snap && this.templates[snap.record.templateId];
    if (!snap || !snapSpec) throw new ApiError(404, `template '${name}' not found`);
    return { name: snap.record.templateId, spec: snapSpec, seed: snap.files };
  }

  private timeoutSeconds(v: unknown, tenant: Tenant): number {
    if (v === undefined || v === null) return Math.min(DEFAULT_TIMEOUT_S, tenant.maxLifetimeSec);
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0)
      throw new ApiError(400, "timeout must be a whole number of seconds");
    if (v > tenant.maxLifetimeSec)
      throw new ApiError(
        400,
        `timeout cannot be greater than ${tenant.maxLifetimeSec} seconds for this tenant`,
      );
    return v;
  }

  /** Fails fast, before queueing, when the tenant is already at a limit (the insert checks again, exactly). */
  private async checkQuota(tenant: Tenant, spec: { cpus: number; memoryMB: number }): Promise<void> {
    const t = (await this.store.tenant(tenant.id)) ?? tenant;
    const refusal = quotaRefusal(t, await this.store.usage(t.id), spec);
    if (refusal) throw new ApiError(429, refusal);
  }

  /** Creates a sandbox; `seedFiles` (a fork's capture) becomes its folder's content. */
  async create(
    tenant: Tenant,
    body: CreateRequest,
    signal?: AbortSignal,
    seedFiles?: string,
  ): Promise<SandboxRow> {
    if (this.closed) throw new ApiError(503, "the service is shutting down");
    const t0 = performance.now();
    const { name, spec, seed: snapshotFiles } = this.template(body.templateID, tenant);
    const seed = seedFiles ?? snapshotFiles;
    const timeout = this.timeoutSeconds(body.timeout, tenant);
    const metadata = stringMap(body.metadata, "metadata");
    const envs = stringMap(body.envVars, "envVars");
    if (body.allow_internet_access !== undefined && typeof body.allow_internet_access !== "boolean")
      throw new ApiError(400, "allow_internet_access must be a boolean");
    checkAccessRequest(body);
    const settings = settingsOrRefusal(body, this.publicTrafficByDefault);
    if (body.autoPause === true && !keepsMemory(body.autoPauseMemory, "autoPauseMemory"))
      settings.autoPauseMemory = false;
    await this.checkQuota(tenant, spec);
    await this.acquire(tenant, signal);
    // Warm sandboxes have no network: one with internet or egress rules starts as asked.
    const warm =
      body.allow_internet_access === true || hasEgressRules(settings) ? undefined : this.pool.take(name);
    const id = warm?.id ?? newSandboxId();
    const now = Date.now();
    const row: SandboxRow = {
      id,
      tenantId: tenant.id,
      templateId: name,
      backend: spec.runtime ? `${spec.backend}:${spec.runtime}` : spec.backend,
      state: "running",
      metadata,
      envs,
      internet: body.allow_internet_access === true,
      cpus: spec.cpus,
      memoryMB: spec.memoryMB,
      startedAt: now,
      endAt: now + timeout * 1000,
      autoPause: body.autoPause === true,
      node: this.node,
      token: randomBytes(24).toString("base64url"),
      endedAt: null,
      endReason: null,
      settings,
    };
    let inserted = false;
    try {
      // Busy from before the row is visible until its runtime runs: the reaper skips busy
      // sandboxes, so a timeout that passes during a slow start cannot remove the sandbox's
      // files under the start (it is reaped after, counting from the moment it runs).
      await this.exclusive(id, async () => {
        // The exact check: quota and insert in one transaction (creates on other nodes race here).
        const refusal = await this.store.insertSandboxWithinQuota(row);
        if (refusal) throw new ApiError(429, refusal);
        inserted = true;
        if (warm) {
          // Nothing but its agent has run in a warm sandbox: its folder can take the files as is.
          if (seed) await this.seedFolder(id, seed, true);
          warm.rt.envs = envs;
          this.adopt(row, warm.rt);
        } else {
          if (seed) await this.seedFolder(id, seed);
          await this.startRuntime(row, spec);
        }
        // The timeout is the sandbox's running time: it starts now, not when the row went in.
        const endAt = Date.now() + timeout * 1000;
        if (endAt > row.endAt) {
          await this.store.setEndAt(id, endAt);
          row.endAt = endAt;
          const live = this.liveRows.get(id);
          if (live) live.endAt = endAt;
        }
      });
    } catch (e) {
      // Whatever got started goes (a warm sandbox taken for a create that then failed, too).
      const rt = this.runtimes.get(id) ?? warm?.rt;
      this.runtimes.delete(id);
      this.liveRows.delete(id);
      await rt?.stop();
      this.removeFiles(id);
      this.queue.release();
      if (inserted) await this.store.setState(id, "killed", "create failed").catch(() => {});
      if (e instanceof ApiError) throw e;
      throw new ApiError(
        500,
        `sandbox could not be created: ${(e as Error).message}`,
        "sandbox_create_failed",
      );
    }
    this.metrics.createSeconds.observe((performance.now() - t0) / 1000);
    await this.store.audit({
      tenant: tenant.id,
      sandbox: id,
      event: "create",
      detail: { template: name, timeout },
    });
    return row;
  }

  private async acquire(tenant: Tenant, signal?: AbortSignal): Promise<void> {
    // A full node gives a frozen pause's slot first (oldest first): it becomes filesystem-only.
    for (const [id] of this.frozen) {
      if (this.queue.used < this.queue.capacity) break;
      if (this.busy.has(id)) continue;
      await this.exclusive(id, () => this.unfreezeToFiles(id, "its slot was needed"));
    }
    try {
      await this.queue.acquire(tenant.id, signal);
    } catch (e) {
      if (e instanceof CapacityError) throw new ApiError(503, e.message, "sandbox_capacity_unavailable");
      throw e;
    }
  }

  private async launch(
    id: string,
    spec: TemplateSpec,
    o: { envs: Record<string, string>; internet: boolean; settings?: SandboxSettings },
  ): Promise<SandboxRuntime> {
    const rt = await SandboxRuntime.start({
      kind: spec.backend,
      workspace: this.workspaceOf(id),
      id: `serve-${id}`,
      envs: o.envs,
      internet: o.internet,
      limits: { memoryBytes: spec.memoryMB * 1024 * 1024, cpus: spec.cpus },
      ...(this.users ? { sandboxUser: this.users.userOf(this.folderName(id)) } : {}),
      ...(spec.runtime ? { runtime: spec.runtime } : {}),
      ...(spec.image ? { image: spec.image } : {}),
      ...(hasEgressRules(o.settings) ? { egress: parseEgressPolicy(o.settings?.network ?? {}) } : {}),
    });
    // A start that finishes after close() began would run on with nobody to stop it (its
    // bubblewrap child or docker stream keeping the stopped service's process alive).
    if (this.closed) {
      await rt.stop();
      throw new ApiError(503, "the service is stopping");
    }
    if (spec.startCmd)
      await runStartCommand(rt, spec).catch(async (e: Error) => {
        await rt.stop();
        throw new ApiError(500, e.message, "sandbox_create_failed");
      });
    return rt;
  }

  private async startRuntime(row: SandboxRow, spec: TemplateSpec): Promise<void> {
    const rt = await this.launch(row.id, spec, {
      envs: row.envs,
      internet: row.internet,
      ...(row.settings ? { settings: row.settings } : {}),
    });
    this.adopt({ ...row, state: "running", node: this.node }, rt);
  }

  /** Makes a started runtime the sandbox's; an agent that dies under us loses the sandbox. */
  private adopt(row: SandboxRow, rt: SandboxRuntime): void {
    const id = row.id;
    this.runtimes.set(id, rt);
    this.liveRows.set(id, row);
    rt.agent.once("close", () => {
      if (this.runtimes.get(id) !== rt || this.busy.has(id)) return;
      void this.end(id, "lost", "sandbox agent exited").catch(() => {});
    });
  }

  /**
   * A tenant's sandbox, or 404 — also for other tenants' sandboxes, which do not exist for it. Lost
   * sandboxes (their node died, or their agent) are still shown, with state "lost".
   */
  async get(tenant: Tenant, id: string): Promise<SandboxRow> {
    const row = await this.store.sandbox(id);
    if (!row || row.tenantId !== tenant.id || row.state === "killed")
      throw new ApiError(404, `sandbox '${id}' not found`);
    return row;
  }

  /** As get, but a lost sandbox is an error (410) for what needs it alive. */
  private async usable(tenant: Tenant, id: string): Promise<SandboxRow> {
    const row = await this.get(tenant, id);
    if (row.state === "lost")
      throw new ApiError(410, `sandbox '${id}' was lost: ${row.endReason ?? "it stopped"}`);
    return row;
  }

  private async exclusive<T>(id: string, f: () => Promise<T>): Promise<T> {
    while (this.busy.has(id)) await this.busy.get(id)?.catch(() => {});
    const p = f();
    this.busy.set(id, p);
    try {
      return await p;
    } finally {
      this.busy.delete(id);
    }
  }

  /**
   * E2B's metrics of a sandbox of this node. Without a window: the current reading while it runs,
   * none otherwise. With start and/or end: the readings taken in it (metrics-history.ts), and a
   * fresh one when the window reaches now and none was taken in it yet.
   */
  async sandboxMetrics(
    tenant: Tenant,
    id: string,
    window: { start?: number; end?: number } = {},
  ): Promise<SandboxMetric[]> {
    const row = await this.usable(tenant, id);
    const rt = this.runtimes.get(id);
    const ranged = window.start !== undefined || window.end !== undefined;
    const past = ranged ? this.history.range(id, window.start, window.end) : [];
    const reachesNow = window.end === undefined || window.end >= Math.floor(Date.now() / 1000);
    if (row.state !== "running" || !rt?.alive || (ranged && (past.length > 0 || !reachesNow))) return past;
    try {
      const now = await sampleMetrics(rt, row);
      if (ranged) this.history.add(id, now);
      return ranged ? this.history.range(id, window.start, window.end) : [now];
    } catch (e) {
      throw new ApiError(500, `metrics of sandbox '${id}' could not be read: ${(e as Error).message}`);
    }
  }

  /** One reading of every sandbox running here, into the history (sequential: a light load). */
  private async sampleAll(): Promise<void> {
    for (const row of this.runningRows()) {
      const rt = this.runtimes.get(row.id);
      if (!rt?.alive || this.closed) continue;
      await sampleMetrics(rt, row).then(
        (m) => this.history.add(row.id, m),
        () => {},
      );
    }
  }

  /** A sandbox's audit trail (the newest `limit` entries, oldest first); killed ones keep theirs. */
  async auditTrail(tenant: Tenant, id: string, limit: number): Promise<AuditEntry[]> {
    const row = await this.store.sandbox(id);
    if (!row || row.tenantId !== tenant.id) throw new ApiError(404, `sandbox '${id}' not found`);
    return this.store.auditLog(limit, id);
  }

  /**
   * Kills a sandbox of this node. A lost one is only marked killed (nothing runs any more); so is
   * one of a node that does not answer (the API tried to forward first): that node stops it
   * when it sees the row (reap's sweep, or its restart).
   */
  async kill(tenant: Tenant, id: string): Promise<void> {
    const row = await this.get(tenant, id);
    if (row.state === "lost" || row.node !== this.node)
      await this.store.setState(
        id,
        "killed",
        row.state === "lost" ? "killed after it was lost" : "requested",
      );
    else await this.end(id, "killed", "requested");
    await this.store.audit({ tenant: tenant.id, sandbox: id, event: "kill" });
  }

  /** Stops a sandbox for good (killed, lost): processes, files, the slot. Idempotent. */
  private end(id: string, state: "killed" | "lost", reason: string): Promise<void> {
    return this.exclusive(id, async () => {
      const row = await this.store.sandbox(id);
      if (!row || row.state === "killed" || row.state === "lost") return;
      // The state changes first: from here on the API and the data plane see it gone.
      this.liveRows.delete(id);
      await this.store.setState(id, state, reason);
      await this.stopLocal(id, row.state === "running" && row.node === this.node);
    });
  }

  /** Stops this node's runtime of a sandbox and removes its files (and frees its slot). */
  private async stopLocal(id: string, release: boolean): Promise<void> {
    this.history.drop(id);
    const rt = this.runtimes.get(id);
    this.runtimes.delete(id);
    this.liveRows.delete(id);
    if (rt) await rt.stop();
    const frozen = this.frozen.get(id);
    this.frozen.delete(id);
    if (frozen) await frozen.rt.stop();
    this.removeFiles(id);
    if (release || frozen) this.queue.release();
  }

  async setTimeout(tenant: Tenant, id: string, timeout: unknown): Promise<void> {
    const row = await this.usable(tenant, id);
    const t = this.timeoutSeconds(timeout, tenant);
    if (row.state !== "running") throw new ApiError(409, `sandbox '${id}' is not running`);
    // The store is the truth for every node: the owner's reaper reads the new end from it.
    await this.store.setEndAt(id, Date.now() + t * 1000);
  }

  /**
   * E2B's updateNetwork: the egress rules are replaced (a list left out is emptied). In force at
   * once for a sandbox that runs with the egress proxy (created with rules); kept for a paused
   * one. A sandbox started without rules has no proxy to change (none, or the host's network).
   */
  async updateNetwork(tenant: Tenant, id: string, body: Record<string, unknown>): Promise<void> {
    await this.usable(tenant, id);
    let egress: { allowOut: string[]; denyOut: string[] };
    try {
      egress = egressOf(body);
    } catch (e) {
      if (e instanceof SettingsError) throw new ApiError(400, e.message);
      throw e;
    }
    if (body.allow_internet_access !== undefined && typeof body.allow_internet_access !== "boolean")
      throw new ApiError(400, "allow_internet_access must be a boolean");
    if (body.allow_internet_access === false && !egress.denyOut.includes("0.0.0.0/0"))
      egress.denyOut = [...egress.denyOut, "0.0.0.0/0"];
    await this.exclusive(id, async () => {
      const row = await this.usable(tenant, id);
      if (row.node !== this.node) throw new ApiError(502, `sandbox '${id}' runs on node '${row.node}'`);
      const settings: SandboxSettings = {
        ...(row.settings ?? { autoResume: false }),
        network: {
          ...(row.settings?.network ?? { allowPublicTraffic: false }),
          ...egress,
        },
      };
      const rt = this.runtimes.get(id);
      if (row.state === "running" && !rt?.hasEgressProxy && hasEgressRules(settings))
        throw new ApiError(
          409,
          `sandbox '${id}' was created without egress rules (network.allowOut / denyOut), so its network (${row.internet ? "the host's" : "none"}) cannot be changed while it runs`,
        );
      if (row.state === "running" && rt?.hasEgressProxy) rt.setEgress(parseEgressPolicy(settings.network));
      await this.store.setSettings(id, settings);
      const live = this.liveRows.get(id);
      if (live) live.settings = settings;
    });
    await this.store.audit({ tenant: tenant.id, sandbox: id, event: "network", detail: { ...egress } });
  }

  async pause(tenant: Tenant, id: string, memory?: unknown): Promise<void> {
    await this.usable(tenant, id);
    const keep = keepsMemory(memory, "memory");
    let frozen = false;
    await this.exclusive(id, async () => {
      const row = await this.usable(tenant, id);
      if (row.state === "paused") throw new ApiError(409, `sandbox '${id}' is already paused`);
      if (row.node !== this.node) throw new ApiError(502, `sandbox '${id}' runs on node '${row.node}'`);
      frozen = keep && (await this.freezeToPaused(row, "requested"));
      // keepMemory asked for explicitly where this backend cannot freeze: refused, not done without.
      if (keep && !frozen && memory === true)
        throw new ApiError(
          400,
          `memory: true is not supported for sandbox '${id}': its backend cannot freeze it (pause with keepMemory: false)`,
        );
      if (!frozen) await this.stopToPaused(row, "requested");
    });
    await this.store.audit({ tenant: tenant.id, sandbox: id, event: "pause", detail: { memory: frozen } });
  }

  /**
   * Pause with memory: every process frozen where it stands, the runtime kept aside with its slot.
   * False (nothing changed) when the backend cannot freeze it.
   */
  private async freezeToPaused(row: SandboxRow, reason: string): Promise<boolean> {
    const rt = this.runtimes.get(row.id);
    if (!rt?.alive || !(await rt.freeze(true).catch(() => false))) return false;
    this.runtimes.delete(row.id);
    this.liveRows.delete(row.id);
    this.frozen.set(row.id, { rt, since: Date.now() });
    await this.store.setState(row.id, "paused", `${reason} (memory kept)`);
    await this.store.setEndAt(row.id, Date.now() + this.pausedRetentionMs);
    return true;
  }

  /** A frozen pause becomes a filesystem-only one: its processes end, its slot is freed. */
  private async unfreezeToFiles(id: string, why: string): Promise<void> {
    const f = this.frozen.get(id);
    if (!f) return;
    this.frozen.delete(id);
    await f.rt.stop();
    this.queue.release();
    const row = await this.store.sandbox(id);
    if (row)
      await this.store.audit({
        tenant: row.tenantId,
        sandbox: id,
        event: "pause",
        detail: { memory: false, reason: why },
      });
  }

  /** Pause = stop every process and keep the files (the workspace folder is the snapshot). */
  private async stopToPaused(row: SandboxRow, reason: string): Promise<void> {
    const rt = this.runtimes.get(row.id);
    this.runtimes.delete(row.id);
    this.liveRows.delete(row.id);
    if (rt) await rt.stop();
    await this.store.setState(row.id, "paused", reason);
    // A paused sandbox's files are kept for pausedRetentionMs, then the reaper removes them.
    await this.store.setEndAt(row.id, Date.now() + this.pausedRetentionMs);
    this.queue.release();
  }

  /** Connect: a running sandbox as is (its timeout extended if asked), a paused one resumed. */
  async connect(tenant: Tenant, id: string, timeout: unknown, signal?: AbortSignal): Promise<SandboxRow> {
    await this.usable(tenant, id);
    const t = timeout === undefined ? undefined : this.timeoutSeconds(timeout, tenant);
    const row = await this.exclusive(id, async () => {
      const row = await this.usable(tenant, id);
      if (row.state === "running") {
        if (t !== undefined) await this.store.setEndAt(id, Math.max(row.endAt, Date.now() + t * 1000));
        return (await this.store.sandbox(id)) as SandboxRow;
      }
      // A paused sandbox's files are on its node's disk: only that node can resume it.
      if (row.node !== this.node) throw new ApiError(502, `sandbox '${id}' is paused on node '${row.node}'`);
      const spec = this.templates[row.templateId] ?? this.tenantTemplate?.(tenant.id, row.templateId);
      if (!spec) throw new ApiError(404, `template '${row.templateId}' of sandbox '${id}' no longer exists`);
      await this.checkQuota(tenant, spec);
      // A frozen sandbox still holds its slot.
      const frozen = this.frozen.get(id);
      if (!frozen) await this.acquire(tenant, signal);
      // Running (and counted against the quota) before it starts, as a create is.
      const refusal = await this.store
        .resumeWithinQuota(id, Date.now() + (t ?? DEFAULT_TIMEOUT_S) * 1000, this.node)
        .catch((e: Error) => e.message);
      if (refusal) {
        if (!frozen) this.queue.release();
        throw new ApiError(429, refusal);
      }
      try {
        if (frozen) {
          this.frozen.delete(id);
          // Thawed where it stood; a sandbox that cannot be (its agent died meanwhile) starts
          // afresh on its files, as a filesystem-only resume.
          const thawed = (await frozen.rt.freeze(false).catch(() => false)) && frozen.rt.alive;
          if (thawed) this.adopt({ ...row, state: "running", node: this.node }, frozen.rt);
          else {
            await frozen.rt.stop();
            await this.startRuntime(row, spec);
          }
        } else await this.startRuntime(row, spec);
      } catch (e) {
        this.queue.release();
        await this.store.setState(id, "paused", "resume failed");
        throw new ApiError(500, `sandbox could not be resumed: ${(e as Error).message}`);
      }
      await this.store.audit({ tenant: tenant.id, sandbox: id, event: "resume" });
      return (await this.store.sandbox(id)) as SandboxRow;
    });
    return row;
  }

  /**
   * A paused sandbox of this node created with `autoResume`, resumed because traffic arrived for
   * it (its envd or one of its ports, with the right token); undefined when it may not be.
   */
  async resumeForTraffic(row: SandboxRow): Promise<SandboxRow | undefined> {
    // Traffic that comes while the timeout's pause is under way waits for it, then resumes.
    if (row.state === "running" && this.busy.has(row.id)) {
      await this.busy.get(row.id)?.catch(() => {});
      row = (await this.store.sandbox(row.id)) ?? row;
    }
    if (row.state !== "paused" || row.settings?.autoResume !== true || row.node !== this.node)
      return undefined;
    const tenant = await this.store.tenant(row.tenantId);
    if (!tenant) return undefined;
    const resumed = await this.connect(tenant, row.id, undefined);
    await this.store.audit({ tenant: tenant.id, sandbox: row.id, event: "auto-resume" });
    return resumed;
  }

  /**
   * Forks a running sandbox of this node: its files are captured once, while it runs on
   * untouched, and `count` new sandboxes start from that capture (with its template,
   * environment, internet access and metadata). Each fork succeeds or fails on its own.
   * Processes are not carried over (README: what each backend can keep).
   */
  async fork(
    tenant: Tenant,
    id: string,
    body: { timeout?: unknown; count?: unknown },
    signal?: AbortSignal,
  ): Promise<ForkResult[]> {
    const count = body.count === undefined || body.count === null ? 1 : body.count;
    if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > 100)
      throw new ApiError(400, "count must be a whole number 1..100");
    // E2B's default for forks (its API's SandboxForkRequest): 15 s unless asked for more.
    const timeout =
      body.timeout === undefined || body.timeout === null
        ? Math.min(FORK_TIMEOUT_S, tenant.maxLifetimeSec)
        : body.timeout;
    this.timeoutSeconds(timeout, tenant);
    const row = await this.usable(tenant, id);
    if (row.state !== "running") throw new ApiError(409, `sandbox '${id}' is not running`);
    if (row.node !== this.node) throw new ApiError(502, `sandbox '${id}' runs on node '${row.node}'`);
    // One lifecycle change at a time: a pause or kill waits for the capture, not the reverse.
    const staged = await this.exclusive(id, async () => {
      const now = await this.usable(tenant, id);
      if (now.state !== "running") throw new ApiError(409, `sandbox '${id}' is not running`);
      return this.snapshots.stage(this.workspaceOf(id)).catch((e: Error) => {
        throw new ApiError(500, `sandbox '${id}' could not be captured: ${e.message}`);
      });
    });
    try {
      const settled = await Promise.allSettled(
        Array.from({ length: count }, () =>
          this.create(
            tenant,
            {
              templateID: row.templateId,
              timeout,
              metadata: row.metadata,
              envVars: row.envs,
              allow_internet_access: row.internet,
              autoPause: row.autoPause,
              ...(row.settings
                ? { network: row.settings.network, autoResume: { enabled: row.settings.autoResume } }
                : {}),
            },
            signal,
            staged.files,
          ),
        ),
      );
      const results = settled.map((r): ForkResult => {
        if (r.status === "fulfilled") return { row: r.value };
        const e = r.reason;
        return { error: e instanceof ApiError ? e : new ApiError(500, (e as Error).message) };
      });
      await this.store.audit({
        tenant: tenant.id,
        sandbox: id,
        event: "fork",
        detail: {
          count,
          forks: results.flatMap((r) => ("row" in r ? [r.row.id] : [])),
          failed: results.filter((r) => "error" in r).length,
        },
      });
      return results;
    } finally {
      staged.drop();
    }
  }

  /** A snapshot of a sandbox's files (running or paused), kept until the tenant deletes it. */
  async createSnapshot(tenant: Tenant, id: string, name: unknown): Promise<SnapshotRecord> {
    if (name !== undefined && name !== null && typeof name !== "string")
      throw new ApiError(400, "name must be a string");
    await this.usable(tenant, id);
    const record = await this.exclusive(id, async () => {
      const row = await this.usable(tenant, id);
      if (row.node !== this.node) throw new ApiError(502, `sandbox '${id}' is on node '${row.node}'`);
      try {
        return await this.snapshots.create(
          tenant.id,
          { sandboxId: id, templateId: row.templateId, workspace: this.workspaceOf(id) },
          typeof name === "string" ? name : undefined,
        );
      } catch (e) {
        if (e instanceof SnapshotError) throw new ApiError(e.status, e.message);
        throw new ApiError(500, `the snapshot of sandbox '${id}' could not be made: ${(e as Error).message}`);
      }
    });
    await this.store.audit({
      tenant: tenant.id,
      sandbox: id,
      event: "snapshot",
      detail: { snapshot: record.id },
    });
    return record;
  }

  async deleteSnapshot(tenant: Tenant, snapshotId: string): Promise<void> {
    if (snapshotId in this.templates)
      throw new ApiError(
        400,
        `'${snapshotId}' is a template of the service, not a snapshot: it cannot be deleted`,
      );
    if (!this.snapshots.remove(tenant.id, snapshotId))
      throw new ApiError(404, `snapshot '${snapshotId}' not found`);
    await this.store.audit({ tenant: tenant.id, event: "snapshot-delete", detail: { snapshot: snapshotId } });
  }

  /** Ends what expired: kill, or pause for sandboxes created with autoPause. */
  async reap(now = Date.now()): Promise<string[]> {
    const gone: string[] = [];
    const running = await this.store.sandboxesOnNode(this.node, ["running"]);
    for (const row of running) {
      if (row.endAt > now || this.busy.has(row.id)) continue;
      if (row.autoPause)
        await this.exclusive(row.id, async () => {
          const frozen =
            row.settings?.autoPauseMemory !== false && (await this.freezeToPaused(row, "timeout"));
          if (!frozen) await this.stopToPaused(row, "timeout");
        });
      else await this.end(row.id, "killed", "timeout");
      this.metrics.reaps.inc({ reason: row.autoPause ? "timeout-pause" : "timeout" });
      await this.store.audit({
        tenant: row.tenantId,
        sandbox: row.id,
        event: "reap",
        detail: { reason: "timeout" },
      });
      gone.push(row.id);
    }
    for (const row of await this.store.sandboxesOnNode(this.node, ["paused"])) {
      if (row.endAt > now || this.busy.has(row.id)) continue;
      await this.end(row.id, "killed", "paused too long");
      this.metrics.reaps.inc({ reason: "paused-retention" });
      await this.store.audit({
        tenant: row.tenantId,
        sandbox: row.id,
        event: "reap",
        detail: { reason: "paused too long" },
      });
      gone.push(row.id);
    }
    // Frozen for too long: memory is given back, files kept.
    for (const [id, f] of [...this.frozen]) {
      if (now - f.since < this.frozenLimitMs || this.busy.has(id)) continue;
      await this.exclusive(id, () => this.unfreezeToFiles(id, "kept frozen too long"));
    }
    // Runtimes whose rows say they no longer run here (killed while this node did not answer,
    // marked lost by the other nodes while this one was cut off) are stopped.
    const mine = new Set(running.map((r) => r.id));
    for (const id of [...this.runtimes.keys()]) {
      if (mine.has(id) || this.busy.has(id)) continue;
      const row = await this.store.sandbox(id);
      if (row?.state === "running" && row.node === this.node) continue;
      await this.exclusive(id, () => this.stopLocal(id, true));
      gone.push(id);
    }
    return gone;
  }

  /**
   * Fills a new sandbox's folder with a copy of `files`, owned by the uid the sandbox runs as:
   * a folder made here before the sandbox starts, or a warm sandbox's (`exists`).
   */
  private async seedFolder(id: string, files: string, exists = false): Promise<void> {
    const ws = this.workspaceOf(id);
    if (!exists) mkdirSync(ws, { mode: 0o700 });
    const user = this.users?.userOf(this.folderName(id));
    if (user && !exists) chownSync(ws, user.uid, user.gid);
    await copyWorkspace(files, ws, user);
    // The copy is of what the source's sandbox made: a home it swapped for a link is replaced
    // by a real one here (a warm sandbox runs on this folder already; a cold one gets it again).
    prepareWorkspace(ws, user);
  }

  private removeFiles(id: string): void {
    const uid = lstatSync(this.workspaceOf(id), { throwIfNoEntry: false })?.uid;
    rmSync(this.workspaceOf(id), { recursive: true, force: true });
    if (uid !== undefined) this.users?.release(uid);
  }

  /** Stops the reaper and every runtime; running sandboxes stay "running" in the store (a restart pauses them). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.reaper) clearInterval(this.reaper);
    if (this.sampler) clearInterval(this.sampler);
    await this.pool.close();
    // Creates, resumes, pauses and kills under way end first (a start that ends now stops
    // itself, see launch), bounded: a stuck one must not hold up the stop.
    const pending = [...this.busy.values()].map((p) => p.catch(() => {}));
    if (pending.length)
      await Promise.race([Promise.all(pending), new Promise((r) => setTimeout(r, 15_000).unref())]);
    const all = [...this.runtimes.values(), ...[...this.frozen.values()].map((f) => f.rt)];
    this.frozen.clear();
    this.runtimes.clear();
    this.liveRows.clear();
    await Promise.all(all.map((rt) => rt.stop()));
  }
}
