// The service's state behind one interface: tenants and their limits, API keys (scrypt hashes
// only), sandboxes with their lifecycle, the audit log, and the nodes that share the state.
// SQLite (store-sqlite.ts) is the one-node default; PostgreSQL (store-postgres.ts) lets several
// nodes share it. Every call is async so both fit; quota checks and the write they guard are one
// transaction, so limits hold across nodes and concurrent creates.

import type { SandboxSettings } from "./sandbox-settings.js";

export type SandboxState = "running" | "paused" | "killed" | "lost";

export interface TenantLimits {
  maxSandboxes: number;
  maxCpus: number;
  maxMemoryMB: number;
  maxLifetimeSec: number;
}

export interface Tenant extends TenantLimits {
  id: string;
  name: string;
  createdAt: number;
}

export interface KeyRow {
  id: string;
  tenantId: string;
  name: string;
  salt: Buffer;
  hash: Buffer;
  createdAt: number;
  revokedAt: number | null;
}

export interface KeyListing {
  id: string;
  tenant: string;
  name: string;
  createdAt: number;
  revokedAt: number | null;
}

export interface SandboxRow {
  id: string;
  tenantId: string;
  templateId: string;
  backend: string;
  state: SandboxState;
  metadata: Record<string, string>;
  envs: Record<string, string>;
  internet: boolean;
  cpus: number;
  memoryMB: number;
  startedAt: number;
  endAt: number;
  autoPause: boolean;
  node: string;
  token: string;
  endedAt: number | null;
  endReason: string | null;
  /** Network and lifecycle settings (sandbox-settings.ts); absent: the defaults. */
  settings?: SandboxSettings;
}

export interface AuditRecord {
  tenant: string;
  sandbox?: string;
  event: string;
  detail?: Record<string, unknown>;
}

export interface AuditEntry {
  time: number;
  tenant: string;
  sandbox: string | null;
  event: string;
  detail: Record<string, unknown> | null;
}

export interface Usage {
  sandboxes: number;
  cpus: number;
  memoryMB: number;
}

/** A node of a cluster: where the other nodes reach it, and when it last said it is alive. */
export interface NodeInfo {
  name: string;
  /** Random per process: a second process under the same name is refused while the first lives. */
  instance: string;
  apiUrl: string;
  sandboxUrl: string;
}

export interface NodeRow extends NodeInfo {
  /** up: heartbeating; left: stopped cleanly; dead: missed its heartbeats (its sandboxes are lost). */
  state: "up" | "left" | "dead";
  startedAt: number;
  heartbeatAt: number;
}

export const DEFAULT_LIMITS: TenantLimits = {
  maxSandboxes: 20,
  maxCpus: 20,
  maxMemoryMB: 20 * 1024,
  maxLifetimeSec: 24 * 3600,
};

/** Why one more sandbox of `want`'s size would break the tenant's limits, or undefined if it fits. */
export function quotaRefusal(
  limits: TenantLimits,
  used: Usage,
  want: { cpus: number; memoryMB: number },
): string | undefined {
  if (used.sandboxes + 1 > limits.maxSandboxes)
    return `you have reached the maximum number of concurrent sandboxes (${limits.maxSandboxes})`;
  if (used.cpus + want.cpus > limits.maxCpus)
    return `this sandbox would exceed the tenant's CPU limit (${used.cpus} of ${limits.maxCpus} in use)`;
  if (used.memoryMB + want.memoryMB > limits.maxMemoryMB)
    return `this sandbox would exceed the tenant's memory limit (${used.memoryMB} of ${limits.maxMemoryMB} MB in use)`;
  return undefined;
}

/** Told of changes of keys' and tenants' standing made anywhere (PostgreSQL's LISTEN). */
export interface AuthWatcher {
  /** Listening (again), with the generation current from then on: caches made before are stale. */
  onListening(generation: number): void;
  /** A change was committed: the new generation. */
  onChange(generation: number): void;
  /** The connection is gone: nothing is heard until onListening again. */
  onLost(): void;
}

export interface Store {
  /** True when several nodes share this state (they then forward to each other). */
  readonly shared: boolean;
  close(): Promise<void>;

  /** Creates a tenant or sets its limits; bumps the auth generation in the same transaction. */
  upsertTenant(id: string, name: string, limits: TenantLimits): Promise<Tenant>;
  tenant(id: string): Promise<Tenant | undefined>;
  tenantByName(name: string): Promise<Tenant | undefined>;
  insertKey(k: Omit<KeyRow, "revokedAt">): Promise<void>;
  key(id: string): Promise<KeyRow | undefined>;
  listKeys(): Promise<KeyListing[]>;
  /** Revokes a key (false: no such active key); bumps the auth generation in the same transaction. */
  revokeKey(id: string): Promise<boolean>;
  /**
   * A counter bumped, in the same transaction, by every change of a key's or a tenant's
   * standing (a revoke, a tenant's limits): caches of verified keys are good while it stands.
   */
  authGeneration(): Promise<number>;
  /** Shared stores: announces each bump to every node as it commits. */
  watchAuth?(w: AuthWatcher): Promise<{ close(): Promise<void> }>;
  /** Shared stores: node `node` has dropped what it cached before `generation`. */
  ackAuth?(node: string, generation: number): Promise<void>;
  /** Shared stores: the nodes that are up and have not confirmed `generation` yet. */
  authLaggards?(generation: number): Promise<string[]>;

  /**
   * Inserts a running sandbox if its tenant's limits allow one more (checked and written in one
   * transaction, the tenant locked): undefined when inserted, else the reason it was refused.
   */
  insertSandboxWithinQuota(s: SandboxRow): Promise<string | undefined>;
  sandbox(id: string): Promise<SandboxRow | undefined>;
  /** Sandboxes of a tenant in the given states, newest first, after the paging cursor. */
  listSandboxes(
    tenantId: string,
    states: SandboxState[],
    after?: { startedAt: number; id: string },
    limit?: number,
  ): Promise<SandboxRow[]>;
  /** The sandbox an access token belongs to (tokens are 24 random bytes, one per sandbox). */
  sandboxByToken(token: string): Promise<SandboxRow | undefined>;
  sandboxesOnNode(node: string, states: SandboxState[]): Promise<SandboxRow[]>;
  /** What a tenant's running sandboxes use (for quotas). */
  usage(tenantId: string): Promise<Usage>;
  countByState(): Promise<Record<string, number>>;
  setState(id: string, state: SandboxState, reason?: string): Promise<void>;
  setEndAt(id: string, endAt: number): Promise<void>;
  /** Replaces a sandbox's settings (updateNetwork). */
  setSettings(id: string, settings: SandboxSettings): Promise<void>;
  /** Paused → running on `node`, within the tenant's limits as insertSandboxWithinQuota. */
  resumeWithinQuota(id: string, endAt: number, node: string): Promise<string | undefined>;

  audit(r: AuditRecord): Promise<void>;
  auditLog(limit?: number, sandbox?: string): Promise<AuditEntry[]>;

  /** Registers this process as node `name`; refused while another instance of it heartbeats. */
  registerNode(n: NodeInfo, staleAfterMs: number): Promise<void>;
  /** false: another instance has taken the name. */
  heartbeat(name: string, instance: string): Promise<boolean>;
  nodes(): Promise<NodeRow[]>;
  /** Clean stop: the node's running sandboxes become paused (their files stay on its disk). */
  leaveNode(name: string, instance: string): Promise<void>;
  /**
   * Nodes that are up but have not heartbeated for `afterMs` become dead and their running and
   * paused sandboxes lost, in one transaction (so exactly one node does it). Returns them.
   */
  markDeadNodes(afterMs: number): Promise<Array<{ node: string; sandboxes: string[] }>>;
}

/** A database URL without its password, for messages. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@]*@/, "//$1:***@");
}
