// Which IP addresses the allow-list proxy may connect to without a rule naming them: only
// global unicast ones. Loopback, private, link-local (cloud metadata at 169.254.169.254),
// unique-local (fd00:ec2::254), CGNAT, multicast, reserved… would let a sandboxed command reach
// the host's own services or its network through a name that happens to resolve there.
import ipaddr from "ipaddr.js";

/** The canonical text of an IP address (IPv4-mapped IPv6 as IPv4), or undefined if not one. */
export function canonicalIp(text: string): string | undefined {
  if (!ipaddr.isValid(text)) return undefined;
  return unmap(ipaddr.parse(text)).toString();
}

/**
 * Why `address` is not a public destination ("loopback", "private", …), or undefined when it
 * is global unicast. Addresses that carry an IPv4 address inside (mapped, NAT64, 6to4) are
 * judged by that IPv4 address.
 */
export function nonPublicRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return "not an IP address";
  const ip = unmap(ipaddr.parse(address));
  if (ip.kind() === "ipv6") {
    const v6 = ip as ipaddr.IPv6;
    const range = v6.range();
    // ::a.b.c.d (IPv4-compatible, deprecated by RFC 4291): ipaddr.js calls it unicast.
    if (range === "unicast" && v6.parts.slice(0, 6).every((p) => p === 0)) return "IPv4-compatible IPv6";
    const embedded = embeddedIpv4(v6, range);
    if (embedded) return nonPublicRange(embedded);
    return range === "unicast" ? undefined : rangeName(range);
  }
  const range = (ip as ipaddr.IPv4).range();
  return range === "unicast" ? undefined : rangeName(range);
}

function unmap(ip: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()
    ? (ip as ipaddr.IPv6).toIPv4Address()
    : ip;
}

/** The IPv4 address inside a NAT64 (64:ff9b::/96), 6to4 or IPv4-translated address. */
function embeddedIpv4(ip: ipaddr.IPv6, range: string): string | undefined {
  const p = ip.parts;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if (range === "rfc6052" && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0)
    return v4(p[6] ?? 0, p[7] ?? 0);
  if (range === "rfc6145") return v4(p[6] ?? 0, p[7] ?? 0);
  if (range === "6to4") return v4(p[1] ?? 0, p[2] ?? 0);
  return undefined;
}

const RANGE_NAMES: Record<string, string> = {
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
  linkLocal: "link-local (cloud metadata lives here)",
  loopback: "loopback",
  carrierGradeNat: "carrier-grade NAT",
  private: "private",
  uniqueLocal: "unique-local",
  reserved: "reserved",
};

function rangeName(range: string): string {
  return RANGE_NAMES[range] ?? `special-purpose (${range})`;
}
