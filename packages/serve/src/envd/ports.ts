// HTTP to a port a process inside the sandbox listens on (`sandbox.getHost(port)`): the request
// goes as it came, over a connection the sandbox's agent opened to that port (port-bridge.ts),
// without the headers that were meant for the service (sandbox id and port, access tokens) and
// with the Host of `maskRequestHost` when the sandbox was created with one (`${PORT}` in it
// becomes the port). Nothing listening there: E2B's 502.
import { type IncomingMessage, request, type ServerResponse } from "node:http";
import { PortClosedError } from "../port-bridge.js";
import type { SandboxRuntime } from "../runtime.js";
import { TRAFFIC_TOKEN_HEADER } from "./access.js";

/** Headers of one hop (RFC 9110 §7.6.1) and those addressed to the service, never passed on. */
const SERVICE_HEADERS = new Set([
  "connection",
  "proxy-connection",
  "keep-alive",
  "te",
  "trailer",
  "upgrade",
  "transfer-encoding",
  "e2b-sandbox-id",
  "e2b-sandbox-port",
  "x-access-token",
  TRAFFIC_TOKEN_HEADER,
]);

const HOP_HEADERS = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade"]);

function pairs(raw: string[], drop: Set<string>): string[][] {
  const named = new Set(drop);
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]?.toLowerCase() === "connection")
      for (const n of String(raw[i + 1]).split(",")) named.add(n.trim().toLowerCase());
  const out: string[][] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i] as string;
    if (!named.has(k.toLowerCase())) out.push([k, raw[i + 1] as string]);
  }
  return out;
}

function sendJson(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** The Host a sandbox's server is shown: the mask with `${PORT}` filled in, else the client's. */
export function maskedHost(mask: string | undefined, port: number, given: string | undefined): string {
  if (!mask) return given ?? `localhost:${port}`;
  // biome-ignore lint/suspicious/noTemplateCurlyInString: E2B's literal ${PORT} placeholder
  return mask.split("${PORT}").join(String(port));
}

export async function proxyToPort(o: {
  runtime: SandboxRuntime;
  sandboxId: string;
  port: number;
  maskRequestHost?: string;
  req: IncomingMessage;
  res: ServerResponse;
}): Promise<void> {
  const { runtime, port, req, res } = o;
  const bridge = runtime.bridge;
  if (!bridge) {
    req.resume();
    sendJson(res, 502, { message: "The sandbox was not found", sandboxId: o.sandboxId, code: 502 });
    return;
  }
  let socket: Awaited<ReturnType<typeof bridge.connect>>;
  try {
    socket = await bridge.connect(runtime.agent, port);
  } catch (e) {
    req.resume();
    if (e instanceof PortClosedError)
      sendJson(res, 502, {
        message: "The sandbox is running but port is not open",
        sandboxId: o.sandboxId,
        port,
        code: 502,
      });
    else sendJson(res, 502, { message: (e as Error).message, sandboxId: o.sandboxId, port, code: 502 });
    return;
  }
  if (res.destroyed) {
    socket.destroy();
    return;
  }
  const headers = pairs(req.rawHeaders, SERVICE_HEADERS).filter(([k]) => k?.toLowerCase() !== "host");
  headers.unshift(["Host", maskedHost(o.maskRequestHost, port, req.headers.host)]);
  const up = request({
    method: req.method ?? "GET",
    path: req.url ?? "/",
    headers: headers.flat(),
    setHost: false,
    createConnection: () => socket,
  });
  // The bridge hands the connection over paused (nothing read is lost): the client's parser is
  // attached by the time it emits "socket".
  up.once("socket", (sk) => sk.resume());
  res.once("close", () => {
    if (!res.writableFinished) up.destroy();
  });
  up.on("response", (upRes) => {
    try {
      res.writeHead(
        upRes.statusCode ?? 502,
        upRes.statusMessage,
        pairs(upRes.rawHeaders, HOP_HEADERS).flat(),
      );
    } catch (e) {
      upRes.destroy();
      sendJson(res, 502, {
        message: `the sandbox's server sent an unusable answer: ${(e as Error).message}`,
        code: 502,
      });
      return;
    }
    upRes.pipe(res);
    upRes.on("error", () => res.destroy());
  });
  up.on("error", (e) => {
    if (!res.headersSent)
      sendJson(res, 502, {
        message: `port ${port} of the sandbox: ${e.message}`,
        sandboxId: o.sandboxId,
        port,
        code: 502,
      });
    else res.destroy();
  });
  req.pipe(up);
}
