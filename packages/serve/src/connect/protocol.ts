// The server half of the Connect protocol in its JSON encoding, as envd speaks it: unary calls
// are a JSON body in and out (errors as {code, message} with the matching HTTP status), and
// server streams are enveloped messages — 1 flag byte, 4 length bytes, JSON — ending with an
// end-of-stream envelope that carries the error, if any. HTTP/1.1 only.
import type { IncomingMessage, ServerResponse } from "node:http";
import { BodyError, parseJsonObject, readBody as readLimited } from "../body.js";

export type ConnectCode =
  | "canceled"
  | "unknown"
  | "invalid_argument"
  | "deadline_exceeded"
  | "not_found"
  | "already_exists"
  | "permission_denied"
  | "resource_exhausted"
  | "failed_precondition"
  | "aborted"
  | "out_of_range"
  | "unimplemented"
  | "internal"
  | "unavailable"
  | "data_loss"
  | "unauthenticated";

const HTTP_STATUS: Record<ConnectCode, number> = {
  canceled: 499,
  unknown: 500,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  data_loss: 500,
  unauthenticated: 401,
};

export class ConnectError extends Error {
  constructor(
    readonly code: ConnectCode,
    message: string,
  ) {
    super(message);
  }
}

/** Any error as a Connect error (codes from the agent pass through when they are valid). */
export function toConnectError(e: unknown): ConnectError {
  if (e instanceof ConnectError) return e;
  const code = (e as { code?: unknown })?.code;
  const message = e instanceof Error ? e.message : String(e);
  if (typeof code === "string" && code in HTTP_STATUS) return new ConnectError(code as ConnectCode, message);
  return new ConnectError("internal", message);
}

/** A body error as the Connect error it is. */
function connectErrorOf(e: unknown): unknown {
  if (!(e instanceof BodyError)) return e;
  return new ConnectError(e.kind === "too_large" ? "resource_exhausted" : "invalid_argument", e.message);
}

/** Reads a request body, refusing more than `limit` bytes (resource_exhausted). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  try {
    return await readLimited(req, limit);
  } catch (e) {
    throw connectErrorOf(e);
  }
}

function parseMessage(text: string): Record<string, unknown> {
  try {
    return parseJsonObject(text);
  } catch (e) {
    throw connectErrorOf(e);
  }
}

/** The single message of a server-streaming request: exactly one well-formed envelope. */
export function parseEnvelope(body: Buffer): Record<string, unknown> {
  if (body.length < 5) throw new ConnectError("invalid_argument", "request envelope is truncated");
  const flags = body[0] as number;
  const len = body.readUInt32BE(1);
  if (flags & 0x01) throw new ConnectError("unimplemented", "compressed request envelopes are not supported");
  if (flags !== 0) throw new ConnectError("invalid_argument", "unexpected request envelope flags");
  if (body.length !== 5 + len)
    throw new ConnectError("invalid_argument", "request envelope length does not match the body");
  return parseMessage(body.subarray(5).toString("utf8"));
}

export function parseUnary(body: Buffer): Record<string, unknown> {
  return parseMessage(body.toString("utf8"));
}

export function writeUnary(res: ServerResponse, message: unknown): void {
  const body = JSON.stringify(message);
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

export function writeUnaryError(res: ServerResponse, e: ConnectError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ code: e.code, message: e.message });
  res.writeHead(HTTP_STATUS[e.code], {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

function envelope(flags: number, message: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(message));
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

/** Keepalive interval asked for by the client (seconds), bounded to [1, 60]. */
export function keepaliveMs(req: IncomingMessage): number {
  const s = Number(req.headers["keepalive-ping-interval"]);
  return Math.min(60, Math.max(1, Number.isFinite(s) && s > 0 ? s : 30)) * 1000;
}

/** The client's deadline from Connect-Timeout-Ms, if any. */
export function timeoutMs(req: IncomingMessage): number | undefined {
  const raw = req.headers["connect-timeout-ms"];
  if (typeof raw !== "string" || !/^\d{1,10}$/.test(raw)) return undefined;
  return Number(raw);
}

const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;

/** One server stream: messages, keepalives, and a single end. */
export class ServerStream {
  private ended = false;
  private keepalive: NodeJS.Timeout | undefined;
  readonly closed: Promise<void>;

  constructor(
    private readonly res: ServerResponse,
    keepaliveEveryMs: number,
    keepaliveMessage: unknown,
  ) {
    res.writeHead(200, { "content-type": "application/connect+json" });
    res.flushHeaders();
    this.closed = new Promise((r) => res.once("close", () => r()));
    void this.closed.then(() => this.stopKeepalive());
    this.keepalive = setInterval(() => this.send(keepaliveMessage), keepaliveEveryMs);
  }

  get open(): boolean {
    return !this.ended && !this.res.destroyed;
  }

  /** A client that stops reading while output keeps coming is cut off, not buffered without end. */
  send(message: unknown): void {
    if (!this.open) return;
    if (this.res.writableLength > MAX_BUFFERED_BYTES) {
      this.end(new ConnectError("resource_exhausted", "the client is not reading the stream fast enough"));
      return;
    }
    this.res.write(envelope(0, message));
  }

  end(error?: ConnectError): void {
    if (this.ended) return;
    this.ended = true;
    this.stopKeepalive();
    if (this.res.destroyed) return;
    this.res.end(envelope(0x02, error ? { error: { code: error.code, message: error.message } } : {}));
  }

  /**
   * Drops the connection without an end message, as a sandbox that vanished does: the client
   * sees the stream cut off (E2B's SDK then asks /health and reports the sandbox gone).
   */
  cut(): void {
    if (this.ended) return;
    this.ended = true;
    this.stopKeepalive();
    this.res.destroy();
  }

  private stopKeepalive(): void {
    if (this.keepalive) clearInterval(this.keepalive);
    this.keepalive = undefined;
  }
}

/** A stream that fails before it starts: an end-of-stream envelope with the error, status 200. */
export function writeStreamError(res: ServerResponse, e: ConnectError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = envelope(0x02, { error: { code: e.code, message: e.message } });
  res.writeHead(200, { "content-type": "application/connect+json", "content-length": body.length });
  res.end(body);
}
