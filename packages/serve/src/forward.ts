// Forwards a request, as it arrived, to the node that runs its sandbox, and streams the answer
// back without buffering (Connect server streams, /files downloads and uploads, the
// interpreter's NDJSON). If that node fails mid-answer, a Connect stream still ends the way the
// protocol says — an end-of-stream envelope carrying an `unavailable` error — when the failure
// falls between two envelopes; any other answer is cut off, which clients see as an error.
import { Agent, type IncomingMessage, request, type ServerResponse } from "node:http";

/** Marks a forwarded request: the receiving node answers it itself, never forwards it again. */
export const FORWARDED_HEADER = "x-hands-forwarded";

/** Connections between nodes are kept open: forwarding costs one hop, not a TCP handshake. */
const agent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64 });
const CONNECT_TIMEOUT_MS = 3000;

// Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection, not the request.
const HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

function endToEnd(h: IncomingMessage["headers"]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !HOP.has(k)) out[k] = v;
  return out;
}

/** Follows Connect's envelope framing (1 flag byte, 4 length bytes, body) across chunks. */
class EnvelopeBoundary {
  private head = 0;
  private headBytes = Buffer.alloc(5);
  private left = 0;
  ended = false;

  feed(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.left > 0) {
        const n = Math.min(this.left, chunk.length - i);
        this.left -= n;
        i += n;
        continue;
      }
      const n = Math.min(5 - this.head, chunk.length - i);
      chunk.copy(this.headBytes, this.head, i, i + n);
      this.head += n;
      i += n;
      if (this.head === 5) {
        this.head = 0;
        this.left = this.headBytes.readUInt32BE(1);
        if ((this.headBytes[0] as number) & 0x02) this.ended = true;
      }
    }
  }

  get between(): boolean {
    return this.head === 0 && this.left === 0;
  }
}

function endOfStreamError(message: string): Buffer {
  const json = Buffer.from(JSON.stringify({ error: { code: "unavailable", message } }));
  const head = Buffer.alloc(5);
  head[0] = 0x02;
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

export interface ForwardOptions {
  /** The node's base URL (its sandbox address or management API). */
  to: string;
  /** This node's name, sent in FORWARDED_HEADER. */
  from: string;
  /** The node's name, for messages. */
  nodeName: string;
  /** Lets the caller cut the forward (the node was found dead); returns an untrack function. */
  track?: (cancel: (why: Error) => void) => () => void;
}

/**
 * Resolves "answered" once the node's answer has been passed on (or the client went away), and
 * "unreachable" if the node did not answer at all — then nothing has been written to `res` and
 * the caller answers in its own protocol's shape.
 */
export function forward(
  req: IncomingMessage,
  res: ServerResponse,
  o: ForwardOptions,
): Promise<"answered" | "unreachable"> {
  return new Promise((resolve) => {
    const base = new URL(o.to);
    const up = request({
      agent,
      host: base.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: base.port,
      method: req.method,
      path: req.url,
      headers: { ...endToEnd(req.headers), [FORWARDED_HEADER]: o.from },
    });
    let settled = false;
    let answered = false;
    const settle = (v: "answered" | "unreachable") => {
      if (settled) return;
      settled = true;
      untrack();
      resolve(v);
    };
    const untrack = o.track?.((why) => up.destroy(why)) ?? (() => {});
    up.on("socket", (socket) => {
      if (!socket.connecting) return;
      const t = setTimeout(() => up.destroy(new Error("connect timeout")), CONNECT_TIMEOUT_MS);
      socket.once("connect", () => clearTimeout(t));
      socket.once("close", () => clearTimeout(t));
    });
    const framing = new EnvelopeBoundary();
    let isStream = false;
    const failMidAnswer = () => {
      if (res.writableEnded || res.destroyed) return;
      if (isStream && framing.between && !framing.ended)
        res.end(endOfStreamError(`the sandbox's node '${o.nodeName}' stopped answering`));
      else res.destroy();
    };
    up.on("error", () => {
      if (!answered) {
        req.resume();
        settle("unreachable");
      } else {
        failMidAnswer();
        settle("answered");
      }
    });
    up.on("response", (r) => {
      answered = true;
      isStream = String(r.headers["content-type"] ?? "").startsWith("application/connect+");
      res.writeHead(r.statusCode ?? 502, endToEnd(r.headers));
      // Stream heads go out at once: the SDK waits for them before it reads any message.
      res.flushHeaders();
      r.on("data", (chunk: Buffer) => {
        if (isStream) framing.feed(chunk);
        if (!res.write(chunk)) r.pause();
      });
      res.on("drain", () => r.resume());
      r.on("end", () => {
        res.end();
        settle("answered");
      });
      r.on("close", () => {
        if (!r.complete) {
          failMidAnswer();
          settle("answered");
        }
      });
    });
    // The client went away: so does the forwarded request (and the command's stream on the node).
    res.on("close", () => {
      if (!res.writableFinished) up.destroy();
      settle("answered");
    });
    req.pipe(up);
  });
}
