// The service's state in PostgreSQL, shared by several `hands serve` nodes. Same tables as the
// SQLite store plus the node registry; quota checks lock the tenant's row (SELECT … FOR UPDATE)
// for the transaction that inserts or resumes, so concurrent creates on different nodes cannot
// both take the last slot. Heartbeats use the database's clock, so the nodes' clocks may differ.
import pg from "pg";
import type { SandboxSettings } from "./sandbox-settings.js";
import {
  type AuditEntry,
  type AuditRecord,
  type AuthWatcher,
  type KeyListing,
  type KeyRow,
  type NodeInfo,
  type NodeRow,
  quotaRefusal,
  redact,
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
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at BIGINT NOT NULL,
  max_sandboxes INTEGER NOT NULL, max_cpus DOUBLE PRECISION NOT NULL, max_memory_mb INTEGER NOT NULL,
  max_lifetime_s INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id), name TEXT NOT NULL,
  salt BYTEA NOT NULL, hash BYTEA NOT NULL, created_at BIGINT NOT NULL, revoked_at BIGINT);
CREATE TABLE IF NOT EXISTS sandboxes (
  id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, template_id TEXT NOT NULL, backend TEXT NOT NULL,
  state TEXT NOT NULL, metadata TEXT NOT NULL, envs TEXT NOT NULL, internet BOOLEAN NOT NULL,
  cpus DOUBLE PRECISION NOT NULL, memory_mb INTEGER NOT NULL, started_at BIGINT NOT NULL,
  end_at BIGINT NOT NULL, auto_pause BOOLEAN NOT NULL, node TEXT NOT NULL, token TEXT NOT NULL,
  ended_at BIGINT, end_reason TEXT);
CREATE INDEX IF NOT EXISTS sandboxes_tenant ON sandboxes(tenant_id, state, started_at);
CREATE INDEX IF NOT EXISTS sandboxes_token ON sandboxes(token);
CREATE INDEX IF NOT EXISTS sandboxes_node ON sandboxes(node, state);
CREATE TABLE IF NOT EXISTS audit (
  seq BIGSERIAL PRIMARY KEY, time BIGINT NOT NULL, tenant TEXT NOT NULL,
  sandbox TEXT, event TEXT NOT NULL, detail TEXT);
CREATE INDEX IF NOT EXISTS audit_sandbox ON audit(sandbox, seq);
CREATE TABLE IF NOT EXISTS nodes (
  name TEXT PRIMARY KEY, instance TEXT NOT NULL, api_url TEXT NOT NULL, sandbox_url TEXT NOT NULL,
  state TEXT NOT NULL, started_at BIGINT NOT NULL, heartbeat_at BIGINT NOT NULL);
ALTER TABLE sandboxes ADD COLUMN IF NOT EXISTS settings TEXT NOT NULL DEFAULT '{}';
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS auth_generation BIGINT NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS auth_state (id INTEGER PRIMARY KEY CHECK (id = 1), generation BIGINT NOT NULL);
INSERT INTO auth_state (id, generation) VALUES (1, 0) ON CONFLICT DO NOTHING;
`;

/** The channel on which a change of a key's or a tenant's standing is announced to the nodes. */
const AUTH_CHANNEL = "hands_serve_auth";
/** The application_name of the connection that listens on it (to tell it apart in pg_stat_activity). */
export const AUTH_LISTENER = "hands-serve-auth-listener";

/** Bumps the auth generation and announces it (delivered when the transaction commits). */
const BUMP_AUTH = `WITH g AS (UPDATE auth_state SET generation = generation + 1 WHERE id = 1 RETURNING generation)
  SELECT pg_notify('${AUTH_CHANNEL}', generation::text) FROM g`;

/** Any number for the advisory lock that serialises schema set-up of nodes starting together. */
const SCHEMA_LOCK = 0x68616e64;
/** The database's clock in milliseconds. */
const DB_NOW = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

// BIGINT (int8) columns hold milliseconds and counts, all well inside a double's exact range.
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === 20
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

type Query = (text: string, values?: unknown[]) => Promise<pg.QueryResult>;

export class PostgresStore implements Store {
  readonly shared = true;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
  ) {}

  /** Connects and creates the tables if they are missing. */
  static async connect(url: string, o: { max?: number } = {}): Promise<PostgresStore> {
    const pool = new pg.Pool({
      connectionString: url,
      max: o.max ?? 10,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 30_000,
      types,
    });
    // An idle client whose server went away must not take the process down; the next query
    // gets a fresh connection (or the error, where someone is waiting for it).
    pool.on("error", () => {});
    const store = new PostgresStore(pool, url);
    try {
      await store.tx(async (q) => {
        await q("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK]);
        await q(SCHEMA);
      });
    } catch (e) {
      await pool.end().catch(() => {});
      throw new Error(`PostgreSQL at ${redact(url)}: ${(e as Error).message}`);
    }
    return store;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private q: Query = (text, values) => this.pool.query(text, values);

  private async tx<T>(f: (q: Query) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const q: Query = (text, values) => client.query(text, values);
    try {
      await q("BEGIN");
      const out = await f(q);
      await q("COMMIT");
      return out;
    } catch (e) {
      await q("ROLLBACK").catch(() => {});
      throw e;
    } finally {
      client.release();
    }
  }

  // --- tenants and keys ---

  async upsertTenant(id: string, name: string, limits: TenantLimits): Promise<Tenant> {
    return this.tx(async (q) => {
      const r = await q(
        `INSERT INTO tenants (id, name, created_at, max_sandboxes, max_cpus, max_memory_mb, max_lifetime_s)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (id) DO UPDATE SET max_sandboxes = excluded.max_sandboxes, max_cpus = excluded.max_cpus,
           max_memory_mb = excluded.max_memory_mb, max_lifetime_s = excluded.max_lifetime_s
         RETURNING *`,
        [
          id,
          name,
          Date.now(),
          limits.maxSandboxes,
          limits.maxCpus,
          limits.maxMemoryMB,
          limits.maxLifetimeSec,
        ],
      );
      await q(BUMP_AUTH);
      return tenantOf(r.rows[0] as RawTenant);
    });
  }

  async tenant(id: string): Promise<Tenant | undefined> {
    const r = await this.q("SELECT * FROM tenants WHERE id = $1", [id]);
    return r.rows[0] ? tenantOf(r.rows[0] as RawTenant) : undefined;
  }

  async tenantByName(name: string): Promise<Tenant | undefined> {
    const r = await this.q("SELECT * FROM tenants WHERE name = $1", [name]);
    return r.rows[0] ? tenantOf(r.rows[0] as RawTenant) : undefined;
  }

  async insertKey(k: Omit<KeyRow, "revokedAt">): Promise<void> {
    await this.q(
      "INSERT INTO api_keys (id, tenant_id, name, salt, hash, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
      [k.id, k.tenantId, k.name, k.salt, k.hash, k.createdAt],
    );
  }

  async key(id: string): Promise<KeyRow | undefined> {
    const r = (await this.q("SELECT * FROM api_keys WHERE id = $1", [id])).rows[0] as RawKey | undefined;
    return r ? keyOf(r) : undefined;
  }

  async listKeys(): Promise<KeyListing[]> {
    return ((await this.q(LIST_KEYS_SQL)).rows as Parameters<typeof keyListingOf>[0][]).map(keyListingOf);
  }

  async revokeKey(id: string): Promise<boolean> {
    return this.tx(async (q) => {
      const r = await q("UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL", [
        Date.now(),
        id,
      ]);
      if ((r.rowCount ?? 0) === 0) return false;
      await q(BUMP_AUTH);
      return true;
    });
  }

  async authGeneration(): Promise<number> {
    return Number((await this.q("SELECT generation FROM auth_state WHERE id = 1")).rows[0]?.generation ?? 0);
  }

  /**
   * A connection of its own that LISTENs for auth changes. A lost connection is reported and
   * made again (after a second, until closed); each (re)connection is reported with the
   * generation current once it listens, so nothing announced in between is missed.
   */
  async watchAuth(w: AuthWatcher): Promise<{ close(): Promise<void> }> {
    let closed = false;
    let client: pg.Client | undefined;
    let retry: NodeJS.Timeout | undefined;
    const connect = async (): Promise<void> => {
      const c = new pg.Client({
        connectionString: this.url,
        connectionTimeoutMillis: 5000,
        types,
        application_name: AUTH_LISTENER,
      });
      client = c;
      let lost = false;
      const onLost = () => {
        if (lost) return;
        lost = true;
        c.end().catch(() => {});
        if (closed) return;
        w.onLost();
        retry = setTimeout(() => void connect().catch(() => {}), 1000);
        retry.unref();
      };
      c.on("error", onLost);
      c.on("end", onLost);
      c.on("notification", (n) => {
        if (n.channel === AUTH_CHANNEL) w.onChange(Number(n.payload));
      });
      try {
        await c.connect();
        await c.query(`LISTEN ${AUTH_CHANNEL}`);
        const r = await c.query("SELECT generation FROM auth_state WHERE id = 1");
        if (!closed && !lost) w.onListening(Number(r.rows[0]?.generation ?? 0));
      } catch (e) {
        onLost();
        throw e;
      }
    };
    try {
      await connect();
    } catch (e) {
      // The first connection is the caller's to retry: nothing keeps trying behind its back.
      closed = true;
      if (retry) clearTimeout(retry);
      throw e;
    }
    return {
      close: async () => {
        closed = true;
        if (retry) clearTimeout(retry);
        await client?.end().catch(() => {});
      },
    };
  }

  async ackAuth(node: string, generation: number): Promise<void> {
    await this.q("UPDATE nodes SET auth_generation = GREATEST(auth_generation, $2) WHERE name = $1", [
      node,
      generation,
    ]);
  }

  async authLaggards(generation: number): Promise<string[]> {
    const r = await this.q(
      "SELECT name FROM nodes WHERE state = 'up' AND auth_generation < $1 ORDER BY name",
      [generation],
    );
    return r.rows.map((x: { name: string }) => x.name);
  }

  // --- sandboxes ---

  private async usageOf(q: Query, tenantId: string): Promise<Usage> {
    const r = (
      await q(
        "SELECT COUNT(*) AS n, COALESCE(SUM(cpus), 0) AS c, COALESCE(SUM(memory_mb), 0) AS m FROM sandboxes WHERE tenant_id = $1 AND state = 'running'",
        [tenantId],
      )
    ).rows[0] as { n: number; c: number; m: number };
    return { sandboxes: r.n, cpus: r.c, memoryMB: r.m };
  }

  /** Locks the tenant's row, checks one more sandbox of `want`'s size, then runs `f`. */
  private withinQuota(
    tenantId: string,
    want: { cpus: number; memoryMB: number },
    f: (q: Query) => Promise<string | undefined>,
  ): Promise<string | undefined> {
    return this.tx(async (q) => {
      const t = (await q("SELECT * FROM tenants WHERE id = $1 FOR UPDATE", [tenantId])).rows[0] as
        | RawTenant
        | undefined;
      if (!t) return "the tenant no longer exists";
      const refusal = quotaRefusal(tenantOf(t), await this.usageOf(q, tenantId), want);
      return refusal ?? (await f(q));
    });
  }

  async insertSandboxWithinQuota(s: SandboxRow): Promise<string | undefined> {
    return this.withinQuota(s.tenantId, s, async (q) => {
      await q(
        `INSERT INTO sandboxes (id, tenant_id, template_id, backend, state, metadata, envs, internet, cpus,
           memory_mb, started_at, end_at, auto_pause, node, token, settings, ended_at, end_reason)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, NULL, NULL)`,
        sandboxValues(s, (x) => x),
      );
      return undefined;
    });
  }

  async sandbox(id: string): Promise<SandboxRow | undefined> {
    const r = await this.q("SELECT * FROM sandboxes WHERE id = $1", [id]);
    return r.rows[0] ? sandboxOf(r.rows[0] as RawSandbox) : undefined;
  }

  async listSandboxes(
    tenantId: string,
    states: SandboxState[],
    after?: { startedAt: number; id: string },
    limit = 1000,
  ): Promise<SandboxRow[]> {
    const args: unknown[] = [tenantId, states, limit];
    let cursor = "";
    if (after) {
      args.push(after.startedAt, after.id);
      cursor = "AND (started_at < $4 OR (started_at = $4 AND id < $5))";
    }
    const r = await this.q(
      `SELECT * FROM sandboxes WHERE tenant_id = $1 AND state = ANY($2) ${cursor}
       ORDER BY started_at DESC, id DESC LIMIT $3`,
      args,
    );
    return (r.rows as RawSandbox[]).map(sandboxOf);
  }

  async sandboxByToken(token: string): Promise<SandboxRow | undefined> {
    const r = await this.q("SELECT * FROM sandboxes WHERE token = $1", [token]);
    return r.rows[0] ? sandboxOf(r.rows[0] as RawSandbox) : undefined;
  }

  async sandboxesOnNode(node: string, states: SandboxState[]): Promise<SandboxRow[]> {
    const r = await this.q("SELECT * FROM sandboxes WHERE node = $1 AND state = ANY($2)", [node, states]);
    return (r.rows as RawSandbox[]).map(sandboxOf);
  }

  usage(tenantId: string): Promise<Usage> {
    return this.usageOf(this.q, tenantId);
  }

  async countByState(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    const r = await this.q("SELECT state, COUNT(*) AS n FROM sandboxes GROUP BY state");
    for (const x of r.rows as Array<{ state: string; n: number }>) out[x.state] = x.n;
    return out;
  }

  async setState(id: string, state: SandboxState, reason?: string): Promise<void> {
    const ended = state === "killed" || state === "lost";
    await this.q("UPDATE sandboxes SET state = $1, ended_at = $2, end_reason = $3 WHERE id = $4", [
      state,
      ended ? Date.now() : null,
      reason ?? null,
      id,
    ]);
  }

  async setEndAt(id: string, endAt: number): Promise<void> {
    await this.q("UPDATE sandboxes SET end_at = $1 WHERE id = $2", [endAt, id]);
  }

  async setSettings(id: string, settings: SandboxSettings): Promise<void> {
    await this.q("UPDATE sandboxes SET settings = $1 WHERE id = $2", [JSON.stringify(settings), id]);
  }

  async resumeWithinQuota(id: string, endAt: number, node: string): Promise<string | undefined> {
    const row = await this.sandbox(id);
    if (!row) return `sandbox '${id}' not found`;
    return this.withinQuota(row.tenantId, row, async (q) => {
      const r = await q(
        "UPDATE sandboxes SET state = 'running', end_at = $1, node = $2, end_reason = NULL WHERE id = $3 AND state = 'paused'",
        [endAt, node, id],
      );
      return (r.rowCount ?? 0) > 0 ? undefined : `sandbox '${id}' is not paused`;
    });
  }

  // --- audit ---

  async audit(r: AuditRecord): Promise<void> {
    await this.q("INSERT INTO audit (time, tenant, sandbox, event, detail) VALUES ($1, $2, $3, $4, $5)", [
      Date.now(),
      r.tenant,
      r.sandbox ?? null,
      r.event,
      r.detail ? JSON.stringify(r.detail) : null,
    ]);
  }

  async auditLog(limit = 100, sandbox?: string): Promise<AuditEntry[]> {
    const r = sandbox
      ? await this.q("SELECT * FROM audit WHERE sandbox = $1 ORDER BY seq DESC LIMIT $2", [sandbox, limit])
      : await this.q("SELECT * FROM audit ORDER BY seq DESC LIMIT $1", [limit]);
    return (r.rows as Parameters<typeof auditEntryOf>[0][]).reverse().map(auditEntryOf);
  }

  // --- nodes ---

  async registerNode(n: NodeInfo, staleAfterMs: number): Promise<void> {
    const r = await this.q(
      `INSERT INTO nodes (name, instance, api_url, sandbox_url, state, started_at, heartbeat_at, auth_generation)
       VALUES ($1, $2, $3, $4, 'up', ${DB_NOW}, ${DB_NOW}, (SELECT generation FROM auth_state WHERE id = 1))
       ON CONFLICT (name) DO UPDATE SET instance = excluded.instance, api_url = excluded.api_url,
         sandbox_url = excluded.sandbox_url, state = 'up', started_at = excluded.started_at,
         heartbeat_at = excluded.heartbeat_at, auth_generation = excluded.auth_generation
       WHERE nodes.state <> 'up' OR nodes.heartbeat_at < ${DB_NOW} - $5 OR nodes.instance = excluded.instance`,
      [n.name, n.instance, n.apiUrl, n.sandboxUrl, staleAfterMs],
    );
    if ((r.rowCount ?? 0) === 0)
      throw new Error(`node '${n.name}' is already running (it heartbeats): choose another --node name`);
  }

  async heartbeat(name: string, instance: string): Promise<boolean> {
    const r = await this.q(
      `UPDATE nodes SET heartbeat_at = ${DB_NOW}, state = 'up' WHERE name = $1 AND instance = $2`,
      [name, instance],
    );
    return (r.rowCount ?? 0) > 0;
  }

  async nodes(): Promise<NodeRow[]> {
    return ((await this.q("SELECT * FROM nodes ORDER BY name")).rows as RawNode[]).map(nodeOf);
  }

  async leaveNode(name: string, instance: string): Promise<void> {
    await this.q(
      `WITH gone AS (UPDATE nodes SET state = 'left' WHERE name = $1 AND instance = $2 RETURNING name)
       UPDATE sandboxes SET state = 'paused', end_reason = 'node stopped'
       WHERE node IN (SELECT name FROM gone) AND state = 'running'`,
      [name, instance],
    );
  }

  async markDeadNodes(afterMs: number): Promise<Array<{ node: string; sandboxes: string[] }>> {
    // One statement: the row locks of the first UPDATE make a second node doing the same wait,
    // then find the node no longer 'up' — each dead node is handled exactly once.
    const r = await this.q(
      `WITH dead AS (
         UPDATE nodes SET state = 'dead' WHERE state = 'up' AND heartbeat_at < ${DB_NOW} - $1 RETURNING name),
       lost AS (
         UPDATE sandboxes s SET state = 'lost', ended_at = $2,
           end_reason = 'node ''' || s.node || ''' stopped answering'
         FROM dead WHERE s.node = dead.name AND s.state IN ('running', 'paused')
         RETURNING s.id, s.tenant_id, s.node),
       logged AS (
         INSERT INTO audit (time, tenant, sandbox, event, detail)
         SELECT $2, tenant_id, id, 'lost', json_build_object('node', node)::text FROM lost)
       SELECT dead.name, lost.id FROM dead LEFT JOIN lost ON lost.node = dead.name`,
      [afterMs, Date.now()],
    );
    const out = new Map<string, string[]>();
    for (const x of r.rows as Array<{ name: string; id: string | null }>) {
      const list = out.get(x.name) ?? [];
      if (x.id) list.push(x.id);
      out.set(x.name, list);
    }
    return [...out].map(([node, sandboxes]) => ({ node, sandboxes }));
  }
}
