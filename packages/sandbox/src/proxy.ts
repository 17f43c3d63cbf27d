// Network allow-list: an HTTP(S) proxy on the host that only connects to what the rules
// allow (proxy-rules.ts), listening on a Unix socket that is mounted into the sandbox. Inside,
// a tiny forwarder (python3) listens on 127.0.0.1:3128 and passes connections to that socket;
// HTTP_PROXY/HTTPS_PROXY point there. The sandbox has no other network: anything that does
// not go through the proxy fails at once, and the proxy refuses what is not allowed with a
// 403 whose status line and body say why in one line. Everything a sandboxed tool sends here
// is hostile input: the target is parsed strictly, names are resolved once and must resolve
// to public addresses (unless a rule names the address), and the proxy connects to exactly
// the address it checked.
import { once } from "node:events";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from "node:http";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { AuditLog } from "./audit.js";
import { decideEgress, type EgressPolicy } from "./proxy-egress.js";
import { decideDestination, type LookupFn, type ProxyLogEntry, systemLookup } from "./proxy-policy.js";
import { type Authority, AuthorityError, parseAllowRules, parseAuthority } from "./proxy-rules.js";

export type { ProxyLogEntry } from "./proxy-policy.js";

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

export interface AllowListProxy {
  socketPath: string;
  env: Record<string, string>;
  /** The latest decisions (at most MAX_LOG_ENTRIES), for tests and diagnostics. */
  log: ProxyLogEntry[];
  close(): Promise<void>;
}

export interface AllowListProxyOptions {
  /** Rules (see proxy-rules.ts); a bad entry makes startAllowListProxy throw. */
  allow: readonly string[];
  /** Name resolution (default: the host's resolver). Tests point names at chosen addresses. */
  lookup?: LookupFn;
  /** Opens the upstream TCP connection to a checked IP address (default net.connect). */
  connect?: (address: string, port: number) => Socket;
  /** JSONL audit log that gets one "network" event per decision. */
  auditPath?: string;
  /**
   * E2B-style egress rules (proxy-egress.ts) instead of `allow`, read for every decision, so
   * they can change while the sandbox runs.
   */
  egress?: () => EgressPolicy;
}

export const MAX_LOG_ENTRIES = 1000;
/** Bound on a request line plus headers; longer requests get 431 before any parsing of ours. */
export const MAX_HEADER_BYTES = 8192;
const UPSTREAM_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** Answers of one name tried in turn (an unreachable IPv6 address falls back to IPv4). */
const MAX_ADDRESSES_TRIED = 3;

/** Starts the proxy on a fresh Unix socket. */
export async function startAllowListProxy(options: AllowListProxyOptions): Promise<AllowListProxy> {
  const rules = parseAllowRules(options.allow);
  const lookup = options.lookup ?? systemLookup;
  const dial = options.connect ?? ((host: string, port: number) => connect({ host, port }));
  const audit = new AuditLog(options.auditPath);
  const egress = options.egress;
  const decide = (t: Authority & { port: number }) =>
    egress ? decideEgress(t, egress(), lookup) : decideDestination(t, rules, lookup);
  const dir = await mkdtemp(join(tmpdir(), "hands-proxy-"));
  const socketPath = join(dir, "proxy.sock");
  const log: ProxyLogEntry[] = [];
  const sockets = new Set<Duplex>();
  const track = (s: Duplex) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  };
  const record = (e: ProxyLogEntry) => {
    log.push(e);
    if (log.length > MAX_LOG_ENTRIES) log.splice(0, log.length - MAX_LOG_ENTRIES);
    audit.write({ event: "network", ...e });
  };

  const server: Server = createServer(
    { maxHeaderSize: MAX_HEADER_BYTES, headersTimeout: 10_000 },
    (req: IncomingMessage, res: ServerResponse) => {
      const open = unanswered.get(req.socket) ?? new Set<ServerResponse>();
      unanswered.set(req.socket, open.add(res));
      res.once("close", () => open.delete(res));
      forwardPlainHttp(req, res).catch((e: Error) => refuseResponse(res, 502, e.message));
    },
  );
  // Responses still being written on each client connection: a CONNECT pipelined behind a
  // request waits for them, so its answer (and the tunnel) cannot overtake theirs.
  const unanswered = new WeakMap<Duplex, Set<ServerResponse>>();

  // Plain HTTP through the proxy: the request line carries an absolute http:// URL.
  async function forwardPlainHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "";
    let target: Authority & { port: number };
    let path: string;
    try {
      ({ target, path } = parseAbsoluteHttpUrl(req.url ?? ""));
      checkHostHeader(req.rawHeaders, target);
    } catch (e) {
      if (!(e instanceof AuthorityError)) throw e;
      record({ method, host: printable(req.url ?? ""), port: 0, allowed: false, reason: e.message });
      refuseResponse(res, 403, `refused ${printable(req.url ?? "")}: ${e.message}`);
      return;
    }
    const decision = await decide(target);
    if (!decision.allowed) {
      record({ method, host: target.host, port: target.port, allowed: false, reason: decision.reason });
      refuseResponse(res, decision.status, decision.reason);
      return;
    }
    let upstream: Socket;
    try {
      upstream = await connectChecked(decision.addresses, target.port);
    } catch (e) {
      record({ method, host: target.host, port: target.port, allowed: true, reason: (e as Error).message });
      refuseResponse(res, 502, (e as Error).message);
      return;
    }
    track(upstream);
    const address = upstream.remoteAddress ?? "";
    record({ method, host: target.host, port: target.port, allowed: true, address });
    let up: ReturnType<typeof request>;
    try {
      up = request(
        {
          method,
          path,
          headers: { ...forwardedHeaders(req.headers), host: authorityText(target, 80) },
          setHost: false,
          // No agent: one upstream connection per request, to a checked address only.
          createConnection: () => upstream,
          timeout: UPSTREAM_TIMEOUT_MS,
        },
        (upRes) => {
          try {
            res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, forwardedHeaders(upRes.headers));
          } catch (e) {
            upRes.destroy();
            refuseResponse(res, 502, `unusable response from ${target.host}: ${(e as Error).message}`);
            return;
          }
          upRes.pipe(res);
        },
      );
    } catch (e) {
      upstream.destroy();
      refuseResponse(res, 400, `cannot forward this request: ${(e as Error).message}`);
      return;
    }
    up.on("timeout", () =>
      up.destroy(new Error(`no answer from ${target.host} in ${UPSTREAM_TIMEOUT_MS} ms`)),
    );
    up.on("error", (e) => {
      if (!res.headersSent) refuseResponse(res, 502, e.message);
      else res.destroy();
    });
    req.pipe(up);
  }

  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    track(client);
    client.on("error", () => {});
    openTunnel(req, client, head).catch((e: Error) => refuseTunnel(client, 502, e.message));
  });

  async function openTunnel(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    await Promise.all([...(unanswered.get(client) ?? [])].map((res) => once(res, "close")));
    const raw = req.url ?? "";
    let target: Authority;
    try {
      target = parseAuthority(raw);
      if (target.port === undefined) throw new AuthorityError("CONNECT needs host:port");
    } catch (e) {
      if (!(e instanceof AuthorityError)) throw e;
      record({ method: "CONNECT", host: printable(raw), port: 0, allowed: false, reason: e.message });
      refuseTunnel(client, 403, `refused ${printable(raw)}: ${e.message}`);
      return;
    }
    const port = target.port;
    const decision = await decide({ ...target, port });
    if (!decision.allowed) {
      record({ method: "CONNECT", host: target.host, port, allowed: false, reason: decision.reason });
      refuseTunnel(client, decision.status, decision.reason);
      return;
    }
    let up: Socket;
    try {
      up = await connectChecked(decision.addresses, port);
    } catch (e) {
      record({ method: "CONNECT", host: target.host, port, allowed: true, reason: (e as Error).message });
      refuseTunnel(client, 502, (e as Error).message);
      return;
    }
    record({ method: "CONNECT", host: target.host, port, allowed: true, address: up.remoteAddress ?? "" });
    if (client.destroyed) {
      up.destroy();
      return;
    }
    track(up);
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) up.write(head);
    // From here on the bytes are the tool's business with the server it was allowed to reach;
    // an error can only end the tunnel (a status line would land mid-stream).
    up.on("error", () => client.destroy());
    client.on("close", () => up.destroy());
    up.pipe(client);
    client.pipe(up);
  }

  /** Connects to the first of the checked addresses that answers (no name is resolved here). */
  async function connectChecked(addresses: readonly string[], port: number): Promise<Socket> {
    let last: Error = new Error("no address to connect to");
    for (const address of addresses.slice(0, MAX_ADDRESSES_TRIED)) {
      try {
        return await dialOne(address, port);
      } catch (e) {
        last = e as Error;
      }
    }
    throw last;
  }

  function dialOne(address: string, port: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      let s: Socket;
      try {
        s = dial(address, port);
      } catch (e) {
        reject(e);
        return;
      }
      s.setTimeout(CONNECT_TIMEOUT_MS, () =>
        s.destroy(new Error(`no connection to ${address} port ${port} in ${CONNECT_TIMEOUT_MS} ms`)),
      );
      s.once("error", reject);
      s.once("connect", () => {
        s.setTimeout(0);
        s.off("error", reject);
        // Whoever takes the socket adds its own handler; until then an error must not throw.
        s.on("error", () => {});
        resolve(s);
      });
    });
  }

  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    const status =
      err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const reason =
      status === 431
        ? `request line and headers exceed ${MAX_HEADER_BYTES} bytes`
        : status === 408
          ? "request headers took too long"
          : `malformed request (${err.code ?? "parse error"})`;
    record({ method: "", host: "", port: 0, allowed: false, reason });
    refuseTunnel(socket, status, reason);
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  // Any local user finds the socket's path in /proc/net/unix. Not root, the sandbox runs as this
  // very user (host-user.ts): the socket is its alone, so no one else can use this allow-list
  // (in this run's name, into its audit log). As root the sandbox's uid is another one: the
  // folder is passable only, the socket open (see packages/sandbox/README.md, known limits).
  const asRoot = process.getuid?.() === 0;
  await chmod(socketPath, asRoot ? 0o666 : 0o600);
  await chmod(dir, asRoot ? 0o711 : 0o700);
  return {
    socketPath,
    env: { ...PROXY_ENV },
    log,
    close: async () => {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** `http://host[:port]/path` → the authority (default port 80) and the path to send upstream. */
function parseAbsoluteHttpUrl(raw: string): { target: Authority & { port: number }; path: string } {
  if (/^https:\/\//i.test(raw))
    throw new AuthorityError("https:// goes through CONNECT, not a plain request");
  const m = /^http:\/\/([^/?#]*)(.*)$/is.exec(raw);
  if (!m) throw new AuthorityError("an absolute http:// URL is required");
  const a = parseAuthority(m[1] ?? "");
  const rest = m[2] ?? "";
  const path = rest === "" ? "/" : rest.startsWith("/") ? rest : rest.startsWith("?") ? `/${rest}` : "";
  if (path === "") throw new AuthorityError("URL fragments are not sent to servers");
  return { target: { ...a, port: a.port ?? 80 }, path };
}

/**
 * A Host header that names another server than the request line is how a request reaches a
 * host the rules never saw (virtual hosting, CDN fronting): refuse it rather than pick one.
 */
function checkHostHeader(rawHeaders: readonly string[], target: Authority & { port: number }): void {
  const hosts = rawHeaders.filter((_, i) => i % 2 === 0 && rawHeaders[i]?.toLowerCase() === "host");
  if (hosts.length === 0) return;
  const values = rawHeaders.filter((_, i) => i % 2 === 1 && rawHeaders[i - 1]?.toLowerCase() === "host");
  if (values.length > 1) throw new AuthorityError("more than one Host header");
  const given = values[0] ?? "";
  let h: Authority;
  try {
    h = parseAuthority(given);
  } catch (e) {
    throw new AuthorityError(`Host header "${printable(given)}": ${(e as Error).message}`);
  }
  if (h.host !== target.host || (h.port ?? 80) !== target.port)
    throw new AuthorityError(
      `Host header "${printable(given)}" does not match the request target ${authorityText(target, 80)}`,
    );
}

function authorityText(a: Authority & { port: number }, defaultPort: number): string {
  const host = a.ip && a.host.includes(":") ? `[${a.host}]` : a.host;
  return a.port === defaultPort ? host : `${host}:${a.port}`;
}

/** Headers that belong to one hop (RFC 9110 §7.6.1), plus those the Connection header names. */
function forwardedHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const drop = new Set([
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authorization",
    "te",
    "upgrade",
  ]);
  for (const name of String(headers.connection ?? "").split(",")) drop.add(name.trim().toLowerCase());
  const out: IncomingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (!drop.has(k)) out[k] = v;
  return out;
}

/** Text from the request, made safe for a status line and a log: visible ASCII, bounded. */
function printable(s: string, max = 100): string {
  const t = s.replace(/[^\x20-\x7e]/g, "?");
  return t.length > max ? `${t.slice(0, max)}...` : t;
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  403: "Forbidden",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
  502: "Bad Gateway",
};

/** A refusal on a raw socket (CONNECT, parse errors): status line and body carry the reason. */
function refuseTunnel(socket: Duplex, status: number, reason: string): void {
  if (!socket.writable) return;
  const line = printable(reason, 400);
  const body = `hands proxy: ${line}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Error"} (hands proxy: ${line})\r\n` +
      `content-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${body}`,
  );
}

function refuseResponse(res: ServerResponse, status: number, reason: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const line = printable(reason, 400);
  const body = `hands proxy: ${line}\n`;
  res
    .writeHead(status, `${STATUS_TEXT[status] ?? "Error"} (hands proxy: ${line})`, {
      "content-type": "text/plain; charset=utf-8",
      "content-length": Buffer.byteLength(body),
    })
    .end(body);
}
