// web_fetch against real local HTTP servers: pages, APIs, redirects that lead somewhere the
// rules forbid, bodies that stall, never end or inflate, wrong charsets, error statuses and
// a server that does not speak HTTP.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import { after, before, describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { type LookupFn, parseAllowRules } from "@hands/sandbox";
import { makeTestContext, type TestContext } from "../test-context.js";
import type { ToolResult } from "../types.js";
import { createWebFetchTool, type WebFetchArgs, type WebFetchOptions } from "./web-fetch.js";

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

const routes = new Map<string, Handler>();
/** Bytes each streaming route managed to write before the client went away. */
const written = new Map<string, number>();
let server: Server;
let port = 0;
let t: TestContext;

const ARTICLE = `<!doctype html><html><head><title>Tides</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a> Subscribe now!</nav>
<article><h1>How tides work</h1>
${"<p>The moon pulls the oceans toward it, and the earth turns beneath that bulge of water, so most coasts see two high tides a day. See <a href='/moon'>the moon</a>.</p>".repeat(6)}
<pre><code>tide = f(moon, sun)</code></pre></article>
<footer>© 2026 cookie banner</footer><script>alert("x")</script></body></html>`;

/** Streams `total` bytes of `chunk` as fast as the client reads, counting what was written. */
function stream(
  name: string,
  res: ServerResponse,
  chunk: Buffer,
  total: number,
  headers: Record<string, string>,
) {
  res.writeHead(200, { ...headers, "content-length": String(total) });
  let sent = 0;
  written.set(name, 0);
  const pump = () => {
    while (sent < total) {
      const piece = chunk.subarray(0, Math.min(chunk.length, total - sent));
      sent += piece.length;
      written.set(name, sent);
      if (!res.write(piece)) return void res.once("drain", pump);
    }
    res.end();
  };
  res.on("close", () => written.set(name, sent));
  pump();
}

before(async () => {
  t = makeTestContext();
  routes.set("/article", (_q, r) =>
    r.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ARTICLE),
  );
  routes.set("/echo", (q, r, body) =>
    r.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        method: q.method,
        body,
        auth: q.headers.authorization ?? null,
        type: q.headers["content-type"],
      }),
    ),
  );
  routes.set("/to-metadata", (_q, r) =>
    r.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end(),
  );
  routes.set("/to-internal-name", (_q, r) => r.writeHead(301, { location: "http://intranet.test/" }).end());
  routes.set("/to-article", (_q, r) => r.writeHead(307, { location: "/article" }).end());
  routes.set("/post-then-see-other", (_q, r) => r.writeHead(303, { location: "/echo" }).end());
  routes.set("/loop", (_q, r) => r.writeHead(302, { location: "/loop" }).end());
  routes.set("/to-other-origin", (_q, r) =>
    r.writeHead(307, { location: `http://other.test:${port}/echo` }).end(),
  );
  routes.set("/slow", (_q, r) => {
    r.writeHead(200, { "content-type": "text/plain" });
    r.write("first bytes, then nothing");
  });
  routes.set("/slow-head", () => {});
  routes.set("/huge", (_q, r) =>
    stream("huge", r, Buffer.alloc(64 * 1024, "a"), 5 * 1024 ** 3, { "content-type": "text/plain" }),
  );
  // A gzip bomb: 1 GiB of zeros-like text in ~1 MB, as 100 concatenated gzip members of 10 MiB each.
  const member = gzipSync(Buffer.alloc(10 * 1024 ** 2, "z"), { level: 9 });
  routes.set("/bomb", (_q, r) => {
    r.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
    let sent = 0;
    written.set("bomb", 0);
    const pump = () => {
      while (sent < 100) {
        sent++;
        written.set("bomb", sent * member.length);
        if (!r.write(member)) return void r.once("drain", pump);
      }
      r.end();
    };
    pump();
  });
  routes.set("/corrupt-gzip", (_q, r) =>
    r
      .writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
      .end(Buffer.from("not gzip at all")),
  );
  routes.set("/latin1-says-utf8", (_q, r) =>
    r
      .writeHead(200, { "content-type": "text/plain; charset=utf-8" })
      .end(Buffer.from("Caf\xe9 cr\xe8me br\xfbl\xe9e", "latin1")),
  );
  routes.set("/meta-charset", (_q, r) =>
    r
      .writeHead(200, { "content-type": "text/html" })
      .end(
        Buffer.from(
          `<html><head><meta charset="iso-8859-1"><title>Gr\xfc\xdfe</title></head><body><p>Sch\xf6ne Gr\xfc\xdfe aus K\xf6ln</p></body></html>`,
          "latin1",
        ),
      ),
  );
  routes.set("/bogus-charset", (_q, r) =>
    r
      .writeHead(200, { "content-type": "text/plain; charset=klingon-8" })
      .end(Buffer.from("naïve café", "utf8")),
  );
  routes.set("/shift-jis", (_q, r) =>
    // 日本語 in Shift_JIS
    r
      .writeHead(200, { "content-type": "text/plain; charset=Shift_JIS" })
      .end(Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea])),
  );
  routes.set("/json", (_q, r) =>
    r.writeHead(200, { "content-type": "application/json" }).end('{"a":[1,2,{"b":null}]}'),
  );
  routes.set("/bad-json", (_q, r) =>
    r.writeHead(200, { "content-type": "application/json" }).end('{"a": [1, 2'),
  );
  routes.set("/png", (_q, r) =>
    stream("png", r, Buffer.alloc(64 * 1024, 0x89), 2 * 1024 ** 3, { "content-type": "image/png" }),
  );
  routes.set("/unlabelled-binary", (_q, r) => r.end(Buffer.from([0, 1, 2, 3, 0, 0, 255, 254, 0, 7])));
  routes.set("/429", (_q, r) =>
    r.writeHead(429, { "content-type": "text/plain", "retry-after": "7" }).end("slow down, please"),
  );
  routes.set("/500", (_q, r) =>
    r
      .writeHead(500, { "content-type": "text/html" })
      .end("<html><body><h1>Internal Server Error</h1></body></html>"),
  );
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const route = routes.get(new URL(req.url ?? "/", "http://x").pathname);
      if (!route) return void res.writeHead(404).end("no such page");
      route(req, res, Buffer.concat(chunks).toString());
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await t.cleanup();
});

/** Names the tests use: site.test and other.test are this server; intranet.test a private address. */
const lookups: string[] = [];
const testLookup: LookupFn = async (host) => {
  lookups.push(host);
  if (host === "site.test" || host === "other.test") return [{ address: "127.0.0.1" }];
  if (host === "intranet.test") return [{ address: "10.1.2.3" }];
  throw new Error("ENOTFOUND");
};

function tool(rules: string[], extra: Partial<WebFetchOptions> = {}) {
  return createWebFetchTool({ rules: parseAllowRules(rules), lookup: testLookup, ...extra });
}
/** The rules of a session that allows this server by name (and its loopback address, which the name resolves to). */
const siteRules = () => [`site.test:${port}`, `other.test:${port}`, `127.0.0.1:${port}`];
const fetchSite = (args: Partial<WebFetchArgs> & { path: string }, extra: Partial<WebFetchOptions> = {}) => {
  const { path, ...rest } = args;
  return tool(siteRules(), extra).execute({ url: `http://site.test:${port}${path}`, ...rest }, t.ctx);
};

function ok(r: ToolResult): string {
  assert.equal(r.isError, undefined, r.output);
  return r.output;
}
function failed(r: ToolResult, pattern: RegExp): void {
  assert.equal(r.isError, true, r.output);
  assert.match(r.output, /^ERROR: /);
  assert.match(r.output, pattern);
}

describe("web_fetch", () => {
  it("turns an HTML page into readable markdown: the article, without nav, footer or scripts", async () => {
    const out = ok(await fetchSite({ path: "/article" }));
    assert.match(out, /^GET http:\/\/site\.test:\d+\/article\nHTTP 200 OK/);
    assert.match(out, /Title: (How tides work|Tides)/);
    assert.match(out, /The moon pulls the oceans toward it/);
    assert.match(out, /\[the moon\]\(http:\/\/site\.test:\d+\/moon\)/, "relative links made absolute");
    assert.match(out, /```\ntide = f\(moon, sun\)\n```/);
    assert.doesNotMatch(out, /Subscribe now|cookie banner|alert\(/);
    assert.doesNotMatch(out, /<p>|<article>/);
  });

  it("sends other methods with a body and pretty-prints JSON", async () => {
    const r = await fetchSite({
      path: "/echo",
      method: "POST",
      body: '{"q":1}',
      headers: { "content-type": "application/json" },
    });
    const out = ok(r);
    assert.match(out, /\{\n {2}"method": "POST",\n {2}"body": "\{\\"q\\":1\}"/);
    assert.equal(r.data?.status, 200);
    ok(await fetchSite({ path: "/json" }));
    assert.match(ok(await fetchSite({ path: "/json" })), /"a": \[\n {4}1,/);
    assert.match(
      ok(await fetchSite({ path: "/bad-json" })),
      /Note: not valid JSON .*shown as sent\n\n\{"a": \[1, 2/,
    );
  });

  it("refuses everything when no domain is allowed, and what the rules do not name", async () => {
    failed(
      await tool([]).execute({ url: `http://site.test:${port}/article` }, t.ctx),
      /site\.test is not on the allow-list/,
    );
    failed(
      await tool(["example.com"]).execute({ url: `http://127.0.0.1:${port}/` }, t.ctx),
      /IP address 127\.0\.0\.1 is not on the allow-list/,
    );
    // Allowed by name, but the name resolves to loopback and no rule names that address.
    failed(
      await tool([`site.test:${port}`]).execute({ url: `http://site.test:${port}/article` }, t.ctx),
      /site\.test resolves to 127\.0\.0\.1, a loopback address/,
    );
    failed(
      await tool(siteRules()).execute({ url: `http://site.test:${port + 1}/` }, t.ctx),
      /port \d+ is not allowed/,
    );
    for (const url of [
      "file:///etc/passwd",
      "ftp://site.test/x",
      `http://u:p@site.test:${port}/`,
      "not a url",
    ])
      failed(await tool(siteRules()).execute({ url }, t.ctx), /only http|user name|not a valid URL/);
    // Other spellings of loopback are the same address to the rules.
    failed(
      await tool(["example.com"]).execute({ url: `http://2130706433:${port}/` }, t.ctx),
      /127\.0\.0\.1 is not on/,
    );
  });

  it("checks every redirect hop: to a metadata address or a name that resolves privately is refused", async () => {
    const r = await fetchSite({ path: "/to-metadata" });
    failed(r, /169\.254\.169\.254 is not on the allow-list/);
    assert.deepEqual(
      (r.data?.redirects as { status: number }[] | undefined)?.map((h) => h.status),
      [302],
      "the first hop was answered, the second never sent",
    );
    // Even a rule naming the name does not let a private answer through.
    const r2 = await tool([...siteRules(), "intranet.test"]).execute(
      { url: `http://site.test:${port}/to-internal-name` },
      t.ctx,
    );
    failed(r2, /intranet\.test resolves to 10\.1\.2\.3, a private address/);
    // A same-site redirect is followed, and said.
    const out = ok(await fetchSite({ path: "/to-article" }));
    assert.match(
      out,
      /Redirected: http:\/\/site\.test:\d+\/to-article \(307\) → http:\/\/site\.test:\d+\/article \(200\)/,
    );
    failed(await fetchSite({ path: "/loop" }), /more than 5 redirects/);
  });

  it("resolves a name once per hop and connects to the address it checked", async () => {
    lookups.length = 0;
    const r = await fetchSite({ path: "/article" });
    ok(r);
    assert.deepEqual(lookups, ["site.test"]);
    assert.equal(r.data?.address, "127.0.0.1");
  });

  it("303 after a POST becomes a GET; credentials are not sent to another origin", async () => {
    const out = ok(await fetchSite({ path: "/post-then-see-other", method: "POST", body: "x=1" }));
    assert.match(out, /"method": "GET"/);
    assert.match(out, /"body": ""/);
    const cross = ok(
      await fetchSite({ path: "/to-other-origin", headers: { authorization: "Bearer secret" } }),
    );
    assert.match(cross, /"auth": null/);
    const same = ok(await fetchSite({ path: "/echo", headers: { authorization: "Bearer secret" } }));
    assert.match(same, /"auth": "Bearer secret"/);
  });

  it("a body that stalls ends at the timeout, not later", async () => {
    const start = Date.now();
    failed(await fetchSite({ path: "/slow", timeout: 1 }), /timed out after 1 s/);
    failed(await fetchSite({ path: "/slow-head", timeout: 1 }), /timed out after 1 s/);
    assert.ok(Date.now() - start < 4000, `took ${Date.now() - start} ms`);
  });

  it("a 5 GB body is cut at the cap without being read", async () => {
    const start = Date.now();
    const r = await fetchSite({ path: "/huge" }, { maxBytes: 1024 * 1024 });
    const out = ok(r);
    assert.equal(r.data?.bytes, 1024 * 1024);
    assert.equal(r.data?.truncated, true);
    assert.match(out, /Truncated: the body was cut at 1\.0 MB of 5\.0 GB/);
    await new Promise((res) => setTimeout(res, 200));
    const sent = written.get("huge") ?? 0;
    assert.ok(sent < 64 * 1024 ** 2, `the server wrote ${sent} bytes`);
    assert.ok(Date.now() - start < 5000);
  });

  it("a gzip bomb inflates only up to the cap", async () => {
    const r = await fetchSite({ path: "/bomb" }, { maxBytes: 2 * 1024 * 1024 });
    ok(r);
    assert.equal(r.data?.bytes, 2 * 1024 * 1024);
    assert.equal(r.data?.truncated, true);
    assert.ok((r.data?.wireBytes as number) < 1024 * 1024, `read ${r.data?.wireBytes} compressed bytes`);
    failed(await fetchSite({ path: "/corrupt-gzip" }), /gzip body is corrupt/);
  });

  it("decodes wrong, missing and unknown charsets", async () => {
    const latin = ok(await fetchSite({ path: "/latin1-says-utf8" }));
    assert.match(latin, /Café crème brûlée/);
    assert.match(latin, /Charset: declared utf-8 but the bytes are not valid UTF-8; decoded as windows-1252/);
    const meta = await fetchSite({ path: "/meta-charset" });
    assert.match(ok(meta), /Schöne Grüße aus Köln/);
    assert.equal(meta.data?.encoding, "windows-1252"); // iso-8859-1 is windows-1252 to WHATWG
    const bogus = ok(await fetchSite({ path: "/bogus-charset" }));
    assert.match(bogus, /naïve café/);
    assert.match(bogus, /unknown charset "klingon-8"; decoded as UTF-8/);
    assert.match(ok(await fetchSite({ path: "/shift-jis" })), /日本語/);
  });

  it("refuses binary with its type and size, before reading it", async () => {
    const r = await fetchSite({ path: "/png" });
    failed(r, /is binary \(image\/png, 2\.0 GB\)/);
    assert.equal(r.data?.bytes, undefined);
    failed(await fetchSite({ path: "/unlabelled-binary" }), /is binary \(no Content-Type/);
  });

  it("429 and 500 are errors with the status, Retry-After and the start of the body", async () => {
    const r = await fetchSite({ path: "/429" });
    failed(r, /HTTP 429 Too Many Requests from .*\(Retry-After: 7\)/);
    assert.match(r.output, /slow down, please/);
    failed(await fetchSite({ path: "/500" }), /HTTP 500 Internal Server Error[\s\S]*Internal Server Error/);
    failed(await fetchSite({ path: "/missing" }), /HTTP 404/);
  });

  it("a server that answers garbage, or hangs up, is a clear error", async () => {
    const garbage = createTcpServer((s) => s.end("SSH-2.0-OpenSSH_9.6\r\nlol\r\n\r\n"));
    const hangup = createTcpServer((s) => s.destroy());
    await new Promise<void>((r) => garbage.listen(0, "127.0.0.1", r));
    await new Promise<void>((r) => hangup.listen(0, "127.0.0.1", r));
    const g = (garbage.address() as AddressInfo).port;
    const h = (hangup.address() as AddressInfo).port;
    try {
      const rules = [`127.0.0.1:${g}`, `127.0.0.1:${h}`];
      failed(
        await tool(rules).execute({ url: `http://127.0.0.1:${g}/` }, t.ctx),
        /did not answer with valid HTTP/,
      );
      failed(await tool(rules).execute({ url: `http://127.0.0.1:${h}/` }, t.ctx), /closed the connection/);
    } finally {
      garbage.close();
      hangup.close();
    }
  });

  it("refuses malformed requests before sending them", async () => {
    failed(await fetchSite({ path: "/echo", body: "x" }), /a GET request has no body/);
    failed(
      await fetchSite({ path: "/echo", headers: { host: "evil.test" } }),
      /host header is set by web_fetch/,
    );
    failed(await fetchSite({ path: "/echo", headers: { "x-a": "1\r\nx-b: 2" } }), /not a valid header/);
  });

  it("an aborted run cancels the request", async () => {
    const c = makeTestContext();
    const pending = tool(siteRules()).execute({ url: `http://site.test:${port}/slow` }, c.ctx);
    setTimeout(() => c.abort(), 100);
    failed(await pending, /cancelled/);
    await c.cleanup();
  });
});
