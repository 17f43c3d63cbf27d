// web_fetch: one HTTP request (GET by default; POST/PUT/PATCH/DELETE with a body for APIs)
// under the network policy of sandboxed commands (--allow-domain). Every hop of a redirect is
// judged again; the whole exchange has a time limit and the body a size cap.
import type { AllowRule, LookupFn } from "@hands/sandbox";
import { parseAllowRules, systemLookup } from "@hands/sandbox";
import { errorResult } from "../fs/errors.js";
import { fmtInt, humanSize } from "../fs/text.js";
import { WEB_DEFAULT_TIMEOUT_S, WEB_MAX_TIMEOUT_S, webFetchSpec } from "../specs.js";
import type { Tool, ToolContext, ToolResult } from "../types.js";
import { kindOf, mediaType, renderBody, sniffKind } from "./content.js";
import { checkedAddresses, FetchError, type HopResponse, readBody, sendHop } from "./http-hop.js";

export const WEB_MAX_BYTES = 5 * 1024 * 1024;
export const WEB_MAX_REDIRECTS = 5;
/** How much of an error response's body is shown. */
const ERROR_BODY_CHARS = 2000;
const REQUEST_BODY_MAX = 1024 * 1024;
/** Headers the tool sets itself; a call may not override them. */
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "accept-encoding",
]);

export interface WebFetchOptions {
  /** The --allow-domain entries (none: nothing can be fetched); or `rules`, already parsed. */
  allow?: readonly string[];
  rules?: readonly AllowRule[];
  /** DNS (tests give their own). */
  lookup?: LookupFn;
  /** Decoded body cap in bytes (default 5 MB). */
  maxBytes?: number;
  userAgent?: string;
}

export interface WebFetchArgs {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeout?: number;
}

interface Hop {
  url: string;
  status: number;
  address: string;
}

export function createWebFetchTool(options: WebFetchOptions): Tool<WebFetchArgs> {
  const rules = options.rules ?? parseAllowRules(options.allow ?? []);
  return {
    ...webFetchSpec,
    execute: (args, ctx) => webFetch(args, ctx, { ...options, rules }),
  };
}

async function webFetch(
  args: WebFetchArgs,
  ctx: ToolContext,
  options: WebFetchOptions & { rules: readonly AllowRule[] },
): Promise<ToolResult> {
  let url: URL;
  try {
    url = new URL(args.url);
  } catch {
    return errorResult(
      `not a valid URL: ${JSON.stringify(args.url)} (give an absolute http:// or https:// URL)`,
    );
  }
  let method = (args.method ?? "GET").toUpperCase();
  let body = args.body === undefined ? undefined : Buffer.from(args.body);
  if (body && (method === "GET" || method === "HEAD"))
    return errorResult(`a ${method} request has no body; use POST, PUT or PATCH to send one`);
  if (body && body.length > REQUEST_BODY_MAX)
    return errorResult(
      `the request body is ${humanSize(body.length)}; at most ${humanSize(REQUEST_BODY_MAX)} is sent`,
    );
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(args.headers ?? {})) {
    if (RESERVED_HEADERS.has(name.toLowerCase()))
      return errorResult(`the ${name} header is set by web_fetch itself`);
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n\0]/.test(String(value)))
      return errorResult(`not a valid header: ${JSON.stringify(name)}`);
    headers[name] = String(value);
  }
  headers["accept-encoding"] = "gzip, deflate, br";
  headers["user-agent"] ??= options.userAgent ?? "hands-web-fetch";
  headers.accept ??= "text/html, application/json;q=0.9, text/*;q=0.8, */*;q=0.5";

  const seconds = Math.min(args.timeout ?? WEB_DEFAULT_TIMEOUT_S, WEB_MAX_TIMEOUT_S);
  const timer = new AbortController();
  const timeout = setTimeout(
    () =>
      timer.abort(
        new FetchError(`timed out after ${seconds} s (the whole request, body included)`, "timeout"),
      ),
    seconds * 1000,
  );
  const signal = AbortSignal.any([ctx.signal, timer.signal]);
  const started = performance.now();
  const hops: Hop[] = [];
  const maxBytes = options.maxBytes ?? WEB_MAX_BYTES;
  try {
    let res: HopResponse;
    for (;;) {
      const addresses = await checkedAddresses(url, options.rules, options.lookup ?? systemLookup);
      res = await firstAnswer({ url, method, headers, ...(body ? { body } : {}) }, addresses, signal);
      hops.push({ url: url.href, status: res.status, address: res.address });
      const location = res.headers.location;
      if (res.status < 300 || res.status > 399 || res.status === 304 || !location) break;
      res.message.destroy();
      if (hops.length > WEB_MAX_REDIRECTS)
        return errorResult(`more than ${WEB_MAX_REDIRECTS} redirects (last: ${url.href} → ${location})`, {
          redirects: hops,
        });
      const next = new URL(location, url);
      // 303, and 301/302 after a POST, turn into a GET without a body (what browsers do).
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
        if (method !== "HEAD") method = "GET";
        body = undefined;
      }
      // Credentials meant for one origin are not handed to another.
      if (next.origin !== url.origin)
        for (const h of Object.keys(headers)) if (/^(authorization|cookie)$/i.test(h)) delete headers[h];
      url = next;
    }
    return await answer(res, { url, method, hops, signal, maxBytes, started });
  } catch (e) {
    if (e instanceof FetchError)
      return errorResult(e.kind === "refused" ? `refused: ${e.message}` : e.message, {
        url: args.url,
        kind: e.kind,
        ...(hops.length ? { redirects: hops } : {}),
      });
    return errorResult(`${url.href}: ${(e as Error).message}`);
  } finally {
    clearTimeout(timeout);
  }
}

/** Tries the checked addresses in turn until one accepts the connection. */
async function firstAnswer(
  req: Parameters<typeof sendHop>[0],
  addresses: string[],
  signal: AbortSignal,
): Promise<HopResponse> {
  let last: unknown;
  for (const address of addresses) {
    try {
      return await sendHop(req, address, signal);
    } catch (e) {
      if (!(e instanceof FetchError) || e.kind !== "network") throw e;
      last = e;
    }
  }
  throw last;
}

async function answer(
  res: HopResponse,
  at: { url: URL; method: string; hops: Hop[]; signal: AbortSignal; maxBytes: number; started: number },
): Promise<ToolResult> {
  const contentType = res.headers["content-type"];
  const type = mediaType(contentType);
  const length = Number(res.headers["content-length"]);
  const size = Number.isFinite(length) && length >= 0 ? length : undefined;
  const head = [`${at.method} ${at.url.href}`, `HTTP ${res.status} ${res.statusText}`.trimEnd()];
  if (at.hops.length > 1)
    head.push(`Redirected: ${at.hops.map((h) => `${h.url} (${h.status})`).join(" → ")}`);
  if (contentType) head.push(`Content-Type: ${contentType}`);
  const data: Record<string, unknown> = {
    url: at.url.href,
    status: res.status,
    address: res.address,
    ...(contentType ? { contentType } : {}),
    ...(at.hops.length > 1 ? { redirects: at.hops } : {}),
  };
  let kind = kindOf(type);
  if (at.method === "HEAD" || res.status === 204 || res.status === 304) {
    res.message.destroy();
    if (size !== undefined) head.push(`Content-Length: ${fmtInt(size)}`);
    return { output: head.join("\n"), data: { ...data, ms: Math.round(performance.now() - at.started) } };
  }
  const failed = res.status >= 400;
  if (kind === "binary") {
    res.message.destroy();
    if (!failed)
      return errorResult(
        `${at.url.href} is binary (${type}, ${size === undefined ? "size not given" : humanSize(size)}); web_fetch returns text, HTML, JSON or XML only`,
        { ...data, ...(size !== undefined ? { size } : {}) },
      );
  }
  const read = await readBody(res, failed ? ERROR_BODY_CHARS * 4 : at.maxBytes, at.signal);
  kind ??= sniffKind(read.bytes);
  const ms = Math.round(performance.now() - at.started);
  Object.assign(data, { bytes: read.bytes.length, wireBytes: read.wireBytes, truncated: read.truncated, ms });
  if (kind === "binary") {
    if (!failed)
      return errorResult(
        `${at.url.href} is binary (${type || "no Content-Type"}, ${size === undefined ? `more than ${humanSize(read.bytes.length)}` : humanSize(size)}); web_fetch returns text only`,
        data,
      );
    return errorResult(`${head.join("\n")}\n(binary body)`, data);
  }
  const rendered = renderBody(read.bytes, kind, contentType, at.url.href, read.truncated);
  if (rendered.title) head.push(`Title: ${rendered.title}`);
  if (rendered.charsetNote) head.push(`Charset: ${rendered.charsetNote}`);
  if (rendered.note) head.push(`Note: ${rendered.note}`);
  data.encoding = rendered.encoding;
  if (failed) {
    const retry = res.headers["retry-after"];
    const excerpt = rendered.text.slice(0, ERROR_BODY_CHARS);
    return errorResult(
      `HTTP ${res.status} ${res.statusText}`.trimEnd() +
        ` from ${at.url.href}${retry ? ` (Retry-After: ${retry})` : ""}\n${head.slice(2).join("\n")}\n\n${excerpt}${rendered.text.length > excerpt.length ? "\n[…]" : ""}`,
      data,
    );
  }
  if (read.truncated)
    head.push(
      `Truncated: the body was cut at ${humanSize(at.maxBytes)}${size !== undefined ? ` of ${humanSize(size)}` : ""}`,
    );
  return { output: `${head.join("\n")}\n\n${rendered.text}`, data };
}
