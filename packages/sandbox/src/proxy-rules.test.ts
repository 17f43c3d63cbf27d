// The allow-list rules and target parser on their own: what a rule means, which entries are
// refused when the proxy starts, and which addresses count as public.
import assert from "node:assert/strict";
import { test } from "node:test";
import { nonPublicRange } from "./proxy-address.js";
import { parseAllowRules, parseAuthority, ruleRefusal } from "./proxy-rules.js";

test("rules: names, wildcards, ports and addresses parse to one normal form", () => {
  const [plain, wild, port, ip4, ip6, idn] = parseAllowRules([
    "PyPI.org.",
    "*.github.com",
    "example.com:8443",
    "0x7f.1:8080",
    "[::FFFF:10.0.0.1]",
    "bücher.example",
  ]);
  assert.deepEqual(plain, {
    text: "PyPI.org.",
    host: "pypi.org",
    ip: false,
    subdomainsOnly: false,
    ports: [80, 443],
  });
  assert.equal(wild?.host, "github.com");
  assert.equal(wild?.subdomainsOnly, true);
  assert.deepEqual(port?.ports, [8443]);
  assert.deepEqual([ip4?.host, ip4?.ip, ip4?.ports], ["127.0.0.1", true, [8080]]);
  assert.deepEqual([ip6?.host, ip6?.ip], ["10.0.0.1", true], "IPv4-mapped IPv6 is the IPv4 address");
  assert.equal(idn?.host, "xn--bcher-kva.example");
});

test("rules: entries that cannot mean one thing are refused with the entry and the reason", () => {
  const bad: Array<[string, RegExp]> = [
    ["https://pypi.org", /not a URL/],
    ["user@pypi.org", /userinfo/],
    ["pypi.org:0", /not a valid port/],
    ["pypi.org:65536", /not a valid port/],
    ["pypi.org:80,443", /not a valid port/],
    ["pypi.org/simple", /expected host\[:port\]/],
    ["[::1%eth0]", /zone ids/],
    ["2001:db8::1", /expected host\[:port\]/],
    ["*.10.0.0.1", /\*\. needs a domain name/],
    ["*", /not a valid host name/],
    ["", /expected host\[:port\]/],
    ["a..b", /not a valid host name/],
    ["pypi.org%00", /not a valid host name/],
  ];
  for (const [entry, reason] of bad)
    assert.throws(
      () => parseAllowRules([entry]),
      (e: Error) => e.message.startsWith(`allow-list entry "${entry}": `) && reason.test(e.message),
      entry,
    );
});

test("matching: subdomains, look-alikes, ports and IP literals", () => {
  const rules = parseAllowRules(["pypi.org", "*.example.com", "example.com:8443", "10.0.0.5:8080"]);
  const check = (host: string, port: number) => ruleRefusal(parseAuthority(host), port, rules);
  assert.equal(check("files.pypi.org", 443), undefined);
  assert.equal(check("pypi.org", 80), undefined);
  assert.match(check("pypi.org.evil.com", 443) ?? "", /not on the allow-list/);
  assert.match(check("evilpypi.org", 443) ?? "", /not on the allow-list/);
  assert.equal(check("a.b.example.com", 443), undefined);
  assert.match(check("example.com", 443) ?? "", /port 443 is not allowed for example\.com \(allowed: 8443\)/);
  assert.equal(check("example.com", 8443), undefined, "the port rule names the apex");
  assert.match(check("a.example.com", 22) ?? "", /allowed: 80, 443, 8443/);
  assert.equal(check("012.0.0.5", 8080), undefined, "octal spelling of the named address");
  assert.match(check("10.0.0.6", 8080) ?? "", /IP address 10\.0\.0\.6 is not on the allow-list/);
  assert.match(check("[::ffff:10.0.0.5]", 443) ?? "", /port 443 is not allowed/);
});

test("addresses: only global unicast is public", () => {
  const cases: Array<[string, string | undefined]> = [
    ["1.1.1.1", undefined],
    ["2606:4700::1111", undefined],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["::1", "loopback"],
    ["169.254.169.254", "link-local (cloud metadata lives here)"],
    ["fe80::1", "link-local (cloud metadata lives here)"],
    ["fd00:ec2::254", "unique-local"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["192.168.0.1", "private"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::7f00:1", "IPv4-compatible IPv6"],
    ["64:ff9b::a9fe:a9fe", "link-local (cloud metadata lives here)"],
    ["64:ff9b::101:101", undefined],
    ["2002:7f00:1::", "loopback"],
    ["2001:db8::1", "reserved"],
    ["not-an-ip", "not an IP address"],
  ];
  for (const [address, range] of cases) assert.equal(nonPublicRange(address), range, address);
});
