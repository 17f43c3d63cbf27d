// The allow-list proxy's rules (`--allow-domain`) and the parsing of the host:port a sandboxed
// tool asks for. Both go through one parser built on the WHATWG URL host parser, so a rule and
// a request are compared in the same normal form: lower case, IDNA (punycode), no trailing dot,
// IPv4 in dotted quad (2130706433, 0177.0.0.1 and 0x7f.1 all become 127.0.0.1), IPv6 without
// brackets. Anything the parser would have to guess about (userinfo, zone ids, paths, empty
// labels, control characters) is refused, not repaired.
//
// Rule syntax, one per entry:
//   example.com          example.com and all its subdomains, ports 80 and 443
//   *.example.com        subdomains of example.com only (not example.com itself)
//   example.com:8443     the same names, port 8443 only (repeat the rule for more ports)
//   203.0.113.7[:port]   that IP address (also the way to allow a private or loopback address)
//   [2001:db8::1][:port] an IPv6 address
import { isIPv4 } from "node:net";
import { canonicalIp } from "./proxy-address.js";

export const DEFAULT_PORTS: readonly number[] = [80, 443];

/** A parsed host[:port]: `host` is a normal-form name or a canonical IP address. */
export interface Authority {
  host: string;
  ip: boolean;
  port: number | undefined;
}

export interface AllowRule {
  /** The entry as the user wrote it (for messages). */
  text: string;
  host: string;
  ip: boolean;
  /** `*.name`: subdomains only. */
  subdomainsOnly: boolean;
  ports: readonly number[];
}

export class AuthorityError extends Error {}

const MAX_AUTHORITY = 512;
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** Parses `host[:port]` (a CONNECT target, a Host header, a rule without its `*.`). */
export function parseAuthority(text: string): Authority {
  if (text.length > MAX_AUTHORITY) throw new AuthorityError("host:port is too long");
  if (text.includes("@")) throw new AuthorityError("userinfo (user@host) is not allowed");
  if (/[\s/?#\\\x00-\x1f\x7f]/.test(text)) throw new AuthorityError("expected host[:port]");
  const m = /^(\[[^\]]*\]|[^:[\]]*)(?::([^:]*))?$/.exec(text);
  if (!m?.[1]) throw new AuthorityError("expected host[:port]");
  const rawHost = m[1];
  if (rawHost.startsWith("[") && rawHost.includes("%"))
    throw new AuthorityError("IPv6 zone ids are not allowed");
  const port = m[2] === undefined ? undefined : parsePort(m[2]);
  let hostname: string;
  try {
    hostname = new URL(`http://${rawHost}`).hostname;
  } catch {
    throw new AuthorityError("not a valid host name");
  }
  if (hostname.startsWith("[")) {
    const ip = canonicalIp(hostname.slice(1, -1));
    if (!ip) throw new AuthorityError("not a valid IPv6 address");
    return { host: ip, ip: true, port };
  }
  if (isIPv4(hostname)) return { host: hostname, ip: true, port };
  const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
  if (name.length > 253 || !name.split(".").every((l) => LABEL.test(l)))
    throw new AuthorityError("not a valid host name");
  return { host: name, ip: false, port };
}

function parsePort(text: string): number {
  const n = /^\d{1,5}$/.test(text) ? Number(text) : 0;
  if (n < 1 || n > 65535) throw new AuthorityError("not a valid port");
  return n;
}

/** Parses `--allow-domain` entries; throws with the entry and what is wrong with it. */
export function parseAllowRules(entries: readonly string[]): AllowRule[] {
  return entries.map((text) => {
    const entry = text.trim();
    const subdomainsOnly = entry.startsWith("*.");
    try {
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) throw new AuthorityError("write host[:port], not a URL");
      const a = parseAuthority(subdomainsOnly ? entry.slice(2) : entry);
      if (subdomainsOnly && a.ip) throw new AuthorityError("*. needs a domain name");
      return {
        text: entry,
        host: a.host,
        ip: a.ip,
        subdomainsOnly,
        ports: a.port ? [a.port] : DEFAULT_PORTS,
      };
    } catch (e) {
      if (e instanceof AuthorityError) throw new Error(`allow-list entry "${entry}": ${e.message}`);
      throw e;
    }
  });
}

function nameMatches(rule: AllowRule, host: string): boolean {
  if (rule.ip) return false;
  const sub = host.endsWith(`.${rule.host}`);
  return rule.subdomainsOnly ? sub : sub || host === rule.host;
}

/**
 * Why `host:port` is not allowed by `rules`, or undefined when a rule allows it. `host` is in
 * normal form (from parseAuthority); an IP address matches only a rule naming that address.
 */
export function ruleRefusal(
  target: { host: string; ip: boolean },
  port: number,
  rules: readonly AllowRule[],
) {
  const same = rules.filter((r) =>
    target.ip ? r.ip && r.host === target.host : nameMatches(r, target.host),
  );
  if (same.length === 0)
    return target.ip
      ? `IP address ${target.host} is not on the allow-list (only a rule naming the address allows it)`
      : `${target.host} is not on the allow-list`;
  if (same.some((r) => r.ports.includes(port))) return undefined;
  const ports = [...new Set(same.flatMap((r) => r.ports))].join(", ");
  return `port ${port} is not allowed for ${target.host} (allowed: ${ports})`;
}

/** True when `host` (any spelling) is allowed on `port` by the rules in `allow`. */
export function hostAllowed(host: string, allow: readonly string[], port = 443): boolean {
  try {
    const target = parseAuthority(host);
    return ruleRefusal(target, port, parseAllowRules(allow)) === undefined;
  } catch {
    return false;
  }
}
