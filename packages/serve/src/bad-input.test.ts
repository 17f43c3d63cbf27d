// Hostile input, from outside (malformed requests, oversized bodies, slow clients, fuzzed Connect
// calls) and from inside (paths and symlinks that try to reach the host, a command that kills the
// agent): each gets the protocol's error shape, and the service keeps serving.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { checkBwrap } from "@hands/sandbox";
import { Sandbox } from "e2b";
import { raw, startTestServe, type TestServe } from "./test-support.js";

const skip = checkBwrap().ok ? false : `bubblewrap is not usable here: ${checkBwrap().reason}`;

function envelope(json: string, flags = 0): Buffer {
  const body = Buffer.from(json);
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/** The end-of-stream envelope of a Connect stream response, parsed. */
function endOfStream(body: Buffer): { error?: { code: string; message: string } } {
  let off = 0;
  for (;;) {
    assert.ok(off + 5 <= body.length, "stream ends with an end-of-stream envelope");
    const flags = body[off] as number;
    const len = body.readUInt32BE(off + 1);
    const json = body.subarray(off + 5, off + 5 + len).toString();
    off += 5 + len;
    if (flags & 0x02) return JSON.parse(json);
  }
}

describe("bad input", { skip, timeout: 120_000 }, () => {
  let s: TestServe;
  let sb: Sandbox;
  let h: Record<string, string>;
  before(async () => {
    s = await startTestServe({
      headersTimeoutMs: 500,
      maxMessageBytes: 1024 * 1024,
      maxUploadBytes: 4 * 1024 * 1024,
    });
    sb = await Sandbox.create();
    const info = (
      await raw(`${s.apiUrl}/sandboxes/${sb.sandboxId}`, { headers: { "x-api-key": s.key } })
    ).json() as {
      envdAccessToken: string;
    };
    h = {
      "e2b-sandbox-id": sb.sandboxId,
      "e2b-sandbox-port": "49983",
      "x-access-token": info.envdAccessToken,
    };
  });
  after(async () => {
    await sb?.kill().catch(() => {});
    await s?.stop();
  });

  it("management API: malformed and oversized bodies, bad fields, unknown endpoints → {code, message}", async () => {
    const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
      raw(`${s.apiUrl}${path}`, {
        method: "POST",
        headers: { "x-api-key": s.key, "content-type": "application/json", ...headers },
        body,
      });
    const cases: Array<[Promise<{ status: number; json: () => unknown }>, number, RegExp]> = [
      [post("/v2/sandboxes", "{not json"), 400, /not valid JSON/],
      [post("/v2/sandboxes", "[1,2]"), 400, /JSON object/],
      [post("/v2/sandboxes", Buffer.alloc(2 * 1024 * 1024, 0x20)), 413, /too large/],
      [post("/v2/sandboxes", JSON.stringify({ timeout: "long" })), 400, /timeout/],
      [post("/v2/sandboxes", JSON.stringify({ timeout: -1 })), 400, /timeout/],
      [post("/v2/sandboxes", JSON.stringify({ metadata: { a: 1 } })), 400, /metadata\.a must be a string/],
      [post("/v2/sandboxes", JSON.stringify({ envVars: [] })), 400, /envVars/],
      [post("/v2/sandboxes", JSON.stringify({ templateID: "nope" })), 404, /template 'nope' not found/],
      [post("/v2/sandboxes", JSON.stringify({ allow_internet_access: "yes" })), 400, /boolean/],
      [raw(`${s.apiUrl}/v2/sandboxes?nextToken=%%%`, { headers: { "x-api-key": s.key } }), 400, /nextToken/],
      [raw(`${s.apiUrl}/v2/sandboxes?limit=0`, { headers: { "x-api-key": s.key } }), 400, /limit/],
      [raw(`${s.apiUrl}/v2/sandboxes?state=dead`, { headers: { "x-api-key": s.key } }), 400, /unknown state/],
      [raw(`${s.apiUrl}/no-such-thing`, { headers: { "x-api-key": s.key } }), 404, /no such endpoint/],
      [
        raw(`${s.apiUrl}/sandboxes/${sb.sandboxId}`, { method: "PUT", headers: { "x-api-key": s.key } }),
        405,
        /method/,
      ],
      [post(`/sandboxes/${sb.sandboxId}/timeout`, "{}"), 400, /timeout is required/],
      [post("/sandboxes/doesnotexist0000000/pause", "{}"), 404, /not found/],
    ];
    for (const [p, status, message] of cases) {
      const r = await p;
      assert.equal(r.status, status);
      const body = r.json() as { code: number; message: string };
      assert.equal(body.code, status);
      assert.match(body.message, message);
    }
  });

  it("data plane: malformed envelopes, wrong types, unknown methods, oversized messages", async () => {
    const stream = (method: string, body: Buffer, extra: Record<string, string> = {}) =>
      fetch(`${s.sandboxUrl}/${method}`, {
        method: "POST",
        headers: { ...h, "content-type": "application/connect+json", ...extra },
        body,
      });
    const expectStreamError = async (p: Promise<Response>, code: string) => {
      const r = await p;
      assert.equal(r.status, 200);
      assert.equal(r.headers.get("content-type"), "application/connect+json");
      assert.equal(endOfStream(Buffer.from(await r.arrayBuffer())).error?.code, code);
    };
    await expectStreamError(stream("process.Process/Start", Buffer.from([0, 0, 0])), "invalid_argument");
    await expectStreamError(
      stream("process.Process/Start", envelope("{}").subarray(0, 6)),
      "invalid_argument",
    );
    await expectStreamError(stream("process.Process/Start", envelope("{}", 1)), "unimplemented");
    await expectStreamError(stream("process.Process/Start", envelope("nope")), "invalid_argument");
    await expectStreamError(stream("process.Process/Start", envelope('{"process":{}}')), "invalid_argument");
    await expectStreamError(
      stream("process.Process/Start", envelope('{"process":{"cmd":"/bin/true","args":[1]}}')),
      "invalid_argument",
    );
    await expectStreamError(
      stream("process.Process/Start", envelope('{"process":{"cmd":"/no/such/binary"}}')),
      "not_found",
    );
    await expectStreamError(
      stream("process.Process/Connect", envelope('{"process":{"pid":999999}}')),
      "not_found",
    );
    await expectStreamError(
      stream("filesystem.Filesystem/WatchDir", envelope('{"path":"/no/such/dir"}')),
      "not_found",
    );
    const unary = (method: string, body: string, type = "application/json") =>
      raw(`${s.sandboxUrl}/${method}`, { method: "POST", headers: { ...h, "content-type": type }, body });
    const cases: Array<[string, string, number, string]> = [
      ["process.Process/Nope", "{}", 501, "unimplemented"],
      ["process.Process/List", "{", 400, "invalid_argument"],
      [
        "process.Process/SendSignal",
        '{"process":{"pid":1},"signal":"SIGNAL_SIGHUP"}',
        400,
        "invalid_argument",
      ],
      ["process.Process/SendInput", '{"process":{"pid":424242},"input":{"stdin":"eA=="}}', 404, "not_found"],
      ["filesystem.Filesystem/Stat", '{"path":""}', 400, "invalid_argument"],
      ["filesystem.Filesystem/Stat", '{"path":"/nope"}', 404, "not_found"],
      ["filesystem.Filesystem/ListDir", '{"path":"/home/user","depth":1000}', 400, "invalid_argument"],
      ["filesystem.Filesystem/Remove", '{"path":"/usr/bin/env"}', 403, "permission_denied"],
      ["filesystem.Filesystem/GetWatcherEvents", '{"watcherId":"x"}', 404, "not_found"],
    ];
    for (const [m, body, status, code] of cases) {
      const r = await unary(m, body);
      assert.equal(r.status, status, `${m} ${body}: ${r.text}`);
      assert.equal((r.json() as { code: string }).code, code);
    }
    assert.equal((await unary("process.Process/List", "{}", "application/proto")).status, 415);
    const big = await unary("process.Process/List", JSON.stringify({ pad: "x".repeat(2 * 1024 * 1024) }));
    assert.equal(big.status, 429);
    assert.equal((big.json() as { code: string }).code, "resource_exhausted");
    assert.equal((await raw(`${s.sandboxUrl}/nope`, { headers: h })).status, 404);
    assert.equal(
      (await raw(`${s.sandboxUrl}/health`, { headers: { ...h, "e2b-sandbox-port": "8080" } })).status,
      502,
    );
  });

  it("/files: paths and symlinks resolve inside the sandbox, never on the host", async () => {
    const secret = `/tmp/hands-serve-secret-${randomBytes(4).toString("hex")}`;
    writeFileSync(secret, "host secret");
    try {
      for (const p of [`../../../..${secret}`, secret, `/proc/1/root${secret}`]) {
        const r = await raw(`${s.sandboxUrl}/files?path=${encodeURIComponent(p)}`, { headers: h });
        // Not found, or refused (the sandbox's own pid 1 is not readable): never the host's file.
        assert.ok(r.status === 404 || r.status === 403, `${p}: ${r.status} ${r.text}`);
        assert.ok(!r.text.includes("host secret"));
      }
      await sb.commands.run(`ln -s ${secret} /home/user/link-to-host`);
      const viaLink = await raw(`${s.sandboxUrl}/files?path=link-to-host`, { headers: h });
      assert.equal(viaLink.status, 404);
      const passwd = await sb.files.read("/etc/passwd");
      assert.ok(!passwd.includes("/root:/bin/bash"), "the sandbox's /etc/passwd is its own, not the host's");
      const outside = `/etc/hands-serve-escape-${randomBytes(4).toString("hex")}`;
      // `/` is the sandbox's own (writable, as on E2B): the write lands there, never on the host.
      await sb.files.write(`../../..${outside}`, "x");
      assert.equal(await sb.files.read(outside), "x");
      assert.equal(existsSync(outside), false);
      const up = await raw(`${s.sandboxUrl}/files?path=/usr/bin/hands-planted`, {
        method: "POST",
        headers: { ...h, "content-type": "application/octet-stream" },
        body: "x",
      });
      assert.ok(up.status === 403 || up.status === 500, up.text);
      assert.equal(existsSync("/usr/bin/hands-planted"), false);
    } finally {
      rmSync(secret, { force: true });
    }
  });

  it("/files: oversized uploads, bad multipart and bad gzip are refused", async () => {
    const up = (body: Buffer | string, headers: Record<string, string>, q = "path=up.bin") =>
      raw(`${s.sandboxUrl}/files?${q}`, { method: "POST", headers: { ...h, ...headers }, body });
    const tooBig = await up(Buffer.alloc(5 * 1024 * 1024), { "content-type": "application/octet-stream" });
    assert.equal(tooBig.status, 413);
    assert.deepEqual(Object.keys(tooBig.json() as object), ["code", "message"]);
    const badMultipart = await up("garbage", { "content-type": "multipart/form-data; boundary=xyz" });
    assert.equal(badMultipart.status, 400, badMultipart.text);
    const noBoundary = await up("garbage", { "content-type": "multipart/form-data" });
    assert.equal(noBoundary.status, 400);
    const badGzip = await up("not gzip", {
      "content-type": "application/octet-stream",
      "content-encoding": "gzip",
    });
    assert.equal(badGzip.status, 400);
    const noPath = await up("x", { "content-type": "application/octet-stream" }, "");
    assert.equal(noPath.status, 400);
    assert.equal((await up("x", { "content-type": "text/plain" })).status, 400);
    assert.equal(await sb.isRunning(), true);
  });

  it("cuts off clients that send their headers too slowly, and keeps serving others", {
    timeout: 30_000,
  }, async () => {
    const url = new URL(s.sandboxUrl);
    const sock = connect(Number(url.port), url.hostname);
    const closed = new Promise<boolean>((r) => {
      sock.once("close", () => r(true));
      setTimeout(() => r(false), 5000).unref();
    });
    await new Promise((r) => sock.once("connect", r));
    sock.write("POST /process.Process/List HTTP/1.1\r\nHost: x\r\n");
    assert.equal(await closed, true, "closed within the header timeout");
    sock.destroy();
    assert.equal((await sb.commands.run("echo fine", { timeoutMs: 10_000 })).stdout, "fine\n");
  });

  it("survives fuzzed Connect calls and answers each with a protocol error shape", async () => {
    let seed = 0x2545f491;
    const rnd = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const methods = [
      "process.Process/Start",
      "process.Process/Connect",
      "process.Process/List",
      "process.Process/SendInput",
      "process.Process/SendSignal",
      "process.Process/CloseStdin",
      "filesystem.Filesystem/Stat",
      "filesystem.Filesystem/ListDir",
      "filesystem.Filesystem/MakeDir",
      "filesystem.Filesystem/Move",
      "filesystem.Filesystem/WatchDir",
    ];
    const values = [
      '""',
      "null",
      "-1",
      "1e309",
      '"/home/user/../../etc"',
      "[]",
      "{}",
      '{"pid":"x"}',
      '"\\u0000"',
      "true",
    ];
    const fields = [
      "process",
      "path",
      "pid",
      "input",
      "signal",
      "depth",
      "source",
      "destination",
      "cmd",
      "stdin",
    ];
    for (let i = 0; i < 200; i++) {
      const method = methods[rnd(methods.length)] as string;
      const streaming = /Start|Connect|WatchDir/.test(method);
      const obj = Array.from(
        { length: rnd(4) },
        () => `"${fields[rnd(fields.length)]}":${values[rnd(values.length)]}`,
      ).join(",");
      let body: Buffer =
        rnd(4) === 0 ? randomBytes(rnd(64)) : Buffer.from(rnd(5) === 0 ? `{${obj}` : `{${obj}}`);
      if (streaming && rnd(3) !== 0) body = envelope(body.toString("latin1"), rnd(6) === 0 ? rnd(256) : 0);
      // Watches and processes that do start are ended by a short deadline.
      const r = await fetch(`${s.sandboxUrl}/${method}`, {
        method: "POST",
        headers: {
          ...h,
          "content-type": streaming ? "application/connect+json" : "application/json",
          "connect-timeout-ms": "200",
        },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      const buf = Buffer.from(await r.arrayBuffer());
      if (streaming) {
        assert.equal(r.status, 200, `${method} ${body.toString("hex")}`);
        endOfStream(buf);
      } else if (r.status !== 200) {
        const e = JSON.parse(buf.toString()) as { code: string; message: string };
        assert.equal(typeof e.code, "string");
        assert.equal(typeof e.message, "string");
      }
    }
    assert.equal((await sb.commands.run("echo alive")).stdout, "alive\n");
    assert.equal((await raw(`${s.apiUrl}/health`)).status, 200);
  });

  it("a command that kills the sandbox's agent loses that sandbox only", async () => {
    const victim = await Sandbox.create();
    await victim.commands.run("kill -9 $PPID").catch(() => {});
    for (let i = 0; i < 50 && (await victim.isRunning()); i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await victim.isRunning(), false);
    assert.equal((await s.store.sandbox(victim.sandboxId))?.state, "lost");
    // Still shown, as lost, until its tenant kills it.
    assert.equal((await Sandbox.getInfo(victim.sandboxId)).state, "lost");
    assert.equal(await Sandbox.kill(victim.sandboxId), true);
    await assert.rejects(Sandbox.getInfo(victim.sandboxId), /not found/i);
    assert.equal((await sb.commands.run("echo unaffected")).stdout, "unaffected\n");
  });

  it("cuts off a stream whose client stops reading, instead of buffering its output", async () => {
    const url = new URL(s.sandboxUrl);
    const sock = connect(Number(url.port), url.hostname);
    await new Promise((r) => sock.once("connect", r));
    const body = envelope(
      JSON.stringify({ process: { cmd: "/bin/bash", args: ["-c", "head -c 300000000 /dev/zero"] } }),
    );
    const head = [
      "POST /process.Process/Start HTTP/1.1",
      "Host: x",
      "Content-Type: application/connect+json",
      ...Object.entries(h).map(([k, v]) => `${k}: ${v}`),
      `Content-Length: ${body.length}`,
      "",
      "",
    ].join("\r\n");
    sock.write(Buffer.concat([Buffer.from(head), body]));
    sock.pause();
    const rssBefore = process.memoryUsage().rss;
    await new Promise((r) => setTimeout(r, 4000));
    const grown = process.memoryUsage().rss - rssBefore;
    let tail = "";
    let total = 0;
    // Read until the response is over: the socket closes, or (kept alive) the chunked body's
    // last chunk follows the error; 20 s at most.
    await new Promise<void>((r) => {
      const timer = setTimeout(r, 20_000);
      const done = () => {
        clearTimeout(timer);
        r();
      };
      sock.on("data", (d: Buffer) => {
        total += d.length;
        tail = (tail + d.toString("latin1")).slice(-4096);
        if (/resource_exhausted[\s\S]*\r\n0\r\n\r\n$/.test(tail)) done();
      });
      sock.once("close", done);
      sock.resume();
    });
    sock.destroy();
    assert.match(tail, /resource_exhausted/, "the stream ends with an error once 32 MiB wait unread");
    assert.ok(total < 200_000_000, `only what was buffered was sent (${total} bytes)`);
    assert.ok(grown < 150 * 1024 * 1024, `the service's memory grew by ${Math.round(grown / 1048576)} MiB`);
  });

  it("streams a large output without losing bytes", async () => {
    const r = await sb.commands.run("head -c 5000000 /dev/zero | tr '\\0' a; echo; echo done >&2");
    assert.equal(r.stdout.length, 5_000_001);
    assert.ok(/^a+\n$/.test(r.stdout));
    assert.equal(r.stderr, "done\n");
  });
});
