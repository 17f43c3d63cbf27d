// E2B-style egress rules: what allowOut/denyOut let through, and the hostile cases — names that
// resolve to internal addresses, mixed answers, spellings of one address, bad entries.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decideEgress, parseEgressPolicy } from "./proxy-egress.js";
import type { LookupFn } from "./proxy-policy.js";
import { parseAuthority } from "./proxy-rules.js";

const names: Record<string, string[]> = {
  "public.example": ["93.184.216.34"],
  "internal.example": ["10.1.2.3"],
  "mixed.example": ["93.184.216.34", "127.0.0.1"],
  "v6.example": ["2606:4700:4700::1111"],
};
const lookup: LookupFn = async (h) => {
  const a = names[h];
  if (!a) throw new Error("ENOTFOUND");
  return a.map((address) => ({ address }));
};

async function decide(target: string, allowOut: string[] = [], denyOut: string[] = []) {
  const a = parseAuthority(target);
  return decideEgress({ ...a, port: a.port ?? 443 }, parseEgressPolicy({ allowOut, denyOut }), lookup);
}

describe("egress rules (allowOut / denyOut)", () => {
  it("allows public destinations by default and refuses what denyOut names", async () => {
    assert.equal((await decide("public.example")).allowed, true);
    assert.equal((await decide("1.1.1.1:8443")).allowed, true);
    const d = await decide("8.8.8.8", [], ["8.8.8.8"]);
    assert.equal(d.allowed, false);
    assert.match((d as { reason: string }).reason, /denyOut 8\.8\.8\.8/);
    // A CIDR block covers its addresses, every port, and every spelling of them.
    for (const t of ["93.184.216.1", "[::ffff:93.184.216.1]", "1572395009:22", "public.example"])
      assert.equal((await decide(t, [], ["93.184.216.0/24"])).allowed, false, t);
  });

  it("with denyOut 0.0.0.0/0 only allowOut gets out; allowOut wins over denyOut", async () => {
    const all = ["0.0.0.0/0"];
    assert.equal((await decide("1.1.1.1", ["1.1.1.1"], all)).allowed, true);
    const other = await decide("8.8.8.8", ["1.1.1.1"], all);
    assert.match((other as { reason: string }).reason, /not on the sandbox's allowOut list/);
    assert.equal((await decide("public.example", ["public.example"], all)).allowed, true);
    assert.equal((await decide("sub.public.example", ["*.public.example"], all)).allowed, false);
    // Domains in allowOut are for HTTP and TLS (80, 443), as the proxy's own rules are.
    assert.equal((await decide("public.example:22", ["public.example"], all)).allowed, false);
    // IPv6 destinations are denied too, and an unknown name says so.
    assert.equal((await decide("v6.example", [], all)).allowed, false);
    assert.equal((await decide("nowhere.example", ["nowhere.example"], all)).allowed, false);
  });

  it("never reaches internal addresses unless allowOut names them, whatever the name", async () => {
    for (const t of ["127.0.0.1", "[::1]", "169.254.169.254", "internal.example", "mixed.example"]) {
      const d = await decide(t);
      assert.equal(d.allowed, false, t);
    }
    // Named by allowOut (an address or a block), it is reachable; a mixed answer still is not.
    assert.equal((await decide("10.1.2.3:5432", ["10.0.0.0/8"])).allowed, true);
    assert.equal((await decide("internal.example", ["10.1.2.3"])).allowed, true);
    assert.equal((await decide("mixed.example", ["mixed.example"])).allowed, false);
  });

  it("refuses bad entries with the entry named", () => {
    for (const [allowOut, denyOut, re] of [
      [[], ["example.com"], /denyOut entry "example.com"/],
      [["10.0.0.0/33"], [], /allowOut entry/],
      [["http://x.example"], [], /allowOut entry/],
      [["exa mple.com"], [], /exa mple/],
      [Array(1001).fill("1.1.1.1"), [], /at most 1000/],
    ] as const)
      assert.throws(() => parseEgressPolicy({ allowOut: [...allowOut], denyOut: [...denyOut] }), re);
  });
});
