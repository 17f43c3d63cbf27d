// WebSockets through getHost (the suite e2b-websocket*.test.ts run per backend): a WebSocket server inside the
// sandbox (Python's standard library, written below: the sandbox has no WebSocket package)
// reached through the sandbox address with a real client (undici's WebSocket, the one Node
// ships) and through the `PORT-ID.domain` Host form (node:http's upgrade). The handshake is the
// sandbox's server's own; the service passes the bytes both ways after its access checks.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { request } from "node:http";
import type { Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { Sandbox } from "e2b";
import { WebSocket } from "undici";
import { raw, startTestServe, type TestServe } from "./test-support.js";

/** RFC 6455 by hand: greets with what it saw (path, Host, headers), then echoes every message. */
const WS_SERVER = `
import base64, hashlib, json, socket, struct, sys, threading
def send(c, op, data):
    n = len(data)
    if n < 126: h = bytes([0x80 | op, n])
    elif n < 65536: h = bytes([0x80 | op, 126]) + struct.pack(">H", n)
    else: h = bytes([0x80 | op, 127]) + struct.pack(">Q", n)
    c.sendall(h + data)
def exact(f, n):
    b = f.read(n)
    if len(b) < n: raise EOFError
    return b
def handle(c):
    f = c.makefile("rb")
    line = f.readline().decode()
    hs = {}
    while True:
        l = f.readline().decode().strip()
        if not l: break
        k, v = l.split(":", 1)
        hs[k.strip().lower()] = v.strip()
    if hs.get("upgrade", "").lower() != "websocket":
        c.sendall(b"HTTP/1.1 426 Upgrade Required\\r\\ncontent-length: 2\\r\\n\\r\\nno"); c.close(); return
    acc = base64.b64encode(hashlib.sha1((hs["sec-websocket-key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
    c.sendall(("HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Accept: " + acc + "\\r\\n\\r\\n").encode())
    send(c, 1, json.dumps({"path": line.split()[1], "headers": hs}).encode())
    try:
        while True:
            b0, b1 = exact(f, 2)
            op, n = b0 & 15, b1 & 127
            if n == 126: n = struct.unpack(">H", exact(f, 2))[0]
            elif n == 127: n = struct.unpack(">Q", exact(f, 8))[0]
            m = exact(f, 4) if b1 & 128 else b"\\0\\0\\0\\0"
            d = bytes(x ^ m[i % 4] for i, x in enumerate(exact(f, n)))
            if op == 8: send(c, 8, d[:2]); break
            if op == 9: send(c, 10, d); continue
            send(c, op, d)
    except EOFError: pass
    c.close()
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
while True:
    c, _ = s.accept(); threading.Thread(target=handle, args=(c,), daemon=True).start()
`;

const PORT = 8765;

/** Resolves with the socket once open, or rejects with what the handshake answered. */
function open(url: string, headers: Record<string, string>): Promise<{ ws: WebSocket; first: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.binaryType = "arraybuffer";
    const t = setTimeout(() => {
      ws.close();
      reject(new Error("no WebSocket in 15 s"));
    }, 15_000);
    ws.onmessage = (e) => {
      clearTimeout(t);
      ws.onmessage = null;
      resolve({ ws, first: String(e.data) });
    };
    ws.onerror = (e) => {
      clearTimeout(t);
      reject(new Error(`WebSocket failed: ${(e as unknown as { message?: string }).message ?? "error"}`));
    };
  });
}

function next(ws: WebSocket): Promise<string | ArrayBuffer> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("no message in 15 s")), 15_000);
    ws.onmessage = (e) => {
      clearTimeout(t);
      resolve(e.data as string | ArrayBuffer);
    };
  });
}

/** A raw upgrade request: the status the service (or the sandbox's server) answered with. */
function upgradeStatus(
  sandboxUrl: string,
  headers: Record<string, string>,
): Promise<{ status: number; accept?: string; body: string; socket?: Socket }> {
  const u = new URL(sandboxUrl);
  return new Promise((resolve, reject) => {
    const r = request({
      host: u.hostname,
      port: u.port,
      path: "/raw",
      headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", ...headers },
      timeout: 15_000,
    });
    r.on("upgrade", (res, socket) => {
      resolve({
        status: res.statusCode ?? 0,
        accept: String(res.headers["sec-websocket-accept"]),
        body: "",
        socket,
      });
    });
    r.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => {
        body += d;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    r.on("timeout", () => r.destroy(new Error("no answer in 15 s")));
    r.on("error", reject);
    r.end();
  });
}

/** The suite on one template (`skip`: why it cannot run here, or false). */
export function websocketSuite(template: string, skip: string | false): void {
  describe(`WebSockets through getHost (${template})`, { skip, timeout: 120_000 }, () => {
    let s: TestServe;
    let sb: Sandbox;
    let wsUrl = "";
    before(async () => {
      s = await startTestServe();
      process.env.E2B_DOMAIN = "localhost";
      // biome-ignore lint/suspicious/noTemplateCurlyInString: E2B's literal ${PORT} placeholder
      sb = await Sandbox.create(template, { network: { maskRequestHost: "app.example:${PORT}" } });
      await sb.files.write("/home/user/ws.py", WS_SERVER);
      await sb.commands.run(`python3 /home/user/ws.py ${PORT}`, { background: true, timeoutMs: 0 });
      wsUrl = `${s.sandboxUrl.replace(/^http/, "ws")}/chat?room=1`;
      const headers = {
        "e2b-sandbox-id": sb.sandboxId,
        "e2b-sandbox-port": String(PORT),
        "e2b-traffic-access-token": sb.trafficAccessToken ?? "",
      };
      for (let i = 0; ; i++) {
        const r = await raw(`${s.sandboxUrl}/`, { headers });
        if (r.status === 426) break;
        if (i > 150) throw new Error(`the sandbox's server did not start: ${r.status} ${r.text}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    });
    after(async () => {
      await sb?.kill().catch(() => {});
      await s?.stop();
    });

    const headersFor = (extra: Record<string, string> = {}) => ({
      "e2b-sandbox-id": sb.sandboxId,
      "e2b-sandbox-port": String(PORT),
      ...extra,
    });

    it("carries a WebSocket both ways, text and a 300 KB binary message, without the service's headers", async () => {
      const { ws, first } = await open(
        wsUrl,
        headersFor({ "e2b-traffic-access-token": sb.trafficAccessToken ?? "" }),
      );
      try {
        const seen = JSON.parse(first) as { path: string; headers: Record<string, string> };
        assert.equal(seen.path, "/chat?room=1");
        assert.equal(seen.headers.host, `app.example:${PORT}`, "maskRequestHost applies to upgrades too");
        for (const h of ["e2b-traffic-access-token", "x-access-token", "e2b-sandbox-id", "e2b-sandbox-port"])
          assert.equal(seen.headers[h], undefined, `${h} reached the sandbox`);
        ws.send("hello sandbox");
        assert.equal(await next(ws), "hello sandbox");
        const big = randomBytes(300 * 1024);
        ws.send(big);
        const back = Buffer.from((await next(ws)) as ArrayBuffer);
        assert.equal(back.length, big.length);
        assert.ok(back.equals(big), "the binary message came back changed");
      } finally {
        ws.close();
      }
    });

    it("routes by the PORT-ID.domain Host that getHost returns; the sandbox's server answers the handshake", async () => {
      const key = randomBytes(16).toString("base64");
      const r = await upgradeStatus(s.sandboxUrl, {
        host: sb.getHost(PORT),
        "sec-websocket-key": key,
        "e2b-traffic-access-token": sb.trafficAccessToken ?? "",
      });
      r.socket?.destroy();
      assert.equal(r.status, 101, r.body);
      const want = createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
      assert.equal(r.accept, want);
    });

    it("refuses an upgrade without the traffic token, with another sandbox's, to a closed port and to envd's port", async () => {
      const key = randomBytes(16).toString("base64");
      const none = await upgradeStatus(s.sandboxUrl, { ...headersFor(), "sec-websocket-key": key });
      assert.equal(none.status, 403, none.body);
      assert.match(none.body, /traffic access token/);
      const other = await Sandbox.create(template);
      try {
        const wrong = await upgradeStatus(s.sandboxUrl, {
          ...headersFor({ "e2b-traffic-access-token": other.trafficAccessToken ?? "" }),
          "sec-websocket-key": key,
        });
        assert.equal(wrong.status, 403);
      } finally {
        await other.kill();
      }
      const closed = await upgradeStatus(s.sandboxUrl, {
        "e2b-sandbox-id": sb.sandboxId,
        "e2b-sandbox-port": String(PORT + 1),
        "e2b-traffic-access-token": sb.trafficAccessToken ?? "",
        "sec-websocket-key": key,
      });
      assert.equal(closed.status, 502);
      assert.match(closed.body, /port is not open/);
      const envd = await upgradeStatus(s.sandboxUrl, {
        "e2b-sandbox-id": sb.sandboxId,
        "e2b-sandbox-port": "49983",
        "x-access-token": (sb as unknown as { envdAccessToken: string }).envdAccessToken,
        "sec-websocket-key": key,
      });
      assert.equal(envd.status, 400);
      const unknown = await upgradeStatus(s.sandboxUrl, {
        "e2b-sandbox-id": "nosuchsandbox",
        "e2b-sandbox-port": String(PORT),
        "sec-websocket-key": key,
      });
      assert.equal(unknown.status, 502);
      assert.match(unknown.body, /not found/);
    });

    it("closes an open WebSocket when its sandbox is killed", async () => {
      const victim = await Sandbox.create(template);
      await victim.files.write("/home/user/ws.py", WS_SERVER);
      await victim.commands.run(`python3 /home/user/ws.py ${PORT}`, { background: true, timeoutMs: 0 });
      const headers = {
        "e2b-sandbox-id": victim.sandboxId,
        "e2b-sandbox-port": String(PORT),
        "e2b-traffic-access-token": victim.trafficAccessToken ?? "",
      };
      let opened: { ws: WebSocket; first: string } | undefined;
      for (let i = 0; !opened; i++) {
        opened = await open(wsUrl, headers).catch((e) => {
          if (i > 100) throw e;
          return new Promise<undefined>((r) => setTimeout(() => r(undefined), 100));
        });
      }
      const { ws } = opened;
      const closed = new Promise<number>((resolve) => {
        ws.onclose = (e) => resolve(e.code);
      });
      await victim.kill();
      const code = await Promise.race([closed, new Promise((r) => setTimeout(() => r("open"), 10_000))]);
      assert.notEqual(code, "open", "the WebSocket outlived its sandbox");
    });
  });
}
