// Network allow-list: an HTTP(S) proxy on the host that only connects to listed domains (and
// their subdomains), listening on a Unix socket that is mounted into the sandbox. Inside,
// a tiny forwarder (python3) listens on 127.0.0.1:3128 and passes connections to that socket;
// HTTP_PROXY/HTTPS_PROXY point there. The sandbox has no other network: anything that does
// not go through the proxy fails at once, and the proxy refuses unlisted hosts with 403.
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const PROXY_PORT = 3128;
export const PROXY_SOCKET_IN_SANDBOX = "/run/hands-proxy.sock";

export const PROXY_ENV: Readonly<Record<string, string>> = {
  HTTP_PROXY: `http://127.0.0.1:${PROXY_PORT}`,
  HTTPS_PROXY: `http://127.0.0.1:${PROXY_PORT}`,
  http_proxy: `http://127.0.0.1:${PROXY_PORT}`,
  https_proxy: `http://127.0.0.1:${PROXY_PORT}`,
  NO_PROXY: "localhost,127.0.0.1",
  no_proxy: "localhost,127.0.0.1",
};

/** Python forwarder started inside the sandbox: TCP 127.0.0.1:3128 → the proxy's Unix socket. */
export const FORWARDER = `
import os, socket, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", ${PROXY_PORT})); s.listen(64)
print("ready", flush=True)
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d: break
            b.sendall(d)
    except OSError: pass
    try: b.shutdown(socket.SHUT_WR)
    except OSError: pass
def handle(c):
    u = socket.socket(socket.AF_UNIX)
    try: u.connect("${PROXY_SOCKET_IN_SANDBOX}")
    except OSError:
        c.close(); return
    t = threading.Thread(target=pipe, args=(c, u), daemon=True); t.start()
    pipe(u, c); t.join(); c.close(); u.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
`;

/** True when `host` is one of `allow` or a subdomain of one. */
export function hostAllowed(host: string, allow: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return allow.some((d) => {
    const a = d
      .toLowerCase()
      .replace(/^\*?\./, "")
      .replace(/\.$/, "");
    return a !== "" && (h === a || h.endsWith(`.${a}`));
  });
}

export interface AllowListProxy {
  socketPath: string;
  env: Record<string, string>;
  /** Requests seen (host, allowed) — for the audit log and tests. */
  log: Array<{ host: string; port: number; allowed: boolean }>;
  close(): Promise<void>;
}

/**
 * Starts the proxy. `resolve` maps host names to addresses before connecting (tests point an
 * allowed name at a local server); otherwise the host's resolver is used.
 */
export async function startAllowListProxy(options: {
  allow: readonly string[];
  resolve?: Record<string, string>;
}): Promise<AllowListProxy> {
  const dir = await mkdtemp(join(tmpdir(), "hands-proxy-"));
  const socketPath = join(dir, "proxy.sock");
  const log: AllowListProxy["log"] = [];
  const target = (host: string) => options.resolve?.[host.toLowerCase()] ?? host;
  const sockets = new Set<Socket>();

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    // Plain HTTP through the proxy: the request line carries an absolute URL.
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      res.writeHead(400).end("hands proxy: absolute URL required\n");
      return;
    }
    const port = Number(url.port || 80);
    const allowed = url.protocol === "http:" && hostAllowed(url.hostname, options.allow);
    log.push({ host: url.hostname, port, allowed });
    if (!allowed) {
      res
        .writeHead(403, { "content-type": "text/plain" })
        .end(`hands proxy: ${url.hostname} is not on the allow-list\n`);
      return;
    }
    const headers = { ...req.headers };
    delete headers["proxy-connection"];
    const up = request(
      {
        host: target(url.hostname),
        port,
        path: `${url.pathname}${url.search}`,
        method: req.method,
        headers,
        timeout: 30_000,
      },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on("error", (e) => {
      if (!res.headersSent) res.writeHead(502).end(`hands proxy: ${e.message}\n`);
      else res.destroy();
    });
    req.pipe(up);
  });

  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => {});
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(req.url ?? "");
    const host = m?.[1] ?? "";
    const port = Number(m?.[2] ?? 0);
    const allowed = host !== "" && port > 0 && hostAllowed(host, options.allow);
    log.push({ host, port, allowed });
    if (!allowed) {
      client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nhands proxy: ${host} is not on the allow-list\n`,
      );
      return;
    }
    const up = connect({ host: target(host), port });
    sockets.add(up);
    up.on("close", () => sockets.delete(up));
    up.setTimeout(30_000, () => up.destroy());
    up.once("connect", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    up.on("error", (e) => client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\nhands proxy: ${e.message}\n`));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  await chmod(socketPath, 0o666);
  await chmod(dir, 0o755);
  return {
    socketPath,
    env: { ...PROXY_ENV },
    log,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
