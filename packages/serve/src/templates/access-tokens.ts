// Access tokens: the credential E2B's CLI keeps from `e2b auth login` and sends as
// `Authorization: Bearer …` (E2B_ACCESS_TOKEN), distinct from an API key. In Hands an access
// token belongs to one API key, hence to that key's tenant: `sk_e2b_` + the key's 12-digit row
// name + an HMAC of that name keyed by the key's stored (secret) scrypt hash. So a token is
// issued only by the service (POST /hands/v1/access-tokens, authenticated by the API key), is
// the same on every node sharing the store, and dies with its key: revoking the key revokes it.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Store, Tenant } from "../store.js";

const TOKEN_RE = /^sk_e2b_([0-9a-f]{12})([0-9a-f]{28})$/;
const KEY_RE = /^e2b_([0-9a-f]{12})[0-9a-f]{28}$/;

function mac(hash: Buffer, id: string): string {
  return createHmac("sha256", hash).update(`hands-access-token:${id}`).digest("hex").slice(0, 28);
}

/** The access token of an API key the caller has already verified. */
export async function accessTokenFor(store: Store, apiKey: string): Promise<string | undefined> {
  const m = KEY_RE.exec(apiKey);
  if (!m) return undefined;
  const id = m[1] as string;
  const row = await store.key(id);
  if (!row || row.revokedAt !== null) return undefined;
  return `sk_e2b_${id}${mac(row.hash, id)}`;
}

/** The tenant an access token acts for, or undefined (unknown, malformed, or its key revoked). */
export async function verifyAccessToken(
  store: Store,
  token: string | undefined,
): Promise<Tenant | undefined> {
  const m = token ? TOKEN_RE.exec(token) : null;
  if (!m) return undefined;
  const id = m[1] as string;
  const row = await store.key(id);
  if (!row || row.revokedAt !== null) return undefined;
  const want = Buffer.from(mac(row.hash, id));
  const got = Buffer.from(m[2] as string);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return undefined;
  return store.tenant(row.tenantId);
}

/** `Authorization: Bearer <token>` of a request, if any. */
export function bearerOf(header: string | string[] | undefined): string | undefined {
  if (typeof header !== "string") return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return m?.[1];
}
