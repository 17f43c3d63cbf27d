// The service's state in SQLite (the one-node default, <data>/serve.db in WAL mode). The calls
// are synchronous underneath and async only to fit the Store interface; each quota check and
// its write run in one IMMEDIATE transaction, so even two processes on the file cannot race.

import { chmodSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { SandboxSettings } from "./sandbox-settings.js";
import {
  type AuditEntry,
  type AuditRecord,
  type KeyListing,
  type KeyRow,
  type NodeInfo,
  type NodeRow,
  quotaRefusal,
  type SandboxRow,
  type SandboxState,
  type Store,
  type Tenant,
  type TenantLimits,
  type Usage,
} from "./store.js";
import {
  auditEntryOf,
  keyListingOf,
  keyOf,
  LIST_KEYS_SQL,
  nodeOf,
  type RawKey,
  type RawNode,
  type RawSandbox,
  type RawTenant,
  sandboxOf,
  sandboxValues,
  tenantOf,
} from "./store-rows.js";

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
  ended_at INTEGER, end_reason TEXT, settings TEXT NOT NULL DEFAULT '{}');
CREATE INDEX IF NOT EXISTS sandboxes_tenant ON sandboxes(tenant_id, state, started_at);
CREATE INDEX IF NOT EXISTS sandboxes_token ON sandboxes(token);
CREATE INDEX IF NOT EXISTS sandboxes_node ON sandboxes(node, state);
CREATE TABLE IF NOT EXISTS audit (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, time INTEGER NOT NULL, tenant TEXT NOT NULL,
  sandbox TEXT, event TEXT NOT NULL, detail TEXT);
CREATE TABLE IF NOT EXISTS nodes (
  name TEXT PRIMARY KEY, instance TEXT NOT NULL, api_url TEXT NOT NULL, sandbox_url TEXT NOT NULL,
  state TEXT NOT NULL, started_at INTEGER NOT NULL, heartbeat_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS auth_state (id INTEGER PRIMARY KEY CHECK (id = 1), generation INTEGER NOT NULL);
INSERT OR IGNORE INTO auth_state (id, generation) VALUES (1, 0);
`;

const BUMP_AUTH = "UPDATE auth_state SET generation = generation + 1 WHERE id = 1";

export class SqliteStore implements Store {
  readonly shared = false;
  readonly db: Database.Database;
  private readonly generationQuery: Database.Statement;

  constructor(path: string) {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.db = new Database(path);
    // Keys are hashed, but access tokens and tenants' metadata are not: the owner only.
    if (path !== ":memory:") chmodSync(path, 0o600);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(SCHEMA);
    // Databases made before the settings column (network rules, autoResume).
    const cols = this.db.prepare("PRAGMA table_info(sandboxes)").all() as Array<{ name: string }>;
    if (!cols.some((c) => c.name === "settings"))
      this.db.exec("ALTER TABLE sandboxes ADD COLUMN settings TEXT NOT NULL DEFAULT '{}'");
    this.generationQuery = this.db.prepare("SELECT generation FROM auth_state WHERE id = 1");
  }

  async close(): Promise<void> {
    this.db.close();
  }

  // --- tenants and keys ---

  async upsertTenant(id: string, name: string, limits: TenantLimits): Promise<Tenant> {
    this.db.transaction(() => {
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
      this.db.prepare(BUMP_AUTH).run();
    })();
    return this.tenantNow(id) as Tenant;
  }

  private tenantNow(id: string): Tenant | undefined {
    const r = this.db.prepare("SELECT * FROM tenants WHERE id = ?").get(id) as RawTenant | undefined;
    return r ? tenantOf(r) : undefined;
  }

  async tenant(id: string): Promise<Tenant | undefined> {
    return this.tenantNow(id);
  }

  async tenantByName(name: string): Promise<Tenant | undefined> {
    const r = this.db.prepare("SELECT * FROM tenants WHERE name = ?").get(name) as RawTenant | undefined;
    return r ? tenantOf(r) : undefined;
  }

  async insertKey(k: Omit<KeyRow, "revokedAt">): Promise<void> {
    this.db
      .prepare("INSERT INTO api_keys (id, tenant_id, name, salt, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(k.id, k.tenantId, k.name, k.salt, k.hash, k.createdAt);
  }

  async key(id: string): Promise<KeyRow | undefined> {
    const r = this.db.prepare("SELECT * FROM api_keys WHERE id = ?").get(id) as RawKey | undefined;
    return r ? keyOf(r) : undefined;
  }

  async listKeys(): Promise<KeyListing[]> {
    return (this.db.prepare(LIST_KEYS_SQL).all() as Parameters<typeof keyListingOf>[0][]).map(keyListingOf);
  }

  async revokeKey(id: string): Promise<boolean> {
    return this.db.transaction(() => {
      const changed =
        this.db
          .prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
          .run(Date.now(), id).changes > 0;
      if (changed) this.db.prepare(BUMP_AUTH).run();
      return changed;
    })();
  }

  async authGeneration(): Promise<number> {
    // Read on every request's key check: prepared once, a read of one row of the local file.
    return Number((this.generationQuery.get() as { generation: number } | undefined)?.generation ?? 0);
  }

  // --- sandboxes ---

  private usageNow(tenantId: string): Usage {
    const r = this.db
      .prepare(
        "SELECT COUNT(*) AS n, COALESCE(SUM(cpus), 0) AS c, COALESCE(SUM(memory_mb), 0) AS m FROM sandboxes WHERE tenant_id = ? AND state = 'running'",
      )
      .get(tenantId) as { n: number; c: number; m: number };
    return { sandboxes: r.n, cpus: r.c, memoryMB: r.m };
  }

  /** Runs `f` after checking the quota of `tenantId` for one more sandbox of `want`'s size. */
  private withinQuota(
    tenantId: string,
    want: { cpus: number; memoryMB: number },
    f: () => void,
  ): string | undefined {
    return this.db
      .transaction((): string | undefined => {
        const t = this.tenantNow(tenantId);
        if (!t) return "the tenant no longer exists";
        const refusal = quotaRefusal(t, this.usageNow(tenantId), want);
        if (refusal) return refusal;
        f();
        return undefined;
      })
      .immediate();
  }

  async insertSandboxWithinQuota(s: SandboxRow): Promise<string | undefined> {
    return this.withinQuota(s.tenantId, s, () =>
      this.db
        .prepare(
          `INSERT INTO sandboxes (id, tenant_id, template_id, backend, state, metadata, envs, internet, cpus,
             memory_mb, started_at, end_at, auto_pause, node, token, settings, ended_at, end_reason)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)`,
        )
        .run(...sandboxValues(s, (x) => (x ? 1 : 0))),
    );
  }

  private sandboxNow(id: string): SandboxRow | undefined {
    const r = this.db.prepare("SELECT * FROM sandboxes WHERE id = ?").get(id) as RawSandbox | undefined;
    return r ? sandboxOf(r) : undefined;
  }

  async sandbox(id: string): Promise<SandboxRow | undefined> {
    return this.sandboxNow(id);
  }

  async listSandboxes(
    tenantId: string,
    states: SandboxState[],
    after?: { startedAt: number; id: string },
    limit = 1000,
  ): Promise<SandboxRow[]> {
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

  async sandboxByToken(token: string): Promise<SandboxRow | undefined> {
    const r = this.db.prepare("SELECT * FROM sandboxes WHERE token = ?").get(token) as RawSandbox | undefined;
    return r ? sandboxOf(r) : undefined;
  }

  async sandboxesOnNode(node: string, states: SandboxState[]): Promise<SandboxRow[]> {
    const marks = states.map(() => "?").join(",");
    return (
      this.db
        .prepare(`SELECT * FROM sandboxes WHERE node = ? AND state IN (${marks})`)
        .all(node, ...states) as RawSandbox[]
    ).map(sandboxOf);
  }

  async usage(tenantId: string): Promise<Usage> {
    return this.usageNow(tenantId);
  }

  async countByState(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const r of this.db
      .prepare("SELECT state, COUNT(*) AS n FROM sandboxes GROUP BY state")
      .all() as Array<{ state: string; n: number }>)
      out[r.state] = r.n;
    return out;
  }

  async setState(id: string, state: SandboxState, reason?: string): Promise<void> {
    const ended = state === "killed" || state === "lost";
    this.db
      .prepare("UPDATE sandboxes SET state = ?, ended_at = ?, end_reason = ? WHERE id = ?")
      .run(state, ended ? Date.now() : null, reason ?? null, id);
  }

  async setEndAt(id: string, endAt: number): Promise<void> {
    this.db.prepare("UPDATE sandboxes SET end_at = ? WHERE id = ?").run(endAt, id);
  }

  async setSettings(id: string, settings: SandboxSettings): Promise<void> {
    this.db.prepare("UPDATE sandboxes SET settings = ? WHERE id = ?").run(JSON.stringify(settings), id);
  }

  async resumeWithinQuota(id: string, endAt: number, node: string): Promise<string | undefined> {
    const row = this.sandboxNow(id);
    if (!row) return `sandbox '${id}' not found`;
    let resumed = false;
    const refusal = this.withinQuota(row.tenantId, row, () => {
      resumed =
        this.db
          .prepare(
            "UPDATE sandboxes SET state = 'running', end_at = ?, node = ?, end_reason = NULL WHERE id = ? AND state = 'paused'",
          )
          .run(endAt, node, id).changes > 0;
    });
    return refusal ?? (resumed ? undefined : `sandbox '${id}' is not paused`);
  }

  // --- audit ---

  async audit(r: AuditRecord): Promise<void> {
    this.db
      .prepare("INSERT INTO audit (time, tenant, sandbox, event, detail) VALUES (?, ?, ?, ?, ?)")
      .run(Date.now(), r.tenant, r.sandbox ?? null, r.event, r.detail ? JSON.stringify(r.detail) : null);
  }

  async auditLog(limit = 100, sandbox?: string): Promise<AuditEntry[]> {
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
    return rows.reverse().map(auditEntryOf);
  }

  // --- nodes (one machine's processes sharing the file; the usual SQLite set-up is one node) ---

  async registerNode(n: NodeInfo, staleAfterMs: number): Promise<void> {
    const now = Date.now();
    const changes = this.db
      .prepare(
        `INSERT INTO nodes (name, instance, api_url, sandbox_url, state, started_at, heartbeat_at)
         VALUES (?, ?, ?, ?, 'up', ?, ?)
         ON CONFLICT(name) DO UPDATE SET instance = excluded.instance, api_url = excluded.api_url,
           sandbox_url = excluded.sandbox_url, state = 'up', started_at = excluded.started_at,
           heartbeat_at = excluded.heartbeat_at
         WHERE nodes.state <> 'up' OR nodes.heartbeat_at < ? OR nodes.instance = excluded.instance`,
      )
      .run(n.name, n.instance, n.apiUrl, n.sandboxUrl, now, now, now - staleAfterMs).changes;
    if (changes === 0)
      throw new Error(`node '${n.name}' is already running (it heartbeats): choose another --node name`);
  }

  async heartbeat(name: string, instance: string): Promise<boolean> {
    return (
      this.db
        .prepare("UPDATE nodes SET heartbeat_at = ?, state = 'up' WHERE name = ? AND instance = ?")
        .run(Date.now(), name, instance).changes > 0
    );
  }

  async nodes(): Promise<NodeRow[]> {
    return (this.db.prepare("SELECT * FROM nodes ORDER BY name").all() as RawNode[]).map(nodeOf);
  }

  async leaveNode(name: string, instance: string): Promise<void> {
    this.db
      .transaction(() => {
        const left = this.db
          .prepare("UPDATE nodes SET state = 'left' WHERE name = ? AND instance = ?")
          .run(name, instance).changes;
        if (left > 0)
          this.db
            .prepare(
              "UPDATE sandboxes SET state = 'paused', end_reason = 'node stopped' WHERE node = ? AND state = 'running'",
            )
            .run(name);
      })
      .immediate();
  }

  async markDeadNodes(afterMs: number): Promise<Array<{ node: string; sandboxes: string[] }>> {
    const now = Date.now();
    return this.db
      .transaction(() => {
        const dead = this.db
          .prepare("UPDATE nodes SET state = 'dead' WHERE state = 'up' AND heartbeat_at < ? RETURNING name")
          .all(now - afterMs) as Array<{ name: string }>;
        return dead.map(({ name }) => {
          const lost = this.db
            .prepare(
              `UPDATE sandboxes SET state = 'lost', ended_at = ?, end_reason = ?
               WHERE node = ? AND state IN ('running', 'paused') RETURNING id, tenant_id`,
            )
            .all(now, `node '${name}' stopped answering`, name) as Array<{ id: string; tenant_id: string }>;
          const audit = this.db.prepare(
            "INSERT INTO audit (time, tenant, sandbox, event, detail) VALUES (?, ?, ?, 'lost', ?)",
          );
          for (const s of lost) audit.run(now, s.tenant_id, s.id, JSON.stringify({ node: name }));
          return { node: name, sandboxes: lost.map((s) => s.id) };
        });
      })
      .immediate();
  }
}
