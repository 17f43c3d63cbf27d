// Rows as both stores' drivers return them (snake_case columns; SQLite's booleans are 0/1,
// PostgreSQL's are booleans) and the service's shapes they map to.
import type { SandboxSettings } from "./sandbox-settings.js";
import type { AuditEntry, KeyListing, KeyRow, NodeRow, SandboxRow, SandboxState, Tenant } from "./store.js";

export interface RawSandbox {
  id: string;
  tenant_id: string;
  template_id: string;
  backend: string;
  state: SandboxState;
  metadata: string;
  envs: string;
  internet: number | boolean;
  cpus: number;
  memory_mb: number;
  started_at: number;
  end_at: number;
  auto_pause: number | boolean;
  node: string;
  token: string;
  ended_at: number | null;
  end_reason: string | null;
  settings?: string | null;
}

export function sandboxOf(r: RawSandbox): SandboxRow {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    templateId: r.template_id,
    backend: r.backend,
    state: r.state,
    metadata: JSON.parse(r.metadata) as Record<string, string>,
    envs: JSON.parse(r.envs) as Record<string, string>,
    internet: r.internet === true || r.internet === 1,
    cpus: r.cpus,
    memoryMB: r.memory_mb,
    startedAt: r.started_at,
    endAt: r.end_at,
    autoPause: r.auto_pause === true || r.auto_pause === 1,
    node: r.node,
    token: r.token,
    endedAt: r.ended_at,
    endReason: r.end_reason,
    ...(r.settings && r.settings !== "{}" ? { settings: JSON.parse(r.settings) as SandboxSettings } : {}),
  };
}

/** A sandbox's column values in INSERT order (id … token); booleans as the driver wants them. */
export function sandboxValues(s: SandboxRow, bool: (b: boolean) => unknown): unknown[] {
  return [
    s.id,
    s.tenantId,
    s.templateId,
    s.backend,
    s.state,
    JSON.stringify(s.metadata),
    JSON.stringify(s.envs),
    bool(s.internet),
    s.cpus,
    s.memoryMB,
    s.startedAt,
    s.endAt,
    bool(s.autoPause),
    s.node,
    s.token,
    JSON.stringify(s.settings ?? {}),
  ];
}

export interface RawTenant {
  id: string;
  name: string;
  created_at: number;
  max_sandboxes: number;
  max_cpus: number;
  max_memory_mb: number;
  max_lifetime_s: number;
}

export function tenantOf(r: RawTenant): Tenant {
  return {
    id: r.id,
    name: r.name,
    createdAt: r.created_at,
    maxSandboxes: r.max_sandboxes,
    maxCpus: r.max_cpus,
    maxMemoryMB: r.max_memory_mb,
    maxLifetimeSec: r.max_lifetime_s,
  };
}

export interface RawKey {
  id: string;
  tenant_id: string;
  name: string;
  salt: Buffer;
  hash: Buffer;
  created_at: number;
  revoked_at: number | null;
}

export function keyOf(r: RawKey): KeyRow {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    name: r.name,
    salt: r.salt,
    hash: r.hash,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
  };
}

export const LIST_KEYS_SQL =
  "SELECT k.id, t.name AS tenant, k.name, k.created_at, k.revoked_at FROM api_keys k JOIN tenants t ON t.id = k.tenant_id ORDER BY k.created_at, k.id";

export function keyListingOf(r: {
  id: string;
  tenant: string;
  name: string;
  created_at: number;
  revoked_at: number | null;
}): KeyListing {
  return { id: r.id, tenant: r.tenant, name: r.name, createdAt: r.created_at, revokedAt: r.revoked_at };
}

export function auditEntryOf(r: {
  time: number;
  tenant: string;
  sandbox: string | null;
  event: string;
  detail: string | null;
}): AuditEntry {
  return {
    time: r.time,
    tenant: r.tenant,
    sandbox: r.sandbox,
    event: r.event,
    detail: r.detail ? (JSON.parse(r.detail) as Record<string, unknown>) : null,
  };
}

export interface RawNode {
  name: string;
  instance: string;
  api_url: string;
  sandbox_url: string;
  state: NodeRow["state"];
  started_at: number;
  heartbeat_at: number;
}

export function nodeOf(r: RawNode): NodeRow {
  return {
    name: r.name,
    instance: r.instance,
    apiUrl: r.api_url,
    sandboxUrl: r.sandbox_url,
    state: r.state,
    startedAt: r.started_at,
    heartbeatAt: r.heartbeat_at,
  };
}
