// WebSocket (and any other HTTP/1.1 Upgrade) to a port a process inside the sandbox listens on,
// through getHost's `PORT-ID.domain` / E2b-Sandbox-Port routing. Node hands an upgrade request
// to the server's "upgrade" event with the raw socket; after the same access checks as a plain
// request (router.ts) the request head is written, as it came less the service's headers, to a
// connection the sandbox's agent opened to the port (port-bridge.ts), and from then on bytes go
// both ways untouched: the sandbox's server answers the handshake (101 or a refusal) itself.
import type { IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { FORWARDED_HEADER } from "../forward.js";
import { PortClosedError } from "../port-bridge.js";
import type { SandboxRuntime } from "../runtime.js";
import { TRAFFIC_TOKEN_HEADER } from "./access.js";
import { maskedHost } from "./ports.js";

/** Addressed to the service, never passed on (Connection and Upgrade are: they are the point). */
const SERVICE_HEADERS = new Set([
  "host",
  "e2b-sandbox-id",
  "e2b-sandbox-port",
  "x-access-token",
  TRAFFIC_TOKEN_HEADER,
  FORWARDED_HEADER,
]);

const CONNECT_TIMEOUT_MS = 3000;

/** An HTTP answer written on the raw socket (no ServerResponse exists for an upgrade). */
export function refuseUpgrade(socket: Duplex, status: number, body: Record<string, unknown>): void {
  if (socket.destroyed) return;
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${status === 403 ? "Forbidden" : status === 400 ? "Bad Request" : "Bad Gateway"}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
  );
}

/** The request's head for the next hop: its method, path and headers less `drop`, plus `extra`. */
function head(req: IncomingMessage, extra: [string, string][]): string {
  const lines = [`${req.method ?? "GET"} ${req.url ?? "/"} HTTP/1.1`];
  for (const [k, v] of extra) lines.push(`${k}: ${v}`);
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i] as string;
    if (!SERVICE_HEADERS.has(k.toLowerCase())) lines.push(`${k}: ${raw[i + 1]}`);
  }
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/** Joins the client's socket and the next hop's, each closing the other. */
function splice(client: Duplex, upstream: Socket, first: string, buffered: Buffer): void {
  client.on("error", () => upstream.destroy());
  upstream.on("error", () => client.destroy());
  client.once("close", () => upstream.destroy());
  upstream.once("close", () => client.destroy());
  upstream.write(first);
  if (buffered.length > 0) upstream.write(buffered);
  client.pipe(upstream);
  upstream.pipe(client);
  upstream.resume();
}

export async function upgradeToPort(o: {
  runtime: SandboxRuntime;
  sandboxId: string;
  port: number;
  maskRequestHost?: string;
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
}): Promise<void> {
  const { runtime, port, socket } = o;
  const bridge = runtime.bridge;
  if (!bridge) {
    refuseUpgrade(socket, 502, { message: "The sandbox was not found", sandboxId: o.sandboxId, code: 502 });
    return;
  }
  let upstream: Socket;
  try {
    upstream = await bridge.connect(runtime.agent, port);
  } catch (e) {
    refuseUpgrade(socket, 502, {
      message:
        e instanceof PortClosedError ? "The sandbox is running but port is not open" : (e as Error).message,
      sandboxId: o.sandboxId,
      port,
      code: 502,
    });
    return;
  }
  if (socket.destroyed) {
    upstream.destroy();
    return;
  }
  splice(
    socket,
    upstream,
    head(o.req, [["Host", maskedHost(o.maskRequestHost, port, o.req.headers.host)]]),
    o.head,
  );
}

/**
 * To the node that runs the sandbox (several nodes): the same request on a connection of its
 * own, marked as forwarded; false when that node cannot be reached (nothing was written).
 */
export function forwardUpgrade(o: {
  to: string;
  from: string;
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
}): Promise<boolean> {
  const base = new URL(o.to);
  return new Promise((resolve) => {
    const upstream = connect({ host: base.hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(base.port) });
    const timer = setTimeout(() => upstream.destroy(new Error("connect timeout")), CONNECT_TIMEOUT_MS);
    upstream.once("error", () => {
      clearTimeout(timer);
      resolve(false);
    });
    upstream.once("connect", () => {
      clearTimeout(timer);
      const host = o.req.headers.host;
      const sandbox = [
        ["e2b-sandbox-id", o.req.headers["e2b-sandbox-id"]],
        ["e2b-sandbox-port", o.req.headers["e2b-sandbox-port"]],
        ["x-access-token", o.req.headers["x-access-token"]],
        [TRAFFIC_TOKEN_HEADER, o.req.headers[TRAFFIC_TOKEN_HEADER]],
      ].filter((p): p is [string, string] => typeof p[1] === "string");
      splice(
        o.socket,
        upstream,
        head(o.req, [
          ...(host ? ([["Host", host]] as [string, string][]) : []),
          ...sandbox,
          [FORWARDED_HEADER, o.from],
        ]),
        o.head,
      );
      resolve(true);
    });
  });
}
