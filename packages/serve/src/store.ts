// The service's state in SQLite (the one-node default): tenants and their limits, API keys
// (scrypt hashes only), sandboxes with their lifecycle, and the audit log. Everything a restart
// needs to find, reap or resume what it left behind is here.
import { chmodSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";

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
}

export interface AuditRecord {
  tenant: string;
  sandbox?: string;
  event: string;
  detail?: Record<string, unknown>;
}

export const DEFAULT_LIMITS: TenantLimits = {
  maxSandboxes: 20,
  maxCpus: 20,
  maxMemoryMB: 20 * 1024,
  maxLifetimeSec: 24 * 3600,
};

const SCHEMA = `
CREATE TABLE IF NOT EXISTS tenants (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL,
  max_sandboxes INTEGER NOT NULL, max_cpus REAL NOT NULL, max_memory_mb INTEGER NOT NULL,
  max_lifetime_s INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id), name TEXT NOT NULL,
  salt BLOB NOT NULL, hash BLOB NOT NULL, created_at INTEGER NOT NULL, revoked_at INTEGER);
CREATE TABLE IF NOT EXISTS sandboxes (
  id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, template_id TEXT NOT NULL, backend TEXT NOT NULL,
  state TEXT NOT NULL, metadata TEXT NOT NULL, envs TEXT NOT NULL, internet INTEGER NOT NULL,
  cpus REAL NOT NULL, memory_mb INTEGER NOT NULL, started_at INTEGER NOT NULL,
  end_at INTEGER NOT NULL, auto_pause INTEGER NOT NULL, node TEXT NOT NULL, token TEXT NOT NULL,
  ended_at INTEGER, end_reason TEXT);
CREATE INDEX IF NOT EXISTS sandboxes_tenant ON sandboxes(tenant_id, state, started_at);
CREATE INDEX IF NOT EXISTS sandboxes_token ON sandboxes(token);
CREATE TABLE IF NOT EXISTS audit (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, time INTEGER NOT NULL, tenant TEXT NOT NULL,
  sandbox TEXT, event TEXT NOT NULL, detail TEXT);
`;

interface RawSandbox {
  id: string;
  tenant_id: string;
  template_id: string;
  backend: string;
  state: SandboxState;
  metadata: string;
  envs: string;
  internet: number;
  cpus: number;
  memory_mb: number;
  started_at: number;
  end_at: number;
  auto_pause: number;
  node: string;
  token: string;
  ended_at: number | null;
  end_reason: string | null;
}

function sandboxOf(r: RawSandbox): SandboxRow {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    templateId: r.template_id,
    backend: r.backend,
    state: r.state,
    metadata: JSON.parse(r.metadata) as Record<string, string>,
    envs: JSON.parse(r.envs) as Record<string, string>,
    internet: r.internet === 1,
    cpus: r.cpus,
    memoryMB: r.memory_mb,
    startedAt: r.started_at,
    endAt: r.end_at,
    autoPause: r.auto_pause === 1,
    node: r.node,
    token: r.token,
    endedAt: r.ended_at,
    endReason: r.end_reason,
  };
}

interface RawTenant {
  id: string;
  name: string;
  created_at: number;
  max_sandboxes: number;
  max_cpus: number;
  max_memory_mb: number;
  max_lifetime_s: number;
}

function tenantOf(r: RawTenant): Tenant {
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

export class Store {
  readonly db: Database.Database;

  constructor(path: string) {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.db = new Database(path);
    // Keys are hashed, but access tokens and tenants' metadata are not: the owner only.
    if (path !== ":memory:") chmodSync(path, 0o600);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(SCHEMA);
  }

  close(): void {
    this.db.close();
  }

  // --- tenants and keys ---

  upsertTenant(id: string, name: string, limits: TenantLimits): Tenant {
    this.db
      .prepare(
        `INSERT INTO tenants (id, name, created_at, max_sandboxes, max_cpus, max_memory_mb, max_lifetime_s)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET max_sandboxes = excluded.max_sandboxes, max_cpus = excluded.max_cpus,
           max_memory_mb = excluded.max_memory_mb, max_lifetime_s = excluded.max_lifetime_s`,
      )
      .run(
        id,
        name,
        Date.now(),
        limits.maxSandboxes,
        limits.maxCpus,
        limits.maxMemoryMB,
        limits.maxLifetimeSec,
      );
    return this.tenant(id) as Tenant;
  }

  tenant(id: string): Tenant | undefined {
    const r = this.db.prepare("SELECT * FROM tenants WHERE id = ?").get(id) as RawTenant | undefined;
    return r ? tenantOf(r) : undefined;
  }

  tenantByName(name: string): Tenant | undefined {
    const r = this.db.prepare("SELECT * FROM tenants WHERE name = ?").get(name) as RawTenant | undefined;
    return r ? tenantOf(r) : undefined;
  }

  insertKey(k: Omit<KeyRow, "revokedAt">): void {
    this.db
      .prepare("INSERT INTO api_keys (id, tenant_id, name, salt, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(k.id, k.tenantId, k.name, k.salt, k.hash, k.createdAt);
  }

  key(id: string): KeyRow | undefined {
    const r = this.db.prepare("SELECT * FROM api_keys WHERE id = ?").get(id) as
      | {
          id: string;
          tenant_id: string;
          name: string;
          salt: Buffer;
          hash: Buffer;
          created_at: number;
          revoked_at: number | null;
        }
      | undefined;
    return r
      ? {
          id: r.id,
          tenantId: r.tenant_id,
          name: r.name,
          salt: r.salt,
          hash: r.hash,
          createdAt: r.created_at,
          revokedAt: r.revoked_at,
        }
      : undefined;
  }

  listKeys(): Array<{
    id: string;
    tenant: string;
    name: string;
    createdAt: number;
    revokedAt: number | null;
  }> {
    return (
      this.db
        .prepare(
          "SELECT k.id, t.name AS tenant, k.name, k.created_at, k.revoked_at FROM api_keys k JOIN tenants t ON t.id = k.tenant_id ORDER BY k.created_at",
        )
        .all() as Array<{
        id: string;
        tenant: string;
        name: string;
        created_at: number;
        revoked_at: number | null;
      }>
    ).map((r) => ({
      id: r.id,
      tenant: r.tenant,
      name: r.name,
      createdAt: r.created_at,
      revokedAt: r.revoked_at,
    }));
  }

  revokeKey(id: string): boolean {
    return (
      this.db
        .prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
        .run(Date.now(), id).changes > 0
    );
  }

  // --- sandboxes ---

  insertSandbox(s: SandboxRow): void {
    this.db
      .prepare(
        `INSERT INTO sandboxes (id, tenant_id, template_id, backend, state, metadata, envs, internet, cpus,
           memory_mb, started_at, end_at, auto_pause, node, token, ended_at, end_reason)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)`,
      )
      .run(
        s.id,
        s.tenantId,
        s.templateId,
        s.backend,
        s.state,
        JSON.stringify(s.metadata),
        JSON.stringify(s.envs),
        s.internet ? 1 : 0,
        s.cpus,
        s.memoryMB,
        s.startedAt,
        s.endAt,
        s.autoPause ? 1 : 0,
        s.node,
        s.token,
      );
  }

  sandbox(id: string): SandboxRow | undefined {
    const r = this.db.prepare("SELECT * FROM sandboxes WHERE id = ?").get(id) as RawSandbox | undefined;
    return r ? sandboxOf(r) : undefined;
  }

  /** Sandboxes of a tenant in the given states, newest first, after the paging cursor. */
  listSandboxes(
    tenantId: string,
    states: SandboxState[],
    after?: { startedAt: number; id: string },
    limit = 1000,
  ): SandboxRow[] {
    const marks = states.map(() => "?").join(",");
    const cursor = after ? "AND (started_at < ? OR (started_at = ? AND id < ?))" : "";
    const args: unknown[] = [tenantId, ...states];
    if (after) args.push(after.startedAt, after.startedAt, after.id);
    args.push(limit);
    return (
      this.db
        .prepare(
          `SELECT * FROM sandboxes WHERE tenant_id = ? AND state IN (${marks}) ${cursor}
           ORDER BY started_at DESC, id DESC LIMIT ?`,
        )
        .all(...args) as RawSandbox[]
    ).map(sandboxOf);
  }

  /** The sandbox an access token belongs to (tokens are 24 random bytes, one per sandbox). */
  sandboxByToken(token: string): SandboxRow | undefined {
    const r = this.db.prepare("SELECT * FROM sandboxes WHERE token = ?").get(token) as RawSandbox | undefined;
    return r ? sandboxOf(r) : undefined;
  }

  sandboxesOnNode(node: string, states: SandboxState[]): SandboxRow[] {
    const marks = states.map(() => "?").join(",");
    return (
      this.db
        .prepare(`SELECT * FROM sandboxes WHERE node = ? AND state IN (${marks})`)
        .all(node, ...states) as RawSandbox[]
    ).map(sandboxOf);
  }

  /** What a tenant's running sandboxes use (for quotas). */
  usage(tenantId: string): { sandboxes: number; cpus: number; memoryMB: number } {
    const r = this.db
      .prepare(
        "SELECT COUNT(*) AS n, COALESCE(SUM(cpus), 0) AS c, COALESCE(SUM(memory_mb), 0) AS m FROM sandboxes WHERE tenant_id = ? AND state = 'running'",
      )
      .get(tenantId) as { n: number; c: number; m: number };
    return { sandboxes: r.n, cpus: r.c, memoryMB: r.m };
  }

  countByState(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.db
      .prepare("SELECT state, COUNT(*) AS n FROM sandboxes GROUP BY state")
      .all() as Array<{
      state: string;
      n: number;
    }>)
      out[r.state] = r.n;
    return out;
  }

  setState(id: string, state: SandboxState, reason?: string): void {
    const ended = state === "killed" || state === "lost";
    this.db
      .prepare("UPDATE sandboxes SET state = ?, ended_at = ?, end_reason = ? WHERE id = ?")
      .run(state, ended ? Date.now() : null, reason ?? null, id);
  }

  setEndAt(id: string, endAt: number): void {
    this.db.prepare("UPDATE sandboxes SET end_at = ? WHERE id = ?").run(endAt, id);
  }

  resumed(id: string, endAt: number, node: string): void {
    this.db
      .prepare("UPDATE sandboxes SET state = 'running', end_at = ?, node = ? WHERE id = ?")
      .run(endAt, node, id);
  }

  // --- audit ---

  audit(r: AuditRecord): void {
    this.db
      .prepare("INSERT INTO audit (time, tenant, sandbox, event, detail) VALUES (?, ?, ?, ?, ?)")
      .run(Date.now(), r.tenant, r.sandbox ?? null, r.event, r.detail ? JSON.stringify(r.detail) : null);
  }

  auditLog(
    limit = 100,
    sandbox?: string,
  ): Array<{
    time: number;
    tenant: string;
    sandbox: string | null;
    event: string;
    detail: Record<string, unknown> | null;
  }> {
    const rows = (
      sandbox
        ? this.db
            .prepare("SELECT * FROM audit WHERE sandbox = ? ORDER BY seq DESC LIMIT ?")
            .all(sandbox, limit)
        : this.db.prepare("SELECT * FROM audit ORDER BY seq DESC LIMIT ?").all(limit)
    ) as Array<{
      time: number;
      tenant: string;
      sandbox: string | null;
      event: string;
      detail: string | null;
    }>;
    return rows
      .reverse()
      .map((r) => ({ ...r, detail: r.detail ? (JSON.parse(r.detail) as Record<string, unknown>) : null }));
  }
}
