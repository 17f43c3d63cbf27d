// The allow-list proxy's decision for one request: is this host:port allowed, and which
// address may it connect to. Names are resolved once here and the proxy connects to the
// address that was checked, so a second answer from DNS (rebinding) is never used.
import { lookup as dnsLookup } from "node:dns/promises";
import { canonicalIp, nonPublicRange } from "./proxy-address.js";
import { type AllowRule, type Authority, ruleRefusal } from "./proxy-rules.js";

export type LookupFn = (hostname: string) => Promise<ReadonlyArray<{ address: string }>>;

export const systemLookup: LookupFn = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

const LOOKUP_TIMEOUT_MS = 10_000;

/** One decision as the proxy's log and the audit log keep it. */
export interface ProxyLogEntry {
  /** CONNECT, GET, …; "" for a request too malformed to have one. */
  method: string;
  host: string;
  port: number;
  allowed: boolean;
  /** Why it was refused. */
  reason?: string;
  /** The address connected to. */
  address?: string;
}

export type Decision =
  /** `addresses`: every answer, all checked, in the resolver's order (tried in turn). */
  { allowed: true; addresses: string[] } | { allowed: false; status: 403 | 502; reason: string };

export async function decideDestination(
  target: Authority & { port: number },
  rules: readonly AllowRule[],
  lookup: LookupFn,
): Promise<Decision> {
  const refusal = ruleRefusal(target, target.port, rules);
  if (refusal) return { allowed: false, status: 403, reason: refusal };
  // An IP literal is allowed only by a rule naming it, which is what allows a non-public one.
  if (target.ip) return { allowed: true, addresses: [target.host] };
  let answers: ReadonlyArray<{ address: string }>;
  try {
    answers = await withTimeout(lookup(target.host), LOOKUP_TIMEOUT_MS);
  } catch (e) {
    return { allowed: false, status: 502, reason: `cannot resolve ${target.host}: ${(e as Error).message}` };
  }
  if (answers.length === 0) return { allowed: false, status: 502, reason: `${target.host} has no address` };
  const addresses: string[] = [];
  for (const { address } of answers) {
    const ip = canonicalIp(address);
    const range = ip ? nonPublicRange(ip) : "not an IP address";
    // Any non-public answer refuses the name: a mix of public and internal answers is how
    // a rebinding name is usually set up.
    if (range && !(ip && ruleRefusal({ host: ip, ip: true }, target.port, rules) === undefined))
      return {
        allowed: false,
        status: 403,
        reason: `${target.host} resolves to ${ip ?? address}, a ${range} address (a rule naming that address allows it)`,
      };
    addresses.push(ip as string);
  }
  return { allowed: true, addresses: [...new Set(addresses)] };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`lookup timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
