// The model client behind a corporate proxy: a real HTTP proxy server (the `proxy` package, a
// small Squid) on 127.0.0.1 in front of the scripted model server. http goes as absolute-URI
// requests, https through a CONNECT tunnel to a TLS front of the scripted server.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import { createServer as createTlsServer } from "node:tls";
import { fileURLToPath } from "node:url";
import { createProxy } from "proxy";
import { ProxyError } from "./http-fetch.js";
import { OpenAIProvider } from "./openai.js";
import { type ScriptedServer, startScriptedServer } from "./testing/scripted-server.js";
import { ModelError } from "./types.js";

const PROXY_VARS = ["http_proxy", "https_proxy", "all_proxy", "no_proxy"].flatMap((n) => [
  n,
  n.toUpperCase(),
]);

interface ProxySeen {
  /** request lines the proxy received: "GET http://…" or "CONNECT host:port" */
  lines: string[];
  url: string;
  close(): Promise<void>;
}

/** A real forwarding proxy; `refuse` makes it answer 407 to everything. */
async function startProxy(refuse = false): Promise<ProxySeen> {
  const server = createProxy(createServer());
  const lines: string[] = [];
  server.prependListener("request", (req: IncomingMessage) => lines.push(`${req.method} ${req.url}`));
  server.prependListener("connect", (req: IncomingMessage) => lines.push(`CONNECT ${req.url}`));
  if (refuse) server.authenticate = () => false;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    lines,
    url: `http://127.0.0.1:${port}`,
    close: () => closeServer(server),
  };
}

function closeServer(server: Server | ReturnType<typeof createTlsServer>): Promise<void> {
  (server as Server).closeAllConnections?.();
  return new Promise((r) => server.close(() => r()));
}

function setProxyEnv(vars: Record<string, string>): void {
  for (const n of PROXY_VARS) delete process.env[n];
  Object.assign(process.env, vars);
}

const saved = Object.fromEntries(PROXY_VARS.map((n) => [n, process.env[n]]));
afterEach(() => {
  for (const n of PROXY_VARS) {
    if (saved[n] === undefined) delete process.env[n];
    else process.env[n] = saved[n];
  }
});

function provider(baseURL: string): OpenAIProvider {
  return new OpenAIProvider({
    baseURL,
    apiKey: "sk-test",
    model: "m",
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
  });
}

const ASK = { messages: [{ role: "user" as const, content: "hi" }], tools: [] };

describe("the model client behind a proxy", () => {
  let model: ScriptedServer;
  before(async () => {
    model = await startScriptedServer(() => ({ content: "through the proxy" }));
  });
  after(() => model.close());

  test("HTTP_PROXY: http requests go to the proxy with the absolute URI", async () => {
    const proxy = await startProxy();
    try {
      setProxyEnv({ HTTP_PROXY: proxy.url });
      const before = model.requests.length;
      const r = await provider(model.url).complete(ASK);
      assert.equal(r.message.content, "through the proxy");
      assert.deepEqual(proxy.lines, [`POST ${model.url}/chat/completions`]);
      assert.equal(model.requests.length, before + 1, "the model server got the request once");
    } finally {
      await proxy.close();
    }
  });

  test("lowercase http_proxy wins; NO_PROXY by host suffix or host:port goes direct", async () => {
    const proxy = await startProxy();
    const port = new URL(model.url).port;
    try {
      setProxyEnv({ http_proxy: proxy.url, HTTP_PROXY: "http://127.0.0.1:9" });
      assert.equal((await provider(model.url).complete(ASK)).message.content, "through the proxy");
      assert.equal(proxy.lines.length, 1);

      // A NO_PROXY port rule for another port does not apply.
      setProxyEnv({ HTTP_PROXY: proxy.url, NO_PROXY: "127.0.0.1:1" });
      await provider(model.url).complete(ASK);
      assert.equal(proxy.lines.length, 2);

      for (const noProxy of [`127.0.0.1:${port}`, "example.com, .0.0.1", "*"]) {
        setProxyEnv({ HTTP_PROXY: proxy.url, no_proxy: noProxy });
        await provider(model.url).complete(ASK);
        assert.equal(proxy.lines.length, 2, `NO_PROXY=${noProxy} goes direct`);
      }
      // "localhost" in NO_PROXY does not cover 127.0.0.1.
      setProxyEnv({ HTTP_PROXY: proxy.url, NO_PROXY: "localhost" });
      await provider(model.url).complete(ASK);
      assert.equal(proxy.lines.length, 3);
    } finally {
      await proxy.close();
    }
  });

  test("a proxy that refuses (407) or is not there gives a clear error naming it", async () => {
    const refusing = await startProxy(true);
    try {
      setProxyEnv({ HTTP_PROXY: refusing.url });
      await assert.rejects(provider(model.url).complete(ASK), (e: Error) => {
        assert.ok(e instanceof ModelError, String(e));
        assert.match(
          e.message,
          new RegExp(`proxy ${refusing.url} \\(from HTTP_PROXY\\) requires authentication \\(407\\)`),
        );
        return true;
      });
    } finally {
      await refusing.close();
    }
    // A port nothing listens on (the proxy just closed), with credentials that must not be shown.
    const gone = new URL(refusing.url);
    gone.username = "user";
    gone.password = "s3cret";
    setProxyEnv({ HTTP_PROXY: gone.href });
    await assert.rejects(provider(model.url).complete(ASK), (e: Error) => {
      assert.match(
        e.message,
        new RegExp(`cannot reach the proxy ${refusing.url} \\(from HTTP_PROXY\\): .*ECONNREFUSED`),
      );
      assert.doesNotMatch(e.message, /s3cret/);
      return true;
    });
    setProxyEnv({ HTTP_PROXY: "socks5://127.0.0.1:1080" });
    await assert.rejects(provider(model.url).complete(ASK), /unsupported proxy socks5:\/\/127\.0\.0\.1:1080/);
  });

  test("a ProxyError is what nodeFetch rejects with", async () => {
    const { nodeFetch } = await import("./http-fetch.js");
    setProxyEnv({ HTTP_PROXY: "http://127.0.0.1:1" });
    await assert.rejects(nodeFetch(`${model.url}/models`), ProxyError);
  });
});

describe("https through a CONNECT tunnel", {
  skip: !hasOpenssl() && "openssl is needed to make a test certificate (scripts/test-env.sh)",
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "hands-proxy-tls-"));
  let model: ScriptedServer;
  let tls: ReturnType<typeof createTlsServer>;
  let httpsUrl = "";
  before(async () => {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ],
      { stdio: "ignore" },
    );
    model = await startScriptedServer(() => ({ content: "tunnelled" }));
    const modelPort = Number(new URL(model.url).port);
    // TLS in front of the scripted server, as a real https endpoint would be.
    tls = createTlsServer(
      { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
      (s) => {
        const up = connect(modelPort, "127.0.0.1");
        s.pipe(up).pipe(s);
        s.on("error", () => up.destroy());
        up.on("error", () => s.destroy());
      },
    );
    await new Promise<void>((r) => tls.listen(0, "127.0.0.1", r));
    httpsUrl = `https://127.0.0.1:${(tls.address() as AddressInfo).port}${new URL(model.url).pathname}`;
  });
  after(async () => {
    await closeServer(tls);
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh process, so NODE_EXTRA_CA_CERTS (read at start) makes the test certificate trusted. */
  function completeIn(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
    const index = fileURLToPath(new URL("./index.js", import.meta.url));
    const script = `import { OpenAIProvider } from ${JSON.stringify(index)};
      const p = new OpenAIProvider({ baseURL: ${JSON.stringify(httpsUrl)}, apiKey: "k", model: "m", retry: { baseDelayMs: 5, maxDelayMs: 20 } });
      try { const r = await p.complete({ messages: [{ role: "user", content: "hi" }], tools: [] }); console.log("OK " + r.message.content); }
      catch (e) { console.log("ERR " + e.message); process.exitCode = 1; }`;
    const base: NodeJS.ProcessEnv = { ...process.env };
    for (const n of PROXY_VARS) delete base[n];
    return new Promise((resolve) => {
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        env: { ...base, NODE_EXTRA_CA_CERTS: join(dir, "cert.pem"), ...env },
      });
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
      });
      child.stderr.on("data", (d) => {
        out += d;
      });
      child.on("close", (code) => resolve({ code, out }));
    });
  }

  test("https_proxy: a CONNECT to the model's host, then TLS end to end", async () => {
    const proxy = await startProxy();
    try {
      const r = await completeIn({ https_proxy: proxy.url });
      assert.equal(r.out.trim(), "OK tunnelled");
      assert.deepEqual(proxy.lines, [`CONNECT ${new URL(httpsUrl).host}`]);
      // The tunnel does not weaken TLS: a certificate nobody trusts is still refused.
      const untrusted = await completeIn({ https_proxy: proxy.url, NODE_EXTRA_CA_CERTS: "" });
      assert.match(
        untrusted.out,
        /^ERR .*connection error: .*\((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\)/,
      );
      // Without the proxy variable nothing goes through it.
      const seen = proxy.lines.length;
      const direct = await completeIn({});
      assert.equal(direct.out.trim(), "OK tunnelled");
      assert.equal(proxy.lines.length, seen);
    } finally {
      await proxy.close();
    }
  });

  test("a refused CONNECT is a clear error, and the request never reaches the model", async () => {
    const proxy = await startProxy(true);
    try {
      const before = model.requests.length;
      const r = await completeIn({ HTTPS_PROXY: proxy.url });
      assert.equal(r.code, 1);
      assert.match(
        r.out,
        new RegExp(`ERR .*the proxy ${proxy.url} \\(from HTTPS_PROXY\\) requires authentication \\(407\\)`),
      );
      assert.equal(model.requests.length, before);
    } finally {
      await proxy.close();
    }
  });
});

function hasOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
