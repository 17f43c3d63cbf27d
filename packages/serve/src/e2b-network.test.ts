// getHost traffic, egress rules, metrics history and auto-resume through the official `e2b` SDK,
// on bubblewrap, Docker and gVisor: a real server inside the sandbox reached through the
// sandbox address (E2b-Sandbox-Id/-Port headers and a `PORT-ID.domain` Host), its access rules
// (traffic token, allowPublicTraffic, maskRequestHost), allowOut/denyOut and updateNetwork
// against a real HTTP server on this machine, getMetrics({ start, end }), lifecycle payloads.
import assert from "node:assert/strict";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { after, before, describe, it } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { ALL_TRAFFIC, Sandbox } from "e2b";
import { dockerSkip, raw, startTestServe, type TestServe } from "./test-support.js";

after(() => {
  // dockerd may keep a finished session's stream open (see e2b-docker.test.ts).
  setTimeout(() => process.exit(), 2000).unref();
});

/** A server inside the sandbox that answers with what it received (method, path, headers, body). */
const ECHO_SERVER = `
import http.server, json, sys
class H(http.server.BaseHTTPRequestHandler):
    def echo(self):
        n = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(n) if n else b""
        out = json.dumps({"method": self.command, "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "bodyLength": len(body), "bodyTail": body[-8:].decode("latin1")}).encode()
        self.send_response(201)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.send_header("x-from-sandbox", "yes")
        self.end_headers()
        self.wfile.write(out)
    do_GET = do_POST = echo
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
`;

interface Echo {
  method: string;
  path: string;
  headers: Record<string, string>;
  bodyLength: number;
  bodyTail: string;
}

/** A non-loopback IPv4 address of this machine (the egress rules' target), if it has one. */
function hostAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  return undefined;
}

/** A request with a Host header of our choosing (fetch does not let one set it). */
function hostRequest(
  sandboxUrl: string,
  host: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const u = new URL(sandboxUrl);
  return new Promise((resolve, reject) => {
    const r = request(
      {
        host: u.hostname,
        port: u.port,
        path: "/via-host?x=1",
        headers: { ...headers, host },
        timeout: 15_000,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d) => {
          body += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    r.on("error", reject);
    r.end();
  });
}

async function startEcho(sb: Sandbox, port: number): Promise<void> {
  await sb.files.write("/home/user/echo.py", ECHO_SERVER);
  await sb.commands.run(`python /home/user/echo.py ${port}`, { background: true, timeoutMs: 0 });
}

const toPort = (s: TestServe, sb: Sandbox, port: number, extra: Record<string, string> = {}) => ({
  url: `${s.sandboxUrl}/p?q=1`,
  headers: { "e2b-sandbox-id": sb.sandboxId, "e2b-sandbox-port": String(port), ...extra },
});

/** Waits until the server in the sandbox answers (it starts in the background). */
async function untilServing(s: TestServe, sb: Sandbox, port: number): Promise<void> {
  const t = toPort(s, sb, port, { "e2b-traffic-access-token": sb.trafficAccessToken ?? "" });
  for (let i = 0; i < 100; i++) {
    const r = await raw(t.url, { headers: t.headers });
    if (r.status === 201) return;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error("the sandbox's server did not start");
}

const bwrap = checkBwrap();
// HANDS_TEST_TEMPLATES=base,docker runs some of them (while working on one backend).
const only = process.env.HANDS_TEST_TEMPLATES?.split(",");
const BACKENDS = (
  [
    ["base", bwrap.ok ? false : bwrap.reason],
    ["docker", await dockerSkip()],
    ["gvisor", await dockerSkip("runsc")],
  ] as const
).filter(([t]) => !only || only.includes(t));

for (const [template, skip] of BACKENDS) {
  describe(`getHost, network rules, metrics history, auto-resume (${template})`, {
    skip,
    timeout: 240_000,
  }, () => {
    let s: TestServe;
    let target: Server;
    let targetPort = 0;
    const hostIp = hostAddress();
    before(async () => {
      s = await startTestServe({ metricsIntervalMs: 300 });
      // getHost names PORT-ID.<domain>: wildcard DNS in front of the sandbox address would serve it.
      process.env.E2B_DOMAIN = "localhost";
      target = createServer((_req, res) => res.end("egress-ok"));
      await new Promise<void>((r) => target.listen(0, "0.0.0.0", r));
      targetPort = (target.address() as AddressInfo).port;
    });
    after(async () => {
      target?.close();
      await s?.stop();
    });

    it("routes a port's traffic into the sandbox, with its traffic token, as E2B does", async () => {
      const sb = await Sandbox.create(template, {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: E2B's literal ${PORT} placeholder
        network: { maskRequestHost: "custom-host.example.com:${PORT}" },
      });
      try {
        assert.ok(sb.trafficAccessToken);
        assert.equal(sb.getHost(8080), `8080-${sb.sandboxId}.localhost`);
        await startEcho(sb, 8080);
        await untilServing(s, sb, 8080);
        // The token in its header: the request arrives whole, without the service's headers.
        const big = "x".repeat(2 * 1024 * 1024 - 3) + "end";
        const t = toPort(s, sb, 8080, {
          "e2b-traffic-access-token": sb.trafficAccessToken as string,
          "x-mine": "kept",
        });
        const r = await raw(t.url, { method: "POST", headers: t.headers, body: big });
        assert.equal(r.status, 201, r.text);
        assert.equal(r.headers.get("x-from-sandbox"), "yes");
        const e = r.json() as Echo;
        assert.deepEqual(
          [e.method, e.path, e.bodyLength, e.bodyTail],
          ["POST", "/p?q=1", big.length, "xxxxxend"],
        );
        assert.equal(e.headers["x-mine"], "kept");
        // maskRequestHost: the sandbox's server sees that Host, ${PORT} filled in.
        assert.equal(e.headers.host, "custom-host.example.com:8080");
        for (const h of ["e2b-traffic-access-token", "x-access-token", "e2b-sandbox-id", "e2b-sandbox-port"])
          assert.equal(e.headers[h], undefined, `${h} reached the sandbox`);
        // The PORT-ID.domain Host form (wildcard DNS in front of the sandbox address).
        const viaHost = await hostRequest(s.sandboxUrl, `8080-${sb.sandboxId}.localhost:443`, {
          "e2b-traffic-access-token": sb.trafficAccessToken as string,
        });
        assert.equal(viaHost.status, 201, viaHost.body);
        assert.equal((JSON.parse(viaHost.body) as Echo).path, "/via-host?x=1");
        // No token, another sandbox's token, garbage: 403 (E2B's answer), nothing reaches the server.
        const other = await Sandbox.create(template);
        try {
          const attempts: Record<string, string>[] = [
            {},
            { "e2b-traffic-access-token": other.trafficAccessToken as string },
            { "x-access-token": (other as unknown as { envdAccessToken: string }).envdAccessToken },
            { "e2b-traffic-access-token": "x".repeat(5000) },
          ];
          for (const headers of attempts) {
            const p = toPort(s, sb, 8080, headers);
            const refused = await raw(p.url, { headers: p.headers });
            assert.equal(refused.status, 403, `${JSON.stringify(headers).slice(0, 80)}: ${refused.text}`);
            assert.match(refused.text, /traffic access token/);
          }
          const noHost = await hostRequest(s.sandboxUrl, `8080-${sb.sandboxId}.localhost`);
          assert.equal(noHost.status, 403);
        } finally {
          await other.kill();
        }
        // A port nothing listens on: E2B's 502.
        const closed = toPort(s, sb, 8081, { "e2b-traffic-access-token": sb.trafficAccessToken as string });
        const c = await raw(closed.url, { headers: closed.headers });
        assert.equal(c.status, 502);
        assert.match(c.text, /port is not open/);
        // Port 0 and 65536 are no ports; envd's port still wants its own token.
        for (const bad of ["0", "65536", "http"]) {
          const b = await raw(`${s.sandboxUrl}/`, {
            headers: { "e2b-sandbox-id": sb.sandboxId, "e2b-sandbox-port": bad },
          });
          assert.ok(b.status >= 400 && b.status < 500, `${bad}: ${b.status}`);
        }
        const envd = await raw(`${s.sandboxUrl}/health`, { headers: { "e2b-sandbox-id": sb.sandboxId } });
        assert.equal(envd.status, 401);
        // The sandbox's info says what it was created with.
        const info = await sb.getInfo();
        assert.equal(info.network?.allowPublicTraffic, false);
        // biome-ignore lint/suspicious/noTemplateCurlyInString: E2B's literal ${PORT} placeholder
        assert.equal(info.network?.maskRequestHost, "custom-host.example.com:${PORT}");
      } finally {
        await sb.kill();
      }
    });

    it("opens a public sandbox's ports without a token, but never envd's or the interpreter's", async () => {
      const sb = await Sandbox.create(template, { network: { allowPublicTraffic: true } });
      try {
        await startEcho(sb, 3000);
        await untilServing(s, sb, 3000);
        const open = await hostRequest(s.sandboxUrl, sb.getHost(3000));
        assert.equal(open.status, 201, open.body);
        assert.equal((JSON.parse(open.body) as Echo).headers.host, sb.getHost(3000));
        for (const port of ["49983", "49999"]) {
          const r = await raw(`${s.sandboxUrl}/health`, {
            headers: { "e2b-sandbox-id": sb.sandboxId, "e2b-sandbox-port": port },
          });
          assert.equal(r.status, 401, `${port}: ${r.text}`);
        }
        assert.equal((await sb.getInfo()).network?.allowPublicTraffic, true);
      } finally {
        await sb.kill();
      }
      // Gone: E2B's 502 with the sandbox's id.
      const gone = await hostRequest(s.sandboxUrl, sb.getHost(3000));
      assert.equal(gone.status, 502);
      assert.deepEqual(JSON.parse(gone.body), {
        message: "The sandbox was not found",
        sandboxId: sb.sandboxId,
        code: 502,
      });
    });

    it("applies allowOut/denyOut on create and updateNetwork while it runs", {
      skip: hostIp ? false : "no non-loopback address here",
    }, async () => {
      const url = `http://${hostIp}:${targetPort}/`;
      const curl = async (sb: Sandbox, u: string) =>
        (
          await sb.commands.run(`curl -s -m 10 -o /tmp/body -w '%{http_code}' ${u}; echo; cat /tmp/body`, {
            timeoutMs: 30_000,
          })
        ).stdout;
      const sb = await Sandbox.create(template, {
        network: { allowOut: [hostIp as string], denyOut: [ALL_TRAFFIC] },
      });
      try {
        assert.equal(await curl(sb, url), "200\negress-ok");
        // Everything else is refused by the proxy, with the reason.
        const refused = await curl(sb, "http://203.0.113.9/");
        assert.match(refused, /^403\n.*not on the sandbox's allowOut list/s);
        const info = await sb.getInfo();
        assert.deepEqual([info.network?.allowOut, info.network?.denyOut], [[hostIp], [ALL_TRAFFIC]]);
        // Now denied; other public addresses allowed (203.0.113.9 is reserved: still refused).
        await sb.updateNetwork({ denyOut: [`${hostIp}/32`] });
        assert.match(await curl(sb, url), /^403\n.*denied by the sandbox's egress rules \(denyOut/s);
        // Omitted lists are emptied: a private address needs allowOut to name it.
        await sb.updateNetwork({});
        assert.match(await curl(sb, url), /^403\n.*allowOut must name it/s);
        await sb.updateNetwork({ allowOut: [hostIp as string] });
        assert.equal(await curl(sb, url), "200\negress-ok");
        // Bad rules are refused whole, the ones in force stay.
        await assert.rejects(
          sb.updateNetwork({ denyOut: ["example.com"] }),
          /only addresses and CIDR blocks/,
        );
        assert.equal(await curl(sb, url), "200\negress-ok");
      } finally {
        await sb.kill();
      }
      // A domain in denyOut, a rule E2B's cloud has but this service does not: refused at create.
      await assert.rejects(Sandbox.create(template, { network: { denyOut: ["example.com"] } }), /denyOut/);
      await assert.rejects(
        Sandbox.create(template, { network: { egressProxy: { address: "proxy:1080" } } }),
        /egressProxy is not supported/,
      );
      // Without rules there is no proxy to change: said so, nothing changed.
      const plain = await Sandbox.create(template);
      try {
        await assert.rejects(plain.updateNetwork({ allowOut: ["1.1.1.1"] }), /created without egress rules/);
        await plain.updateNetwork({});
      } finally {
        await plain.kill();
      }
    });

    it("keeps a history of metrics for getMetrics({ start, end })", async () => {
      const start = new Date();
      const sb = await Sandbox.create(template);
      try {
        await new Promise((r) => setTimeout(r, 2000));
        const end = new Date();
        const m = await sb.getMetrics({ start, end });
        assert.ok(m.length >= 2, `${m.length} readings`);
        for (const x of m) {
          assert.ok(x.timestamp.getTime() >= Math.floor(start.getTime() / 1000) * 1000, String(x.timestamp));
          assert.ok(x.timestamp.getTime() <= end.getTime() + 1000, String(x.timestamp));
          assert.ok(x.memTotal > 0 && x.cpuCount > 0);
        }
        const before = await sb.getMetrics({
          start: new Date(start.getTime() - 3600_000),
          end: new Date(start.getTime() - 1800_000),
        });
        assert.deepEqual(before, []);
        await assert.rejects(
          raw(`${s.apiUrl}/sandboxes/${sb.sandboxId}/metrics?start=20&end=10`, {
            headers: { "x-api-key": s.key },
          }).then((r) => {
            if (r.status !== 400) throw new Error(`status ${r.status}`);
            throw new Error(r.text);
          }),
          /start must not be after end/,
        );
      } finally {
        await sb.kill();
      }
    });

    it("resumes a sandbox paused on timeout when traffic comes, if created with autoResume", async () => {
      const auto = await Sandbox.create(template, {
        timeoutMs: 2000,
        lifecycle: { onTimeout: "pause", autoResume: true },
      });
      const manual = await Sandbox.create(template, { timeoutMs: 2000, lifecycle: { onTimeout: "pause" } });
      try {
        // (On a slow machine the write may come after the pause: it resumes `auto`, as traffic does.)
        await auto.files.write("/home/user/kept.txt", "kept");
        // The timeouts start again now, so both pause after the write.
        await Promise.allSettled([auto.setTimeout(1000), manual.setTimeout(1000)]);
        for (let i = 0; i < 100; i++) {
          const states = await Promise.all([auto, manual].map(async (x) => (await x.getInfo()).state));
          if (states.every((st) => st === "paused")) break;
          await new Promise((r) => setTimeout(r, 200));
        }
        assert.equal((await auto.getInfo()).state, "paused");
        assert.deepEqual((await auto.getInfo()).lifecycle, { onTimeout: "pause", autoResume: true });
        // envd traffic with its token resumes it, files kept.
        assert.equal((await auto.commands.run("cat /home/user/kept.txt")).stdout, "kept");
        assert.equal((await auto.getInfo()).state, "running");
        // Without autoResume, traffic finds it paused; connect resumes it.
        await assert.rejects(manual.commands.run("true"));
        assert.equal((await manual.getInfo()).state, "paused");
      } finally {
        await Promise.allSettled([auto.kill(), manual.kill()]);
      }
    });
  });
}

describe("--public-traffic: E2B's default for sandboxes that do not say", {
  skip: bwrap.ok ? false : bwrap.reason,
  timeout: 120_000,
}, () => {
  let s: TestServe;
  before(async () => {
    s = await startTestServe({ publicTrafficByDefault: true });
    process.env.E2B_DOMAIN = "localhost";
  });
  after(async () => {
    await s?.stop();
  });

  it("opens the ports of a sandbox created without allowPublicTraffic, not of one that asked for false", async () => {
    const [open, closed] = await Promise.all([
      Sandbox.create("base"),
      Sandbox.create("base", { network: { allowPublicTraffic: false } }),
    ]);
    try {
      for (const sb of [open, closed]) {
        await startEcho(sb, 8000);
        await untilServing(s, sb, 8000);
      }
      assert.equal((await hostRequest(s.sandboxUrl, open.getHost(8000))).status, 201);
      assert.equal((await hostRequest(s.sandboxUrl, closed.getHost(8000))).status, 403);
      assert.equal((await open.getInfo()).network?.allowPublicTraffic, true);
      const envd = await raw(`${s.sandboxUrl}/health`, { headers: { "e2b-sandbox-id": open.sandboxId } });
      assert.equal(envd.status, 401);
    } finally {
      await Promise.allSettled([open.kill(), closed.kill()]);
    }
  });
});
