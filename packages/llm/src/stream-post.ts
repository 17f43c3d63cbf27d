// The streamed model request without the SDK's request machinery. Per request the SDK builds
// and merges its headers several times, formats log details it then discards, and the fetch it
// calls wraps node's response in a web Response and stream that are read once: together about a
// third of a step's CPU time in the harness (bench/README.md). Here the SDK still says what is
// sent (the URL and headers come from its own buildRequest, once per client) and what a failure
// is (its own error classes, made as its request path makes them, so retries and messages are
// the same); node:http sends the body and the event stream is read as node gives it.
import type { Readable } from "node:stream";
import { headerRecord, type NodeReply, nodeRequest, toHeaders } from "./http-fetch.js";
import { protocolError } from "./retry.js";
import { readJsonEvents } from "./sse.js";

/** The error classes both SDKs export under these names. */
export interface SdkErrors {
  APIError: {
    generate(
      status: number | undefined,
      error: object | undefined,
      message: string | undefined,
      headers: Headers | undefined,
    ): Error;
  };
  APIConnectionError: new (o: { message?: string | undefined; cause?: Error | undefined }) => Error;
  APIConnectionTimeoutError: new (o?: { message?: string }) => Error;
  APIUserAbortError: new (o?: { message?: string }) => Error;
}

/** What an SDK client's public buildRequest gives (both SDKs). */
interface BuiltRequest {
  url: string;
  req: { headers?: unknown };
}

export interface StreamTarget {
  url: URL;
  headers: Record<string, string>;
}

/**
 * The URL and headers the SDK would send for a POST to `path`. Built once per client: they
 * depend only on its settings (key, base URL, timeout, default headers); its own retries are
 * off, so the retry-count header is always 0.
 */
export async function streamTarget(
  client: { buildRequest(options: never): Promise<BuiltRequest> },
  path: string,
  headers: Record<string, string>,
): Promise<StreamTarget> {
  const built = await client.buildRequest({ method: "post", path, headers } as never);
  return { url: new URL(built.url), headers: headerRecord(built.req.headers as RequestInit["headers"]) };
}

/**
 * POSTs `body` and returns the response body of a 2xx answer. Anything else throws what the
 * SDK's request path would: its status error (with the server's error body and headers), or
 * its connection, timeout or abort error with node's error as the cause.
 */
export async function postForStream(
  target: StreamTarget,
  body: Uint8Array,
  signal: AbortSignal,
  errors: SdkErrors,
): Promise<Readable | null> {
  if (signal.aborted) throw new errors.APIUserAbortError();
  let reply: NodeReply;
  try {
    reply = await nodeRequest(target.url, { method: "POST", headers: target.headers, body, signal });
  } catch (e) {
    if (signal.aborted) throw new errors.APIUserAbortError();
    const err = e instanceof Error ? e : new Error(String(e));
    if (err.name === "AbortError" || /timed? ?out/i.test(`${err}${err.cause ? String(err.cause) : ""}`))
      throw new errors.APIConnectionTimeoutError();
    throw new errors.APIConnectionError({ message: undefined, cause: err });
  }
  if (reply.status >= 200 && reply.status < 300) return reply.body;
  let text: string;
  try {
    text = reply.body ? await readText(reply.body) : "";
  } catch (e) {
    text = (e as Error)?.message ?? String(e);
  }
  const json = parseOrUndefined(text);
  throw errors.APIError.generate(reply.status, json, json ? undefined : text, toHeaders(reply.headers));
}

/**
 * POSTs `body` (postForStream) and yields the reply's events as they arrive (readJsonEvents;
 * `onChunk` at every piece of it); the reply is settled when they end (settleReply): drained
 * when read to its end, destroyed when the reader stops early or fails.
 */
export async function* postedEvents(
  target: StreamTarget,
  body: Uint8Array,
  signal: AbortSignal,
  errors: SdkErrors,
  onChunk: () => void,
): AsyncGenerator<{ event?: string; value: unknown }> {
  const stream = await postForStream(target, body, signal, errors);
  if (!stream) throw protocolError("the server answered 200 but the event stream held no data");
  let complete = false;
  try {
    yield* readJsonEvents(stream.iterator({ destroyOnReturn: false }), onChunk);
    complete = true;
  } finally {
    await settleReply(stream, complete);
  }
}

/** How long the rest of a reply after its last event may take to arrive before it is cut. */
const DRAIN_MS = 5_000;

/**
 * Once a streamed reply was read: after its last event (`[DONE]`) what follows (normally only
 * the end of the response) is drained, not cut, so the connection goes back to the keep-alive
 * pool (read with `iterator({ destroyOnReturn: false })`; cutting it cost a new connection per
 * request); after an error it is destroyed. Resolves once the reply ended (node frees the socket
 * just before) or, if its end has not arrived, at the next turn of the event loop, while the
 * draining goes on; a server that sends on and on is cut after `drainMs`.
 */
export function settleReply(stream: Readable, complete: boolean, drainMs = DRAIN_MS): Promise<void> {
  if (!complete) {
    stream.destroy();
    return Promise.resolve();
  }
  if (stream.readableEnded || stream.destroyed) return Promise.resolve();
  // Nothing reads it any more: a fault in what is left (a reset, bad gzip) must not go unhandled.
  stream.on("error", () => {});
  return new Promise<void>((resolve) => {
    const cut = setTimeout(() => stream.destroy(), drainMs);
    cut.unref();
    const done = () => {
      clearTimeout(cut);
      resolve();
    };
    stream.once("end", done);
    stream.once("close", done);
    setImmediate(resolve);
    stream.resume();
  });
}

async function readText(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** As the SDKs read an error body: any JSON value, else undefined (then the text is the message). */
function parseOrUndefined(text: string): object | undefined {
  try {
    return JSON.parse(text) as object;
  } catch {
    return undefined;
  }
}
