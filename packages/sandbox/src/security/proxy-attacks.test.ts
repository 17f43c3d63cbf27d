// Attacks on the --allow-domain proxy, spoken byte by byte over its Unix socket the way a
// hostile tool inside the sandbox could. Every refusal must come before any connection: the
// tests watch the proxy's resolver (an injected lookup, so names "resolve" anywhere without a
// network) and its dialler (which only ever really connects to loopback), and count what our
// upstream server on 127.0.0.1 receives. No test sends traffic beyond loopback.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { connect, Socket } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type AllowListProxy, startAllowListProxy } from "../proxy.js";
import type { LookupFn } from "../proxy-policy.js";
import { tempWorkspace } from "../testing.js";

interface Response {
  status: number;
  statusLine: string;
  headers: string;
  body: string;
}

/** A raw client on the proxy's socket: send bytes, read whole responses, see when it closes. */
class RawClient {
  private buf = "";
  closed = false;
  private wake: () => void = () => {};
  private constructor(private readonly sock: Socket) {
    sock.setEncoding("latin1");
    sock.on("data", (d: string) => {
      this.buf += d;
      this.wake();
    });
    sock.on("close", () => {
      this.closed = true;
      this.wake();
    });
    sock.on("error", () => {});
  }

  static open(path: string): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = connect(path, () => resolve(new RawClient(s)));
      s.once("error", reject);
    });
  }

  send(data: string | Buffer): void {
    this.sock.write(typeof data === "string" ? Buffer.from(data, "latin1") : data);
  }

  private async waitFor(done: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (this.closed)
        throw new Error(`connection closed while waiting for ${what}; got ${JSON.stringify(this.buf)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.buf)}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.wake = () => {
          clearTimeout(t);
          r();
        };
      });
    }
  }

  /** The next response (status line, headers, content-length body). */
  async response(): Promise<Response> {
    await this.waitFor(() => this.buf.includes("\r\n\r\n"), "a response");
    const end = this.buf.indexOf("\r\n\r\n");
    const head = this.buf.slice(0, end);
    const length = Number(/^content-length:\s*(\d+)/im.exec(head)?.[1] ?? 0);
    await this.waitFor(() => this.buf.length >= end + 4 + length, "the response body");
    const body = this.buf.slice(end + 4, end + 4 + length);
    this.buf = this.buf.slice(end + 4 + length);
    const statusLine = head.split("\r\n")[0] ?? "";
    return { status: Number(statusLine.split(" ")[1]), statusLine, headers: head, body };
  }

  /** Resolves true when the proxy closes the connection within `ms`. */
  async closesWithin(ms: number): Promise<boolean> {
    try {
      await this.waitFor(() => false, "close", ms);
    } catch {
      return this.closed;
    }
    return this.closed;
  }

  end(): void {
    this.sock.destroy();
  }
}

/** A resolver that knows only the names given and records every question. */
function fakeDns(map: Record<string, string[]>): { lookup: LookupFn; asked: string[] } {
  const asked: string[] = [];
  const lookup: LookupFn = async (name) => {
    asked.push(name);
    const a = map[name];
    if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
    return a.map((address) => ({ address }));
  };
  return { lookup, asked };
}

/** A dialler that records every connection the proxy opens and only really opens loopback ones. */
function guardedDial(): { connect: (address: string, port: number) => Socket; dialed: string[] } {
  const dialed: string[] = [];
  return {
    dialed,
    connect: (address, port) => {
      dialed.push(`${address} ${port}`);
      if (address === "127.0.0.1" || address === "::1") return connect({ host: address, port });
      const s = new Socket();
      process.nextTick(() => s.destroy(new Error(`the test refuses to dial ${address}`)));
      return s;
    },
  };
}

describe("allow-list proxy under attack", () => {
  let upstream: Server;
  let P = 0;
  const seen: string[] = [];
  let connections = 0;
  let tunnelled: string[] = [];
  let proxy: AllowListProxy | undefined;
  let dns: ReturnType<typeof fakeDns>;
  let dial: ReturnType<typeof guardedDial>;

  before(async () => {
    upstream = createServer((q, r) => {
      seen.push(`${q.method} ${q.headers.host} ${q.url}`);
      r.end(`upstream saw ${q.headers.host}${q.url}`);
    });
    upstream.on("connection", () => connections++);
    // A CONNECT that arrives through a tunnel is only data for the server at its far end.
    upstream.on("connect", (q, s) => {
      tunnelled.push(q.url ?? "");
      s.end("HTTP/1.1 418 upstream got it\r\ncontent-length: 0\r\n\r\n");
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    P = (upstream.address() as { port: number }).port;
  });
  after(async () => {
    await proxy?.close();
    upstream.close();
  });

  /** A fresh proxy with these rules, the fake resolver and the guarded dialler. */
  async function start(allow: string[], names: Record<string, string[]> = {}, extra = {}): Promise<string> {
    await proxy?.close();
    dns = fakeDns({ "allowed.test": ["127.0.0.1"], ...names });
    dial = guardedDial();
    seen.length = 0;
    tunnelled = [];
    connections = 0;
    proxy = await startAllowListProxy({ allow, lookup: dns.lookup, connect: dial.connect, ...extra });
    return proxy.socketPath;
  }

  const baseRules = () => [`allowed.test:${P}`, `127.0.0.1:${P}`, `*.wild.test:${P}`];

  /** Sends one request; asserts a 403 (or `status`) whose status line and body give `reason`. */
  async function expectRefused(request: string | Buffer, reason: RegExp, status = 403): Promise<Response> {
    const c = await RawClient.open(proxy?.socketPath ?? "");
    try {
      c.send(request);
      const r = await c.response();
      assert.equal(r.status, status, r.statusLine);
      assert.match(r.statusLine, /\(hands proxy: .+\)$/);
      assert.match(r.statusLine, reason);
      assert.match(r.body, /^hands proxy: [^\n]+\n$/);
      assert.match(r.body, reason);
      return r;
    } finally {
      c.end();
    }
  }

  const connectTo = (target: string) => `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`;
  const get = (url: string, host: string) => `GET ${url} HTTP/1.1\r\nHost: ${host}\r\n\r\n`;

  /** Nothing was resolved, dialled or received upstream. */
  function assertNoConnection(resolved: string[] = []): void {
    assert.deepEqual(dns.asked, resolved, "names resolved");
    assert.deepEqual(dial.dialed, [], "connections opened");
    assert.equal(connections, 0, "connections reaching the upstream server");
  }

  test("control: an allowed name is tunnelled to the address it was checked at", async () => {
    await start(baseRules());
    const c = await RawClient.open(proxy?.socketPath ?? "");
    c.send(connectTo(`allowed.test:${P}`));
    assert.equal((await c.response()).status, 200);
    c.send("GET /t HTTP/1.1\r\nHost: allowed.test\r\n\r\n");
    assert.equal((await c.response()).body, "upstream saw allowed.test/t");
    c.end();
    assert.deepEqual(dns.asked, ["allowed.test"]);
    assert.deepEqual(dial.dialed, [`127.0.0.1 ${P}`]);
  });

  test("IPv6 zone ids cannot smuggle an address past the name check", async () => {
    await start(baseRules());
    for (const host of ["[::ffff:127.0.0.1%.allowed.test]", "[::1%.allowed.test]", "[::1%25.allowed.test]"])
      await expectRefused(connectTo(`${host}:${P}`), /zone ids are not allowed/);
    assertNoConnection();
  });

  test("userinfo is refused in CONNECT targets and in proxied URLs", async () => {
    await start(baseRules());
    for (const t of [
      `user@allowed.test:${P}`,
      `allowed.test@evil.test:${P}`,
      `evil.test@x.allowed.test:${P}`,
    ])
      await expectRefused(connectTo(t), /userinfo/);
    await expectRefused(get(`http://evil.test@allowed.test:${P}/`, `allowed.test:${P}`), /userinfo/);
    await expectRefused(get(`http://allowed.test:${P}@evil.test/`, "evil.test"), /userinfo/);
    await expectRefused(get(`http://user:pw@allowed.test:${P}/`, `allowed.test:${P}`), /userinfo/);
    assertNoConnection();
  });

  test("a trailing dot and upper case name the same host; empty labels are refused", async () => {
    await start(baseRules());
    for (const t of [`allowed.test.:${P}`, `ALLOWED.Test:${P}`]) {
      const c = await RawClient.open(proxy?.socketPath ?? "");
      c.send(connectTo(t));
      assert.equal((await c.response()).status, 200, t);
      c.end();
    }
    assert.deepEqual(dns.asked, ["allowed.test", "allowed.test"], "resolved in normal form");
    dns.asked.length = 0;
    dial.dialed.length = 0;
    connections = 0;
    for (const t of [`allowed.test..:${P}`, `x..allowed.test:${P}`, `.allowed.test:${P}`, `:${P}`])
      await expectRefused(connectTo(t), /not a valid host name|expected host\[:port\]/);
    assertNoConnection();
  });

  test("IDN: names are compared as punycode, so homographs do not match", async () => {
    await start([...baseRules(), `bücher.test:${P}`], { "xn--bcher-kva.test": ["127.0.0.1"] });
    // Cyrillic "а" in place of the Latin "a": a different name, whatever it looks like.
    await expectRefused(
      connectTo(`xn--llowed-2nf.test:${P}`),
      /xn--llowed-2nf\.test is not on the allow-list/,
    );
    // Raw UTF-8 in the request line: Node's parser refuses it before our code sees it.
    await expectRefused(
      Buffer.from(connectTo(`аllowed.test:${P}`), "utf8"),
      /malformed request \(HPE_INVALID_URL\)/,
      400,
    );
    assertNoConnection();
    const c = await RawClient.open(proxy?.socketPath ?? "");
    c.send(connectTo(`xn--bcher-kva.test:${P}`));
    assert.equal((await c.response()).status, 200, "a rule written in Unicode allows its punycode form");
    c.end();
    assert.deepEqual(dns.asked, ["xn--bcher-kva.test"]);
  });

  test("plain HTTP: a Host header naming another server is refused", async () => {
    await start(baseRules());
    await expectRefused(
      get(`http://allowed.test:${P}/x`, "evil.test"),
      /Host header "evil\.test" does not match/,
    );
    await expectRefused(
      `GET http://allowed.test:${P}/x HTTP/1.1\r\nHost: allowed.test:${P}\r\nHost: evil.test\r\n\r\n`,
      /more than one Host header/,
    );
    await expectRefused(get(`http://allowed.test:${P}/x`, `allowed.test:${P + 1}`), /does not match/);
    assertNoConnection();
    // The same host in another spelling is fine, and upstream sees the checked name.
    const c = await RawClient.open(proxy?.socketPath ?? "");
    c.send(get(`http://allowed.test:${P}/y`, `ALLOWED.test.:${P}`));
    const r = await c.response();
    c.end();
    assert.equal(r.status, 200);
    assert.deepEqual(seen, [`GET allowed.test:${P} /y`]);
  });

  test("kept-alive connections: every request is checked, a refused CONNECT ends the connection", async () => {
    await start(baseRules());
    const c = await RawClient.open(proxy?.socketPath ?? "");
    c.send(get(`http://allowed.test:${P}/1`, `allowed.test:${P}`));
    assert.equal((await c.response()).status, 200);
    c.send(get("http://evil.test/2", "evil.test"));
    assert.equal((await c.response()).status, 403);
    // Pipelined: allowed then not allowed in one write.
    c.send(
      get(`http://allowed.test:${P}/3`, `allowed.test:${P}`) +
        get(`http://evil.test:${P}/4`, `evil.test:${P}`),
    );
    assert.equal((await c.response()).status, 200);
    assert.equal((await c.response()).status, 403);
    // A CONNECT pipelined behind a request: its answer must not overtake the request's.
    c.send(get(`http://allowed.test:${P}/5`, `allowed.test:${P}`) + connectTo(`evil.test:${P}`));
    assert.equal((await c.response()).body, `upstream saw allowed.test:${P}/5`);
    const refused = await c.response();
    assert.equal(refused.status, 403);
    assert.match(refused.statusLine, /evil\.test is not on the allow-list/);
    assert.equal(await c.closesWithin(1000), true, "the connection ends after a refused CONNECT");
    assert.deepEqual(seen, [
      `GET allowed.test:${P} /1`,
      `GET allowed.test:${P} /3`,
      `GET allowed.test:${P} /5`,
    ]);
    assert.deepEqual(dns.asked, ["allowed.test", "allowed.test", "allowed.test"]);
  });

  test("a second CONNECT inside an allowed tunnel only reaches the allowed server", async () => {
    await start(baseRules());
    const c = await RawClient.open(proxy?.socketPath ?? "");
    c.send(connectTo(`allowed.test:${P}`) + connectTo("evil.test:443"));
    assert.equal((await c.response()).status, 200);
    assert.match((await c.response()).statusLine, /418 upstream got it/);
    c.end();
    assert.deepEqual(tunnelled, ["evil.test:443"]);
    assert.ok(
      proxy?.log.every((l) => l.host !== "evil.test"),
      "the proxy never saw evil.test as a target",
    );
    assert.deepEqual(dial.dialed, [`127.0.0.1 ${P}`]);
  });

  test("decimal, octal and hex IPv4 forms are IP literals, allowed only by a rule naming the address", async () => {
    await start([`allowed.test:${P}`]);
    for (const h of ["2130706433", "0177.0.0.1", "0x7f.1", "127.1", "0x7f000001"])
      await expectRefused(connectTo(`${h}:${P}`), /IP address 127\.0\.0\.1 is not on the allow-list/);
    await expectRefused(get(`http://0x7f.1:${P}/`, `0x7f.1:${P}`), /IP address 127\.0\.0\.1 is not/);
    assertNoConnection();
    // With the address named, any spelling of it goes to that address (no second opinion).
    await start([`127.0.0.1:${P}`]);
    const c = await RawClient.open(proxy?.socketPath ?? "");
    c.send(connectTo(`0177.0.0.1:${P}`));
    assert.equal((await c.response()).status, 200);
    c.end();
    assert.deepEqual(dial.dialed, [`127.0.0.1 ${P}`]);
    assert.deepEqual(dns.asked, []);
  });

  test("IPv4-mapped and IPv4-compatible IPv6 literals are refused", async () => {
    await start([`allowed.test:${P}`, `*.wild.test:${P}`]);
    for (const h of ["[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::127.0.0.1]", "[::1]", "[0:0:0:0:0:0:0:1]"])
      await expectRefused(connectTo(`${h}:${P}`), /IP address .* is not on the allow-list/);
    assertNoConnection();
  });

  test("names resolving to loopback, private, link-local, metadata, CGNAT or mapped addresses are refused", async () => {
    const bad: Array<[string, string[], RegExp]> = [
      ["loop.wild.test", ["127.0.0.1"], /loop\.wild\.test resolves to 127\.0\.0\.1, a loopback address/],
      ["loop6.wild.test", ["::1"], /loopback/],
      ["meta.wild.test", ["169.254.169.254"], /link-local/],
      ["meta6.wild.test", ["fd00:ec2::254"], /unique-local/],
      ["lan.wild.test", ["10.1.2.3"], /private/],
      ["home.wild.test", ["192.168.1.1"], /private/],
      ["cgnat.wild.test", ["100.100.100.200"], /carrier-grade NAT/],
      ["mapped.wild.test", ["::ffff:127.0.0.1"], /resolves to 127\.0\.0\.1, a loopback/],
      ["compat.wild.test", ["::7f00:1"], /IPv4-compatible/],
      ["nat64.wild.test", ["64:ff9b::a9fe:a9fe"], /link-local/],
      ["zero.wild.test", ["0.0.0.0"], /unspecified/],
      // One internal answer among public ones is enough to refuse the name.
      ["mixed.wild.test", ["1.1.1.1", "127.0.0.1"], /resolves to 127\.0\.0\.1, a loopback/],
    ];
    await start([`*.wild.test:${P}`], Object.fromEntries(bad.map(([name, answers]) => [name, answers])));
    for (const [name, , reason] of bad) await expectRefused(connectTo(`${name}:${P}`), reason);
    await expectRefused(
      get(`http://meta.wild.test:${P}/latest/meta-data/`, `meta.wild.test:${P}`),
      /link-local/,
    );
    assertNoConnection([...bad.map(([name]) => name), "meta.wild.test"]);
  });

  test("the real resolver: localhost is loopback and refused even when listed", async () => {
    await proxy?.close();
    proxy = undefined;
    const d = guardedDial();
    dial = d;
    dns = fakeDns({});
    connections = 0;
    proxy = await startAllowListProxy({ allow: ["localhost", `localhost:${P}`], connect: d.connect });
    await expectRefused(
      connectTo(`localhost:${P}`),
      /localhost resolves to (127\.0\.0\.1|::1), a loopback address/,
    );
    await expectRefused(connectTo("localhost:443"), /loopback/);
    assert.deepEqual(d.dialed, []);
    assert.equal(connections, 0);
  });

  test("an address named by a rule may be reached through an allowed name", async () => {
    await start([`allowed.test:${P}`, `127.0.0.1:${P}`]);
    const c = await RawClient.open(proxy?.socketPath ?? "");
    c.send(get(`http://allowed.test:${P}/ok`, `allowed.test:${P}`));
    assert.equal((await c.response()).body, `upstream saw allowed.test:${P}/ok`);
    c.end();
    // …but the address rule is for its port only.
    await start([`allowed.test:${P}`, `allowed.test:${P + 1}`, `127.0.0.1:${P}`]);
    await expectRefused(connectTo(`allowed.test:${P + 1}`), /resolves to 127\.0\.0\.1, a loopback/);
    assert.deepEqual(dial.dialed, []);
  });

  test("an unreachable first answer falls back to the next checked one, never to a new lookup", async () => {
    await start([`allowed.test:${P}`, `127.0.0.1:${P}`], {
      "allowed.test": ["2606:4700::1111", "127.0.0.1"],
    });
    const c = await RawClient.open(proxy?.socketPath ?? "");
    c.send(get(`http://allowed.test:${P}/fb`, `allowed.test:${P}`));
    assert.equal((await c.response()).body, `upstream saw allowed.test:${P}/fb`);
    c.end();
    assert.deepEqual(dial.dialed, [`2606:4700::1111 ${P}`, `127.0.0.1 ${P}`]);
    assert.deepEqual(dns.asked, ["allowed.test"]);
  });

  test("DNS rebinding: the proxy resolves once and dials the address it checked", async () => {
    let answers = 0;
    await proxy?.close();
    const d = guardedDial();
    connections = 0;
    // Public at the first question, loopback at any later one.
    proxy = await startAllowListProxy({
      allow: [`*.wild.test:${P}`],
      lookup: async () => [{ address: answers++ === 0 ? "1.1.1.1" : "127.0.0.1" }],
      connect: d.connect,
    });
    const r = await RawClient.open(proxy.socketPath);
    r.send(connectTo(`rebind.wild.test:${P}`));
    const res = await r.response();
    r.end();
    assert.equal(res.status, 502, "the guarded dialler refused the public address");
    assert.equal(answers, 1, "resolved exactly once");
    assert.deepEqual(d.dialed, [`1.1.1.1 ${P}`]);
    assert.equal(connections, 0);
  });

  test("ports: a rule without a port allows 80 and 443 only; name:port allows that port", async () => {
    await start(["allowed.test", "127.0.0.1"]);
    await expectRefused(
      connectTo(`allowed.test:${P}`),
      new RegExp(`port ${P} is not allowed for allowed.test \\(allowed: 80, 443\\)`),
    );
    await expectRefused(connectTo("allowed.test:22"), /port 22 is not allowed/);
    await expectRefused(get("http://allowed.test:8080/", "allowed.test:8080"), /port 8080 is not allowed/);
    assertNoConnection();
    const c = await RawClient.open(proxy?.socketPath ?? "");
    c.send(connectTo("allowed.test:443"));
    await c.response(); // 200 or 502, whatever listens on loopback 443: the policy let it through
    c.end();
    assert.deepEqual(dial.dialed, ["127.0.0.1 443"]);
    await expectRefused(connectTo("allowed.test"), /CONNECT needs host:port/);
  });

  test("percent-encoded NUL/CR/LF and raw control bytes in the target are refused", async () => {
    await start(baseRules());
    for (const t of [
      "evil.test%00.allowed.test",
      "evil.test%0d%0a.allowed.test",
      "evil.test%2f.allowed.test",
    ])
      await expectRefused(connectTo(`${t}:${P}`), /not a valid host name/);
    await expectRefused(get(`http://evil.test%00.allowed.test:${P}/`, "x"), /not a valid host name/);
    // Raw bytes: Node's parser refuses these before our code, still with a one-line reason.
    await expectRefused(
      `CONNECT evil.test\x00.allowed.test:${P} HTTP/1.1\r\nHost: x\r\n\r\n`,
      /malformed request/,
      400,
    );
    await expectRefused(
      `CONNECT evil.test\r.allowed.test:${P} HTTP/1.1\r\nHost: x\r\n\r\n`,
      /malformed request/,
      400,
    );
    await expectRefused(
      `GET http://allowed.test:${P}/ HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n`,
      /malformed request/,
      400,
    );
    assertNoConnection();
  });

  test("overlong request lines and headers are refused with 431, and the proxy keeps serving", async () => {
    await start(baseRules());
    await expectRefused(connectTo(`${"a".repeat(20_000)}.allowed.test:${P}`), /exceed 8192 bytes/, 431);
    const many = Array.from({ length: 100 }, (_, i) => `X-${i}: ${"v".repeat(100)}\r\n`).join("");
    await expectRefused(
      `GET http://allowed.test:${P}/ HTTP/1.1\r\nHost: allowed.test:${P}\r\n${many}\r\n`,
      /exceed/,
      431,
    );
    await expectRefused(connectTo(`${"a".repeat(300)}.allowed.test:${P}`), /not a valid host name|too long/);
    assertNoConnection();
    const c = await RawClient.open(proxy?.socketPath ?? "");
    c.send(get(`http://allowed.test:${P}/after`, `allowed.test:${P}`));
    assert.equal((await c.response()).status, 200);
    c.end();
  });

  test("wildcards: *.wild.test matches subdomains only, never look-alike suffixes", async () => {
    await start([`*.wild.test:${P}`], { "a.wild.test": ["127.0.0.1"] });
    for (const t of [
      "wild.test",
      "wild.test.evil.net",
      "evilwild.test",
      "a.wild.test.evil.net",
      "wild.test-evil.net",
    ])
      await expectRefused(connectTo(`${t}:${P}`), /is not on the allow-list/);
    assertNoConnection();
    // a.wild.test resolves to loopback, which no rule names: refused after the lookup.
    await expectRefused(connectTo(`a.wild.test:${P}`), /loopback/);
    assert.deepEqual(dns.asked, ["a.wild.test"]);
  });

  test("other request forms: https:// URLs, origin-form and CONNECT with a path are refused", async () => {
    await start(baseRules());
    await expectRefused(get(`https://allowed.test:${P}/`, `allowed.test:${P}`), /goes through CONNECT/);
    await expectRefused(get("/", `allowed.test:${P}`), /absolute http:\/\/ URL is required/);
    await expectRefused(connectTo(`allowed.test:${P}/x`), /expected host\[:port\]/);
    await expectRefused(connectTo(`http://allowed.test:${P}`), /expected host\[:port\]/);
    assertNoConnection();
  });

  test("every decision is written to the audit log", async () => {
    const ws = await tempWorkspace();
    try {
      const auditPath = join(ws.dir, "audit.jsonl");
      await start(baseRules(), {}, { auditPath });
      await expectRefused(connectTo("[::1%.allowed.test]:443"), /zone/);
      const c = await RawClient.open(proxy?.socketPath ?? "");
      c.send(connectTo(`allowed.test:${P}`));
      await c.response();
      c.end();
      const events = (await readFile(auditPath, "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      assert.equal(events.length, 2);
      assert.equal(events[0].event, "network");
      assert.equal(events[0].allowed, false);
      assert.match(events[0].reason, /zone ids are not allowed/);
      assert.equal(events[1].host, "allowed.test");
      assert.equal(events[1].allowed, true);
      assert.equal(events[1].address, "127.0.0.1");
    } finally {
      await ws.cleanup();
    }
  });
});
