// A `fetch` for the SDK clients built on node:http. Node 20's built-in fetch (undici) copies
// and re-validates every request body several times (USVString conversion, TextEncoder, a web
// stream); with a long history that cost grows each step and dominated the harness's per-step
// overhead. Here the body string goes to the socket once. Bodies other than strings and bytes
// fall back to the global fetch.
// HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY (either case) are honoured: a CONNECT tunnel
// for https, absolute-URI requests for http.
import {
  type Agent,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from "node:http";
import { isIP } from "node:net";
import type { Readable } from "node:stream";
import type { PeerCertificate } from "node:tls";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { getProxyForUrl } from "proxy-from-env";

const httpAgent = new HttpAgent({ keepAlive: true });

/** What an https request needs from node:https and node:tls. */
interface Tls {
  request: typeof httpRequest;
  agent: Agent;
  checkServerIdentity: typeof import("node:tls").checkServerIdentity;
}
let tls: Promise<Tls> | undefined;
/** node:https and node:tls load with the first https request: a model server on http (local ones) never needs them. */
function loadTls(): Promise<Tls> {
  tls ??= Promise.all([import("node:https"), import("node:tls")]).then(([https, t]) => ({
    request: https.request,
    agent: new https.Agent({ keepAlive: true }),
    checkServerIdentity: t.checkServerIdentity,
  }));
  return tls;
}

/** One keep-alive agent per proxy and scheme; the proxy libraries load only when one is set. */
const proxyAgents = new Map<string, Promise<Agent>>();

function proxyAgent(proxy: string, secure: boolean): Promise<Agent> {
  const key = `${secure ? "https" : "http"} ${proxy}`;
  let agent = proxyAgents.get(key);
  if (!agent) {
    agent = secure
      ? import("https-proxy-agent").then(
          ({ HttpsProxyAgent }) => new HttpsProxyAgent(proxy, { keepAlive: true }),
        )
      : import("http-proxy-agent").then(
          ({ HttpProxyAgent }) => new HttpProxyAgent(proxy, { keepAlive: true }),
        );
    proxyAgents.set(key, agent);
  }
  return agent;
}

/** The proxy's address without credentials, for messages. */
function shownProxy(proxy: string): string {
  try {
    const u = new URL(proxy);
    u.username = "";
    u.password = "";
    return u.href.replace(/\/$/, "");
  } catch {
    return "(unparsable proxy URL)";
  }
}

/** Which variable named the proxy, so the message says what to change. */
function proxyVariable(secure: boolean): string {
  const names = secure ? ["https_proxy", "all_proxy"] : ["http_proxy", "all_proxy"];
  for (const n of names) {
    if (process.env[n]) return n;
    if (process.env[n.toUpperCase()]) return n.toUpperCase();
  }
  return "the proxy settings";
}

/** The proxy is unusable: not reachable, refusing, or misconfigured. */
export class ProxyError extends Error {
  constructor(
    message: string,
    /** Worth trying again (the proxy may come back), unlike a refusal or a bad setting. */
    readonly retryable = false,
  ) {
    super(message);
    this.name = "ProxyError";
  }
}

function decoded(res: IncomingMessage): Readable {
  switch (res.headers["content-encoding"]) {
    case "gzip":
    case "x-gzip":
      return unpacked(res, createGunzip());
    case "deflate":
      return unpacked(res, createInflate());
    case "br":
      return unpacked(res, createBrotliDecompress());
    default:
      return res;
  }
}

/**
 * `res` through a decompressor. A connection that dies mid-body ends node's response without an
 * error a pipe would pass on, so the reader would wait for the idle timeout: it fails the
 * decompressed stream at once instead, as a reset (retried).
 */
function unpacked(res: IncomingMessage, unzip: Readable & NodeJS.WritableStream): Readable {
  res.once("close", () => {
    if (!res.complete)
      unzip.destroy(
        Object.assign(new Error("the connection closed before the response ended"), { code: "ECONNRESET" }),
      );
  });
  return res.pipe(unzip);
}

/** A plain push-based web stream: much lighter per chunk than Readable.toWeb's byte stream. */
function toWebStream(source: Readable): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      source.on("data", (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
        if ((controller.desiredSize ?? 1) <= 0) source.pause(); // back-pressure: pull() resumes
      });
      source.once("end", () => controller.close());
      source.once("error", (err) => controller.error(err));
    },
    pull() {
      source.resume();
    },
    cancel(reason) {
      source.destroy(reason instanceof Error ? reason : undefined);
    },
  });
}

/** Node's response headers as a fetch `Headers` (without the encoding node already undid). */
export function toHeaders(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || name === "content-encoding" || name === "content-length") continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}

/**
 * A request's headers as node:http takes them, read from any HeadersInit without the global
 * `Headers`: its first use loads node's bundled undici (~11 ms at start-up), and the bundled
 * bin hands the SDKs a Headers class of their own (scripts/bundle.mjs).
 */
export function headerRecord(init: RequestInit["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    out[key] = key in out ? `${out[key]}, ${value}` : value;
  };
  if (!init) return out;
  if (typeof (init as Headers).forEach === "function" && !Array.isArray(init))
    (init as Headers).forEach((value, name) => {
      add(name, value);
    });
  else if (Symbol.iterator in init)
    for (const [name, value] of init as Iterable<[string, string]>) add(name, value);
  else for (const [name, value] of Object.entries(init as Record<string, string>)) add(name, value);
  return out;
}

/** A response as node:http gave it: status, raw headers, and the body (decompressed). */
export interface NodeReply {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  /** Null for HEAD, 204 and 304. */
  body: Readable | null;
}

export interface NodeRequestInit {
  method: string;
  /** Lower-case names (headerRecord). */
  headers: Record<string, string>;
  body?: string | Uint8Array | null;
  signal?: AbortSignal | null;
}

/**
 * One http(s) request over node:http, through the proxy the environment names, without fetch's
 * Response and web stream: the providers' streaming path reads the body as node gives it.
 * Rejects with a ProxyError when the proxy is unusable, else with node's own error.
 */
export function nodeRequest(url: URL, init: NodeRequestInit): Promise<NodeReply> {
  const secure = url.protocol === "https:";
  const { method, headers, body, signal } = init;
  let proxy = "";
  try {
    proxy = getProxyForUrl(url.href);
  } catch {
    proxy = "";
  }
  if (proxy) {
    const where = `${shownProxy(proxy)} (from ${proxyVariable(secure)})`;
    if (!/^https?:\/\//i.test(proxy))
      return Promise.reject(
        new ProxyError(`unsupported proxy ${where}: use an http:// or https:// proxy URL`),
      );
    return Promise.all([proxyAgent(proxy, secure), secure ? loadTls() : undefined]).then(
      ([agent, t]) => send(url, t, method, headers, body, signal, agent, where),
      (e: unknown) =>
        Promise.reject(
          new ProxyError(`cannot use the proxy ${where}: ${(e as Error)?.message ?? String(e)}`),
        ),
    );
  }
  if (secure) return loadTls().then((t) => send(url, t, method, headers, body, signal, t.agent));
  return send(url, undefined, method, headers, body, signal, httpAgent);
}

export const nodeFetch: typeof fetch = (input, init) => {
  const body = init?.body;
  const simpleBody = body == null || typeof body === "string" || body instanceof Uint8Array;
  // A Request object goes to the global fetch. (Asked as "not a string or URL": naming the
  // global `Request` would load undici, which the bin otherwise never needs before a reply.)
  const isRequest = typeof input !== "string" && !(input instanceof URL);
  if (isRequest || !simpleBody) return fetch(input, init);

  const url = new URL(String(input));
  if (url.protocol !== "https:" && url.protocol !== "http:") return fetch(input, init);
  return nodeRequest(url, {
    method: (init?.method ?? "GET").toUpperCase(),
    headers: headerRecord(init?.headers),
    body,
    signal: init?.signal,
  }).then(
    (reply) =>
      new Response(reply.body ? toWebStream(reply.body) : null, {
        status: reply.status,
        statusText: reply.statusText,
        headers: toHeaders(reply.headers),
      }),
  );
};

function send(
  url: URL,
  /** Set for https. */
  tls: Tls | undefined,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | null | undefined,
  signal: AbortSignal | null | undefined,
  agent: Agent,
  /** Set when the request goes through a proxy: how to name it in errors. */
  proxy?: string,
): Promise<NodeReply> {
  return new Promise<NodeReply>((resolve, reject) => {
    const req = (tls ? tls.request : httpRequest)(
      url,
      {
        method,
        headers,
        agent,
        ...(signal ? { signal } : {}),
        // Through a tunnel to an IP address the proxy agent checks the certificate against
        // "localhost"; check it against the address that was asked for.
        ...(proxy && tls && isIP(url.hostname.replace(/^\[|\]$/g, ""))
          ? {
              checkServerIdentity: (_host: string, cert: PeerCertificate) =>
                tls.checkServerIdentity(url.hostname.replace(/^\[|\]$/g, ""), cert),
            }
          : {}),
      },
      (res) => {
        const status = res.statusCode ?? 500;
        if (proxy && status === 407) {
          res.resume();
          reject(
            new ProxyError(`the proxy ${proxy} requires authentication (407); put user:password in its URL`),
          );
          return;
        }
        const noBody = method === "HEAD" || status === 204 || status === 304;
        if (noBody) res.resume();
        resolve({
          status,
          statusText: res.statusMessage ?? "",
          headers: res.headers,
          body: noBody ? null : decoded(res),
        });
      },
    );
    if (proxy && tls) {
      // The CONNECT answer: anything but 200 means the tunnel was refused.
      req.once("proxyConnect", (connect: IncomingMessage) => {
        const code = connect.statusCode ?? 0;
        if (code === 200) return;
        const why =
          code === 407
            ? "requires authentication (407); put user:password in its URL"
            : `refused the tunnel to ${url.host}: ${code} ${connect.statusMessage ?? ""}`.trim();
        req.destroy(new ProxyError(`the proxy ${proxy} ${why}`));
      });
    }
    req.on("error", (e) => {
      if (proxy && !(e instanceof ProxyError) && !signal?.aborted && isConnectError(e))
        reject(new ProxyError(`cannot reach the proxy ${proxy}: ${e.message}`, true));
      else reject(e);
    });
    req.end(body ?? undefined);
  });
}

/** Errors of the connection to the proxy itself (it is down, the name does not resolve…). */
function isConnectError(e: Error): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return (
    code === "ECONNREFUSED" ||
    code === "ENOTFOUND" ||
    code === "EHOSTUNREACH" ||
    code === "ECONNRESET" ||
    code === "ETIMEDOUT" ||
    code === "EAI_AGAIN"
  );
}
