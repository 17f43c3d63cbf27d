// Allow-list network mode: an allowed name reaches a server we run on 127.0.0.1 (the test's
// resolver maps the name to it and a rule names that address), an unlisted one is refused at
// once with a reason the tool prints, direct connections fail. The attacks on the proxy's
// parsing and checks are in security/proxy-attacks.test.ts.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, test } from "node:test";
import { startAllowListProxy } from "./proxy.js";
import { hostAllowed } from "./proxy-rules.js";
import { explicitlySkipped, makeSandbox, requireBackend, tempWorkspace } from "./testing.js";
import type { SandboxKind } from "./types.js";

test("hostAllowed matches listed domains and their subdomains only", () => {
  assert.equal(hostAllowed("pypi.org", ["pypi.org"]), true);
  assert.equal(hostAllowed("files.pypi.org", ["pypi.org"]), true);
  assert.equal(hostAllowed("evilpypi.org", ["pypi.org"]), false);
  assert.equal(hostAllowed("pypi.org.evil.com", ["pypi.org"]), false);
  assert.equal(hostAllowed("PyPI.org.", ["pypi.org"]), true);
  assert.equal(hostAllowed("files.pypi.org", ["*.pypi.org"]), true);
  assert.equal(hostAllowed("pypi.org", ["*.pypi.org"]), false, "*. means subdomains only");
  assert.equal(hostAllowed("pypi.org", ["pypi.org"], 8443), false, "default ports are 80 and 443");
  assert.equal(hostAllowed("pypi.org", ["pypi.org:8443"], 8443), true);
});

for (const kind of ["bwrap", "docker"] as SandboxKind[]) {
  describe(`allow-list network: ${kind}`, { skip: explicitlySkipped(kind) }, () => {
    let server: Server;
    let port = 0;
    let proxy: Awaited<ReturnType<typeof startAllowListProxy>>;
    let ws: { dir: string; cleanup: () => Promise<void> };
    before(async () => {
      await requireBackend(kind);
      server = createServer((q, r) => r.end(`local server saw ${q.headers.host}${q.url}`));
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      port = (server.address() as { port: number }).port;
      proxy = await startAllowListProxy({
        allow: [`allowed.test:${port}`, `127.0.0.1:${port}`],
        lookup: async (name) => {
          if (name === "allowed.test") return [{ address: "127.0.0.1" }];
          throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
        },
      });
      ws = await tempWorkspace();
    });
    after(async () => {
      await proxy?.close();
      server?.close();
      await ws?.cleanup();
    });

    test("allowed names pass, others are refused fast, direct connections fail", async () => {
      const sb = await makeSandbox(kind, ws.dir, { network: "proxy", proxySocket: proxy.socketPath });
      try {
        const ok = await sb.exec(`curl -sS -m 5 http://allowed.test:${port}/a`);
        assert.equal(ok.stdout, `local server saw allowed.test:${port}/a`);
        const tunnel = await sb.exec(`curl -sS -m 5 -p http://sub.allowed.test:${port}/b`);
        assert.match(tunnel.stdout + tunnel.stderr, /local server saw|Could not resolve|refused|502/);
        const denied = await sb.exec(
          `curl -sS -m 5 -w '%{http_code}' -o /dev/null http://denied.test:${port}/`,
        );
        assert.equal(denied.stdout, "403");
        assert.ok(denied.durationMs < 3000);
        const https = await sb.exec(`curl -sS -m 5 https://denied.test:${port}/`);
        assert.notEqual(https.exitCode, 0);
        assert.match(https.stderr, /403/);
        // The reason reaches the tool: Python prints the CONNECT status line it got.
        const py = await sb.exec(
          `python3 -c "import urllib.request as u; u.urlopen('https://denied.test:${port}/', timeout=5)"`,
        );
        assert.notEqual(py.exitCode, 0);
        assert.match(py.stderr, /403 Forbidden \(hands proxy: denied\.test is not on the allow-list\)/);
        const body = await sb.exec(`curl -sS -m 5 http://denied.test:${port}/`);
        assert.equal(body.stdout, "hands proxy: denied.test is not on the allow-list\n");
        const direct = await sb.exec(`curl -sS -m 5 --noproxy '*' http://127.0.0.1:${port}/`);
        assert.notEqual(direct.exitCode, 0);
        assert.ok(proxy.log.some((l) => l.host === "denied.test" && !l.allowed));
      } finally {
        await sb.destroy();
      }
    });

    test("the forwarder (a process commands can reach) holds none of the session's descriptors", async () => {
      const sb = await makeSandbox(kind, ws.dir, { network: "proxy", proxySocket: proxy.socketPath });
      try {
        // Every descriptor of every process this command may open /proc/PID/fd of, by target.
        const r = await sb.exec(
          // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
          "for d in /proc/[0-9]*/fd; do p=${d#/proc/}; p=${p%/fd}; [ $p = $BASHPID ] && continue; " +
            'for f in "$d"/*; do t=$(readlink "$f" 2>/dev/null) && echo "$p $(cat /proc/$p/comm) $t"; done; done',
        );
        const lines = r.stdout.trim().split("\n");
        // The forwarder is reachable (a plain python3 of the sandbox's user)…
        assert.ok(
          lines.some((l) => / python3 /.test(l)),
          r.stdout,
        );
        // …but it holds no state file, and nothing reachable holds one.
        assert.doesNotMatch(r.stdout, /hands-state/, r.stdout);
      } finally {
        await sb.destroy();
      }
    });
  });
}
