// One HTTP exchange of web_fetch: the destination is judged by the sandbox proxy's own rules
// (decideDestination: the allow-list, then every DNS answer must be public unless a rule
// names it), and the socket goes to the address that was checked — never to a second DNS
// answer — so a name that rebinds between the check and the connection gains nothing. The
// body is read through a byte cap (raw and decoded), so a 5 GB body or a gzip bomb costs what
// the cap allows, not what the server sends.
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import {
  type AllowRule,
  AuthorityError,
  decideDestination,
  type LookupFn,
  parseAuthority,
} from "@hands/sandbox";

export class FetchError extends Error {
  override name = "FetchError";
  constructor(
    message: string,
    readonly kind: "refused" | "network" | "timeout" | "protocol" | "aborted",
  ) {
    super(message);
  }
}

export interface HopRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface HopResponse {
  status: number;
  statusText: string;
  headers: IncomingMessage["headers"];
  /** The address connected to (after the checks). */
  address: string;
  message: IncomingMessage;
}

/** Checks `url` against the rules and returns the addresses it may connect to, in order. */
export async function checkedAddresses(
  url: URL,
  rules: readonly AllowRule[],
  lookup: LookupFn,
): Promise<string[]> {
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new FetchError(`only http:// and https:// URLs can be fetched, not ${url.protocol}`, "refused");
  if (url.username || url.password)
    throw new FetchError("URLs with a user name or password (user@host) are not fetched", "refused");
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  let target: ReturnType<typeof parseAuthority>;
  try {
    target = parseAuthority(url.host);
  } catch (e) {
    if (e instanceof AuthorityError) throw new FetchError(`${url.host}: ${e.message}`, "refused");
    throw e;
  }
  const decision = await decideDestination({ ...target, port }, rules, lookup);
  if (!decision.allowed)
    throw new FetchError(
      decision.status === 403
        ? `${decision.reason} (web_fetch reaches only what --allow-domain names)`
        : decision.reason,
      decision.status === 403 ? "refused" : "network",
    );
  return decision.addresses;
}

/** Sends one request to `address` (checked) and resolves when the response head arrives. */
export function sendHop(req: HopRequest, address: string, signal: AbortSignal): Promise<HopResponse> {
  const { url } = req;
  const https = url.protocol === "https:";
  const send = https ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError(signal));
    const r = send({
      hostname: address,
      family: isIP(address),
      port: url.port || (https ? 443 : 80),
      method: req.method,
      path: `${url.pathname}${url.search}`,
      setHost: false,
      headers: { ...req.headers, host: url.host },
      // TLS is checked against the name in the URL, not the address connected to.
      ...(https && !isIP(url.hostname.replace(/^\[|\]$/g, "")) ? { servername: url.hostname } : {}),
      agent: false,
      // Node's own parser limits the head; a longer one is a protocol error.
      maxHeaderSize: 64 * 1024,
      signal,
    });
    r.once("response", (message) =>
      resolve({
        status: message.statusCode ?? 0,
        statusText: message.statusMessage ?? "",
        headers: message.headers,
        address,
        message,
      }),
    );
    r.once("error", (e: NodeJS.ErrnoException) => reject(hopError(e, url, signal)));
    r.end(req.body);
  });
}

function abortError(signal: AbortSignal): FetchError {
  const reason = signal.reason;
  if (reason instanceof FetchError) return reason;
  return new FetchError("the request was cancelled", "aborted");
}

function hopError(e: NodeJS.ErrnoException, url: URL, signal: AbortSignal): FetchError {
  if (signal.aborted) return abortError(signal);
  const code = e.code ?? "";
  if (code.startsWith("HPE_"))
    return new FetchError(`${url.host} did not answer with valid HTTP (${e.message})`, "protocol");
  if (code === "ECONNREFUSED") return new FetchError(`${url.host} refused the connection`, "network");
  if (code === "ECONNRESET" || code === "EPIPE")
    return new FetchError(`${url.host} closed the connection before answering`, "network");
  if (code.startsWith("ERR_TLS") || code.includes("CERT") || code === "DEPTH_ZERO_SELF_SIGNED_CERT")
    return new FetchError(`TLS with ${url.host} failed: ${e.message}`, "network");
  return new FetchError(`${url.host}: ${e.message}`, "network");
}

export interface BodyRead {
  bytes: Buffer;
  /** Bytes that came over the wire (compressed, when the body was). */
  wireBytes: number;
  /** True when the cap stopped the read (the rest was not read). */
  truncated: boolean;
}

/**
 * Reads the body, decompressed when the server compressed it, up to `maxBytes` of decoded
 * content; at the cap the connection is dropped, so neither a huge body nor a small one that
 * inflates to gigabytes is read further.
 */
export function readBody(res: HopResponse, maxBytes: number, signal: AbortSignal): Promise<BodyRead> {
  const encoding = String(res.headers["content-encoding"] ?? "identity")
    .toLowerCase()
    .trim();
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? createGunzip()
      : encoding === "deflate"
        ? createInflate()
        : encoding === "br"
          ? createBrotliDecompress()
          : undefined;
  if (!decoder && encoding !== "identity" && encoding !== "")
    return Promise.reject(new FetchError(`unsupported Content-Encoding: ${encoding}`, "protocol"));
  const message = res.message;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let wireBytes = 0;
    let settled = false;
    const finish = (truncated: boolean) => {
      if (settled) return;
      settled = true;
      cleanup();
      resolve({ bytes: Buffer.concat(chunks, size), wireBytes, truncated });
    };
    const fail = (e: FetchError) => {
      if (settled) return;
      settled = true;
      cleanup();
      reject(e);
    };
    const onAbort = () => fail(abortError(signal));
    const cleanup = () => {
      signal.removeEventListener("abort", onAbort);
      message.destroy();
      decoder?.destroy();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) return onAbort();
    const take = (chunk: Buffer) => {
      const room = maxBytes - size;
      // A byte past the cap is a cut; a body exactly at the cap is whole.
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        size += room;
        return finish(true);
      }
      chunks.push(chunk);
      size += chunk.length;
    };
    message.on("data", (c: Buffer) => {
      wireBytes += c.length;
      if (decoder) decoder.write(c);
      else take(c);
    });
    message.once("aborted", () =>
      fail(new FetchError("the server closed the connection mid-body", "network")),
    );
    message.once("error", (e) =>
      fail(signal.aborted ? abortError(signal) : new FetchError(`reading the body: ${e.message}`, "network")),
    );
    if (decoder) {
      decoder.on("data", take);
      decoder.once("error", (e) =>
        fail(new FetchError(`the ${encoding} body is corrupt: ${e.message}`, "protocol")),
      );
      decoder.once("end", () => finish(false));
      message.once("end", () => decoder.end());
    } else message.once("end", () => finish(false));
  });
}
