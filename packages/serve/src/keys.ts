// API keys: `e2b_` + 40 hex digits (the shape the SDK expects). The first 12 digits name the
// key's row; the whole key is checked against its scrypt hash. A short in-memory cache of
// verified keys keeps scrypt off the hot path.
import { createHash, randomBytes, randomUUID, scrypt, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";
import { DEFAULT_LIMITS, type Store, type Tenant, type TenantLimits } from "./store.js";

const scryptAsync = promisify(scrypt) as (key: string, salt: Buffer, len: number) => Promise<Buffer>;
const KEY_RE = /^e2b_([0-9a-f]{40})$/;
const CACHE_MS = 60_000;

export class Keys {
  private readonly cache = new Map<string, { tenant: Tenant; until: number }>();

  constructor(private readonly store: Store) {}

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
    return { key, id, tenant };
  }

  revoke(id: string): Promise<boolean> {
    this.cache.clear();
    return this.store.revokeKey(id);
  }

  /** The tenant a key belongs to, or undefined for a malformed, unknown or revoked key. */
  async verify(key: string | undefined): Promise<Tenant | undefined> {
    if (!key) return undefined;
    const m = KEY_RE.exec(key);
    if (!m) return undefined;
    const digest = createHash("sha256").update(key).digest("hex");
    // The row is read every time (an indexed lookup): a key revoked by `hands serve keys revoke`
    // in another process stops working at once, cache or not.
    const row = await this.store.key((m[1] as string).slice(0, 12));
    if (!row || row.revokedAt !== null) return undefined;
    const hit = this.cache.get(digest);
    if (hit && hit.until > Date.now()) return hit.tenant;
    const hash = await scryptAsync(key, row.salt, 32);
    if (hash.length !== row.hash.length || !timingSafeEqual(hash, row.hash)) return undefined;
    const tenant = await this.store.tenant(row.tenantId);
    if (!tenant) return undefined;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(digest, { tenant, until: Date.now() + CACHE_MS });
    return tenant;
  }
}
