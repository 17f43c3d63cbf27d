// API keys: `e2b_` + 40 hex digits (the shape the SDK expects). The first 12 digits name the
// key's row; the whole key is checked against its scrypt hash.
//
// Verified keys are cached with their tenant, so a request costs neither scrypt nor a database
// read. The cache is good only while the store's auth generation stands — a counter every
// revoke and every change of a tenant's limits bumps in the same transaction:
// - SQLite (one node; `hands serve keys …` writes the same file from another process): the
//   counter is read with each check, a prepared read of one row of the local file;
// - PostgreSQL (several nodes): each node LISTENs for the bumps and drops its cache when one is
//   announced, then confirms it in its node row; a revoke or a limits change waits until every
//   node that is up has confirmed (or names those that did not). While a node does not hear the
//   announcements (its listening connection is lost), it reads the key and tenant every time.
import { createHash, randomBytes, randomUUID, scrypt, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";
import { DEFAULT_LIMITS, type Store, type Tenant, type TenantLimits } from "./store.js";

const scryptAsync = promisify(scrypt) as (key: string, salt: Buffer, len: number) => Promise<Buffer>;
const KEY_RE = /^e2b_([0-9a-f]{40})$/;
/** Even with nothing announced, a cached key is read again after this long. */
const CACHE_MS = 60_000;
const MAX_ENTRIES = 10_000;

export interface KeysOptions {
  /** This node's name when nodes share the store: it confirms each change it has applied. */
  node?: string;
  /** How long a revoke or a limits change waits for the nodes to confirm (default 5 s). */
  confirmTimeoutMs?: number;
  /** Shared stores: how often the generation is also read, in case an announcement was missed. */
  recheckMs?: number;
}

export class Keys {
  /** Verified keys (by SHA-256) with their tenant, as read in cache epoch `epoch`. */
  private readonly cache = new Map<string, { tenant: Tenant; epoch: number; until: number }>();
  /**
   * Keys whose scrypt check passed, with the hash they matched: a key row's hash never changes,
   * so after a change only the row and the tenant are read again, not scrypt run again.
   */
  private readonly proven = new Map<string, string>();
  private epoch = 0;
  /** The auth generation the cache belongs to (-1: not read yet). */
  private generation = -1;
  private acked = -1;
  /** Shared stores: the announcements are being heard. */
  private listening = false;
  private watch: { close(): Promise<void> } | undefined;
  private recheck: NodeJS.Timeout | undefined;
  /** Nodes that had not confirmed the last change this object made when it stopped waiting. */
  unconfirmed: string[] = [];

  constructor(
    private readonly store: Store,
    private readonly o: KeysOptions = {},
  ) {}

  /** For a serving node of a shared store: start hearing the changes (before serving). */
  async start(): Promise<void> {
    const watchAuth = this.store.watchAuth?.bind(this.store);
    if (!watchAuth) return;
    this.watch = await watchAuth({
      onListening: (g) => this.apply(g, true),
      onChange: (g) => this.apply(g, false),
      onLost: () => {
        this.listening = false;
        this.invalidate();
      },
    });
    // A missed announcement (or a failed confirmation) is caught up within recheckMs.
    let checking = false;
    this.recheck = setInterval(() => {
      if (checking || !this.listening) return;
      checking = true;
      void this.store
        .authGeneration()
        .then((g) => this.apply(g, false))
        .catch(() => {})
        .finally(() => {
          checking = false;
        });
    }, this.o.recheckMs ?? 2000);
    this.recheck.unref();
  }

  async close(): Promise<void> {
    if (this.recheck) clearInterval(this.recheck);
    this.listening = false;
    await this.watch?.close();
  }

  private invalidate(): void {
    this.epoch++;
    this.cache.clear();
  }

  /** A generation heard (or read): the cache is dropped if it is newer; the node confirms it. */
  private apply(g: number, relisten: boolean): void {
    if (relisten || g > this.generation) {
      this.invalidate();
      this.generation = Math.max(this.generation, g);
    }
    if (relisten) this.listening = true;
    const { node } = this.o;
    const ack = this.store.ackAuth?.bind(this.store);
    if (!node || !ack || this.acked >= this.generation) return;
    const upTo = this.generation;
    void ack(node, upTo)
      .then(() => {
        this.acked = Math.max(this.acked, upTo);
      })
      .catch(() => {});
  }

  /** Whether cached entries may answer now (SQLite: after reading the generation). */
  private async cacheUsable(): Promise<boolean> {
    if (this.store.watchAuth) return this.listening;
    const g = await this.store.authGeneration();
    if (g !== this.generation) {
      this.invalidate();
      this.generation = g;
    }
    return true;
  }

  /** After a change: waits until every node that is up has dropped what it cached before it. */
  private async confirm(): Promise<void> {
    this.unconfirmed = [];
    const laggards = this.store.authLaggards?.bind(this.store);
    if (!laggards) return;
    const g = await this.store.authGeneration();
    const deadline = Date.now() + (this.o.confirmTimeoutMs ?? 5000);
    for (;;) {
      const behind = await laggards(g);
      if (behind.length === 0) return;
      if (Date.now() >= deadline) {
        this.unconfirmed = behind;
        return;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Creates a key for a tenant (the tenant is created with default limits if new). */
  async create(
    tenantName: string,
    name = "default",
    limits?: Partial<TenantLimits>,
  ): Promise<{ key: string; id: string; tenant: Tenant }> {
    const existing = await this.store.tenantByName(tenantName);
    const tenant = await this.store.upsertTenant(existing?.id ?? randomUUID(), tenantName, {
      ...(existing ?? DEFAULT_LIMITS),
      ...(limits ?? {}),
    });
    const hex = randomBytes(20).toString("hex");
    const key = `e2b_${hex}`;
    const id = hex.slice(0, 12);
    const salt = randomBytes(16);
    const hash = await scryptAsync(key, salt, 32);
    await this.store.insertKey({ id, tenantId: tenant.id, name, salt, hash, createdAt: Date.now() });
    this.invalidate();
    // Changed limits of an existing tenant apply on every node before this returns.
    if (existing) await this.confirm();
    return { key, id, tenant };
  }

  /** Sets limits of an existing tenant; undefined when there is no such tenant. */
  async setLimits(tenantName: string, limits: Partial<TenantLimits>): Promise<Tenant | undefined> {
    const existing = await this.store.tenantByName(tenantName);
    if (!existing) return undefined;
    const tenant = await this.store.upsertTenant(existing.id, tenantName, { ...existing, ...limits });
    this.invalidate();
    await this.confirm();
    return tenant;
  }

  /** Revokes a key: refused at once on every node (see `unconfirmed` for any that did not say so). */
  async revoke(id: string): Promise<boolean> {
    const done = await this.store.revokeKey(id);
    this.invalidate();
    if (done) await this.confirm();
    return done;
  }

  /** The tenant a key belongs to, or undefined for a malformed, unknown or revoked key. */
  async verify(key: string | undefined): Promise<Tenant | undefined> {
    if (!key) return undefined;
    const m = KEY_RE.exec(key);
    if (!m) return undefined;
    const digest = createHash("sha256").update(key).digest("hex");
    const usable = await this.cacheUsable();
    const epoch = this.epoch;
    const hit = this.cache.get(digest);
    if (usable && hit && hit.epoch === epoch && hit.until > Date.now()) return hit.tenant;
    const row = await this.store.key((m[1] as string).slice(0, 12));
    if (!row || row.revokedAt !== null) return undefined;
    const hashHex = row.hash.toString("hex");
    if (this.proven.get(digest) !== hashHex) {
      const hash = await scryptAsync(key, row.salt, 32);
      if (hash.length !== row.hash.length || !timingSafeEqual(hash, row.hash)) return undefined;
      if (this.proven.size >= MAX_ENTRIES) this.proven.clear();
      this.proven.set(digest, hashHex);
    }
    const tenant = await this.store.tenant(row.tenantId);
    if (!tenant) return undefined;
    // Only what was read within one epoch is kept: a change heard meanwhile makes it stale.
    if (usable && this.epoch === epoch) {
      if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
      this.cache.set(digest, { tenant, epoch, until: Date.now() + CACHE_MS });
    }
    return tenant;
  }
}
