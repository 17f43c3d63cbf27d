// A `fetch` for the SDK clients built on node:http. Node 20's built-in fetch (undici) copies
// and re-validates every request body several times (USVString conversion, TextEncoder, a web
// stream); with a long history that cost grows each step and dominated the harness's per-step
// overhead. Here the body string goes to the socket once. Bodies other than strings and bytes
// fall back to the global fetch.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";

const agents = {
  http: new HttpAgent({ keepAlive: true }),
  https: new HttpsAgent({ keepAlive: true }),
};

function decoded(res: IncomingMessage): Readable {
  switch (res.headers["content-encoding"]) {
    case "gzip":
    case "x-gzip":
      return res.pipe(createGunzip());
    case "deflate":
      return res.pipe(createInflate());
    case "br":
      return res.pipe(createBrotliDecompress());
    default:
      return res;
  }
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

function toHeaders(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined || name === "content-encoding" || name === "content-length") continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}

export const nodeFetch: typeof fetch = (input, init) => {
  const body = init?.body;
  const simpleBody = body == null || typeof body === "string" || body instanceof Uint8Array;
  if (input instanceof Request || !simpleBody) return fetch(input, init);

  const url = new URL(String(input));
  const secure = url.protocol === "https:";
  if (!secure && url.protocol !== "http:") return fetch(input, init);
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    headers[name] = value;
  });
  const method = (init?.method ?? "GET").toUpperCase();

  return new Promise<Response>((resolve, reject) => {
    const req = (secure ? httpsRequest : httpRequest)(
      url,
      {
        method,
        headers,
        agent: secure ? agents.https : agents.http,
        ...(init?.signal ? { signal: init.signal } : {}),
      },
      (res) => {
        const status = res.statusCode ?? 500;
        const noBody = method === "HEAD" || status === 204 || status === 304;
        if (noBody) res.resume();
        const stream = noBody ? null : toWebStream(decoded(res));
        resolve(
          new Response(stream, { status, statusText: res.statusMessage ?? "", headers: toHeaders(res) }),
        );
      },
    );
    req.on("error", reject);
    req.end(body ?? undefined);
  });
};
