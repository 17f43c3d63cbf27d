// Egress rules in E2B's shape (`network: { allowOut, denyOut }`) for the allow-list proxy:
// addresses and CIDR blocks (every port) in both lists, domain names (`example.com`,
// `*.example.com`; HTTP and TLS, ports 80 and 443, as proxy-rules.ts parses them) in allowOut.
// allowOut wins over denyOut; what neither names is allowed, unless denyOut covers everything
// (0.0.0.0/0). The proxy's own safety stays: a name is resolved once, the proxy connects to the
// address it checked, and a non-public address (loopback, private, link-local…) is reached only
// when allowOut names it (a block containing it), never by "everything else is allowed".
import ipaddr from "ipaddr.js";
import { canonicalIp, nonPublicRange } from "./proxy-address.js";
import type { Decision, LookupFn } from "./proxy-policy.js";
import { type AllowRule, type Authority, parseAllowRules, ruleRefusal } from "./proxy-rules.js";

type Net = { text: string; range: [ipaddr.IPv4 | ipaddr.IPv6, number] };

export interface EgressPolicy {
  allowNames: readonly AllowRule[];
  allowNets: readonly Net[];
  denyNets: readonly Net[];
}

const MAX_ENTRIES = 1000;
const LOOKUP_TIMEOUT_MS = 10_000;

function netOf(text: string): Net | undefined {
  const t = text.trim();
  try {
    if (t.includes("/")) {
      return { text: t, range: ipaddr.parseCIDR(t) };
    }
    if (!ipaddr.isValid(t)) return undefined;
    const ip = unmapped(ipaddr.parse(t));
    return { text: t, range: [ip, ip.kind() === "ipv4" ? 32 : 128] };
  } catch {
    return undefined;
  }
}

function unmapped(ip: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()
    ? (ip as ipaddr.IPv6).toIPv4Address()
    : ip;
}

/** Parses the two lists; throws naming the entry that is wrong. */
export function parseEgressPolicy(o: {
  allowOut?: readonly string[];
  denyOut?: readonly string[];
}): EgressPolicy {
  const allow = o.allowOut ?? [];
  const deny = o.denyOut ?? [];
  if (allow.length > MAX_ENTRIES || deny.length > MAX_ENTRIES)
    throw new Error(`at most ${MAX_ENTRIES} entries per list`);
  const allowNets: Net[] = [];
  const names: string[] = [];
  for (const e of allow) {
    const net = netOf(e);
    if (net) allowNets.push(net);
    else if (/[/:]/.test(e.trim()))
      throw new Error(`allowOut entry "${e}": not an address, CIDR block or domain name`);
    else names.push(e);
  }
  const denyNets = deny.map((e) => {
    const net = netOf(e);
    if (!net) throw new Error(`denyOut entry "${e}": only addresses and CIDR blocks can be denied`);
    return net;
  });
  // Domain names through the proxy's own rule parser (normal form, IDNA, *. for subdomains).
  const allowNames = parseAllowRules(names).map((r) => {
    if (r.ip) throw new Error(`allowOut entry "${r.text}": not a domain name`);
    return r;
  });
  return { allowNames, allowNets, denyNets };
}

function inNets(ip: string, nets: readonly Net[]): Net | undefined {
  const a = unmapped(ipaddr.parse(ip));
  return nets.find((n) => n.range[0].kind() === a.kind() && a.match(n.range as never));
}

/** Whether denyOut covers every IPv4 address (E2B's ALL_TRAFFIC): then only allowOut gets out. */
function deniesAll(p: EgressPolicy): boolean {
  return p.denyNets.some((n) => n.range[1] === 0);
}

/** One address: allowed by allowOut (its own or its name's), refused by denyOut, else allowed when public. */
function addressRefusal(ip: string, p: EgressPolicy, namedByRule: boolean): string | undefined {
  if (inNets(ip, p.allowNets)) return undefined;
  if (!namedByRule) {
    const denied = inNets(ip, p.denyNets);
    if ((denied && denied.range[1] === 0) || (!denied && deniesAll(p)))
      return `${ip} is not on the sandbox's allowOut list`;
    if (denied) return `${ip} is denied by the sandbox's egress rules (denyOut ${denied.text})`;
  }
  const range = nonPublicRange(ip);
  if (range) return `${ip} is a ${range} address (allowOut must name it)`;
  return undefined;
}

export async function decideEgress(
  target: Authority & { port: number },
  policy: EgressPolicy,
  lookup: LookupFn,
): Promise<Decision> {
  const byName = !target.ip && ruleRefusal(target, target.port, policy.allowNames) === undefined;
  if (!target.ip && !byName && deniesAll(policy))
    return {
      allowed: false,
      status: 403,
      reason: `${target.host} (port ${target.port}) is not on the sandbox's allowOut list`,
    };
  let addresses: string[];
  if (target.ip) addresses = [target.host];
  else {
    let timer: NodeJS.Timeout | undefined;
    try {
      const answers = await Promise.race([
        lookup(target.host),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("lookup timed out")), LOOKUP_TIMEOUT_MS);
        }),
      ]);
      addresses = answers.map((a) => canonicalIp(a.address) ?? a.address);
    } catch (e) {
      return {
        allowed: false,
        status: 502,
        reason: `cannot resolve ${target.host}: ${(e as Error).message}`,
      };
    } finally {
      clearTimeout(timer);
    }
    if (addresses.length === 0)
      return { allowed: false, status: 502, reason: `${target.host} has no address` };
  }
  for (const ip of addresses) {
    if (!ipaddr.isValid(ip))
      return { allowed: false, status: 502, reason: `${target.host}: not an IP address` };
    const refusal = addressRefusal(ip, policy, byName);
    // Any refused answer refuses the name (a mix of answers is how rebinding is set up).
    if (refusal)
      return {
        allowed: false,
        status: 403,
        reason: target.ip ? refusal : `${target.host} resolves to ${refusal}`,
      };
  }
  return { allowed: true, addresses: [...new Set(addresses)] };
}
