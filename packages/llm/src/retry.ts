// Retries with exponential backoff and full jitter, visible to callers through onRetry, and
// turning every failure into a ModelError whose message tells the user what to do.
import { ContextOverflowError, overflowOf } from "./context-overflow.js";
import { ProxyError } from "./http-fetch.js";
import { ModelError } from "./types.js";

/** What a failed call was, for error messages. */
export interface CallContext {
  provider?: string;
  /** Full URL of the endpoint, e.g. http://localhost:11434/v1/chat/completions. */
  endpoint?: string;
  /** Base URL the user configured (named in "is the server running" hints). */
  baseURL?: string;
  model?: string;
}

export interface RetryOptions {
  /** Total attempts including the first (default 4, i.e. 3 retries). */
  maxAttempts?: number;
  baseDelayMs?: number;
  /** Cap on one backoff delay; a Retry-After beyond it is not waited for. */
  maxDelayMs?: number;
  signal?: AbortSignal;
  /** Called before each backoff; `attempt` is the retry number (1 = first retry). */
  onRetry?: (info: { attempt: number; delayMs: number; error: string }) => void;
  /** Injectable for tests. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  context?: CallContext;
}

export type ErrorKind = "http" | "connection" | "timeout" | "malformed" | "other";

export interface ErrorInfo {
  kind: ErrorKind;
  retryable: boolean;
  status?: number;
  /** Server-requested delay from Retry-After / retry-after-ms. */
  retryAfterMs?: number;
  /** Short description, e.g. "HTTP 500: overloaded" or "connection refused (ECONNREFUSED)". */
  message: string;
  code?: string;
}

const RETRYABLE_STATUS = new Set([408, 409, 429]);
const RETRYABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "ECONNABORTED",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/** A ModelError for a response we could not use (garbage body, stream cut short, …). */
/**
 * Whether a failed call was the server refusing the request itself (HTTP 400, not for its
 * length): a provider may then send it again without a parameter the server does not take.
 */
export function isRefusal(err: unknown): err is ModelError {
  return err instanceof ModelError && !(err instanceof ContextOverflowError) && err.status === 400;
}

export function protocolError(message: string, retryable = false, kind: ErrorKind = "malformed"): ModelError {
  const error = new ModelError(message, undefined, retryable);
  (error as { kind?: ErrorKind }).kind = kind;
  return error;
}

/** The error an aborted call rejects with: the signal's reason, or a standard AbortError. */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new DOMException(typeof reason === "string" ? reason : "The operation was aborted", "AbortError");
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function header(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== "object") return undefined;
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}

/** Parses `retry-after-ms`, or `Retry-After` as seconds or an HTTP date. */
export function parseRetryAfter(headers: unknown, now = Date.now()): number | undefined {
  const ms = header(headers, "retry-after-ms");
  if (ms !== undefined && ms.trim() !== "" && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = header(headers, "retry-after");
  if (value === undefined || value.trim() === "") return undefined;
  if (Number.isFinite(Number(value))) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The proxy's own error, which the SDKs wrap as a bare "Connection error." */
function proxyErrorIn(err: unknown): ProxyError | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    if (current instanceof ProxyError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function errorCode(err: unknown): string | undefined {
  // undici nests the socket error: TypeError("fetch failed") -> cause -> { code }.
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^[A-Z_]+$/.test(code)) return code;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) current = errors[0];
    else current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Trims a server message for display: strips HTML and long bodies. */
export function summarize(text: string, max = 300): string {
  let s = text.trim();
  if (/^<!doctype html|^<html|<body/i.test(s)) {
    const title = /<title>([^<]*)<\/title>/i.exec(s)?.[1]?.trim();
    s = `HTML page${title ? ` "${title}"` : ""}: ${s
      .replace(/<(script|style)[\s\S]*?<\/\1>/gi, " ")
      .replace(/<[^>]+>/g, " ")
      .replace(/\s+/g, " ")
      .trim()}`;
  }
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

function serverMessage(err: { message?: unknown; error?: unknown; status?: unknown }): string {
  const body = err.error as { message?: unknown; error?: { message?: unknown } } | string | undefined;
  if (typeof body === "string" && body.trim()) return summarize(body);
  if (body && typeof body === "object") {
    if (typeof body.message === "string") return summarize(body.message);
    if (typeof body.error?.message === "string") return summarize(body.error.message);
  }
  const message = typeof err.message === "string" ? err.message : "";
  // The SDKs prefix the status ("429 Rate limit"); we print it ourselves.
  return summarize(message.replace(/^\d{3}\s+/, "") || "(no message)");
}

/** Everything an SDK error says about itself, as text: message, error body, code, type. */
function errorText(err: unknown): string {
  if (!err || typeof err !== "object") return String(err);
  const e = err as { message?: unknown; error?: unknown; code?: unknown; type?: unknown };
  let body = "";
  try {
    body = typeof e.error === "string" ? e.error : (JSON.stringify(e.error) ?? "");
  } catch {
    body = "";
  }
  return `${String(e.message ?? "")} ${body} ${String(e.code ?? "")} ${String(e.type ?? "")}`;
}

/** The overflow an error reports (the prompt did not fit the model's window), if it does. */
function overflowIn(err: unknown) {
  if (err instanceof ContextOverflowError)
    return { limitTokens: err.limitTokens, promptTokens: err.promptTokens };
  if (err instanceof ModelError) return undefined;
  const status = (err as { status?: unknown } | null)?.status;
  return overflowOf(typeof status === "number" ? status : undefined, errorText(err));
}

/** Decides whether an error (from either SDK, undici, or our own parsing) is worth retrying. */
export function classifyError(err: unknown): ErrorInfo {
  if (overflowIn(err)) {
    // Sending the same prompt again cannot fit; the caller must send less (some servers say 500).
    const status = (err as { status?: unknown }).status;
    return {
      kind: "http",
      retryable: false,
      ...(typeof status === "number" ? { status } : {}),
      message: `the prompt does not fit the model's context window: ${serverMessage(err as never)}`,
    };
  }
  if (err instanceof ModelError) {
    const kind = (err as { kind?: ErrorKind }).kind;
    return {
      kind: kind ?? (err.status ? "http" : "other"),
      retryable: err.retryable,
      ...(err.status ? { status: err.status } : {}),
      message: err.message,
    };
  }
  const e = (err ?? {}) as { name?: unknown; status?: unknown; headers?: unknown; message?: unknown };
  // The SDKs do not always set `name`; their class names are stable.
  const names = [e.name, (err as object | null)?.constructor?.name];
  const isA = (n: string) => names.includes(n);
  if (typeof e.status === "number") {
    const status = e.status;
    const retryAfterMs = parseRetryAfter(e.headers);
    return {
      kind: "http",
      status,
      retryable: RETRYABLE_STATUS.has(status) || status >= 500,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      message: `HTTP ${status}: ${serverMessage(e as never)}`,
    };
  }
  const proxy = proxyErrorIn(err);
  if (proxy) return { kind: "connection", retryable: proxy.retryable, message: proxy.message };
  const code = errorCode(err);
  const message = typeof e.message === "string" ? e.message : String(err);
  if (isA("APIConnectionTimeoutError") || code === "ETIMEDOUT" || code?.endsWith("_TIMEOUT")) {
    return { kind: "timeout", retryable: true, message: `timed out${code ? ` (${code})` : ""}`, code };
  }
  if (code === "ECONNREFUSED") {
    return { kind: "connection", retryable: true, message: "connection refused (ECONNREFUSED)", code };
  }
  if (code === "ENOTFOUND") {
    return { kind: "connection", retryable: false, message: "host not found (ENOTFOUND)", code };
  }
  if (code === "UND_ERR_SOCKET" || code === "ECONNRESET") {
    return {
      kind: "connection",
      retryable: true,
      message: `the connection closed unexpectedly (${code})`,
      code,
    };
  }
  if (code && RETRYABLE_CODES.has(code)) {
    return { kind: "connection", retryable: true, message: `connection failed (${code})`, code };
  }
  if (isA("APIConnectionError") || /^(terminated|fetch failed)$/i.test(message)) {
    // The SDKs say only "Connection error."; the code (a TLS failure, say) is the useful part.
    return {
      kind: "connection",
      retryable: true,
      message: `connection error: ${message}${code ? ` (${code})` : ""}`,
      code,
    };
  }
  if (err instanceof SyntaxError) {
    // A body that is not JSON (cut short, or one bad chunk) is retried like a 5xx.
    return { kind: "malformed", retryable: true, message: `malformed response: ${summarize(message)}` };
  }
  return {
    kind: "other",
    retryable: false,
    message: summarize(message || String(names[1] ?? "unknown error")),
  };
}

function hint(info: ErrorInfo, context: CallContext): string {
  const where = context.baseURL ?? context.endpoint ?? "the configured base URL";
  if (info.status === 401) return "check the API key";
  if (info.status === 403) return "the API key is not allowed to use this model or endpoint";
  if (info.status === 404)
    return `check the model name (${context.model ?? "?"}) and the base URL (${where})`;
  if (info.status === 429) return "rate limited: wait a little or lower the request rate";
  if (info.status !== undefined && info.status >= 500) return "the server failed; try again later";
  if (info.code === "ECONNREFUSED") return `is the server running at ${where}?`;
  if (info.code === "ENOTFOUND") return `check the host in the base URL (${where})`;
  if (info.kind === "timeout") return "the server did not answer in time; check it or raise the timeout";
  if (info.kind === "connection")
    return `the connection to ${where} failed; check the network and the server`;
  if (info.kind === "malformed") return `is ${where} an OpenAI/Anthropic-compatible API endpoint?`;
  return "";
}

/** Builds the user-facing ModelError for a final failure. */
export function toModelError(err: unknown, context: CallContext = {}, attempts = 1): ModelError {
  const info = classifyError(err);
  const who = context.provider ? `${context.provider} request` : "model request";
  const to = context.endpoint ? ` to ${context.endpoint}` : "";
  const model = context.model ? ` (model ${context.model})` : "";
  const tries = attempts > 1 ? ` after ${attempts} attempts` : "";
  const help = hint(info, context);
  const message = `${who}${to}${model} failed${tries}: ${info.message}${help ? `. Hint: ${help}` : ""}`;
  const overflow = overflowIn(err);
  const error = overflow
    ? new ContextOverflowError(message, info.status, overflow.limitTokens, overflow.promptTokens)
    : new ModelError(message, info.status, info.retryable);
  (error as { cause?: unknown }).cause = err;
  return error;
}

/**
 * Runs `fn` until it succeeds, a non-retryable error occurs, or attempts run out. Aborting the
 * signal rejects at once with the abort reason (a pending request is cancelled by `fn` itself,
 * which receives the same signal through its closure).
 */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 4);
  const base = options.baseDelayMs ?? 500;
  const cap = options.maxDelayMs ?? 30_000;
  const wait = options.sleep ?? sleep;
  const random = options.random ?? Math.random;
  const { signal } = options;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw abortError(signal);
    try {
      return await fn(attempt);
    } catch (err) {
      if (signal?.aborted) throw abortError(signal);
      const info = classifyError(err);
      if (!info.retryable || attempt >= maxAttempts) throw toModelError(err, options.context, attempt);
      if (info.retryAfterMs !== undefined && info.retryAfterMs > cap) {
        const error = toModelError(err, options.context, attempt);
        error.message += ` (the server asked to retry after ${Math.ceil(info.retryAfterMs / 1000)}s)`;
        throw error;
      }
      const backoff = Math.min(cap, base * 2 ** (attempt - 1));
      const delayMs = Math.round(info.retryAfterMs ?? random() * backoff);
      options.onRetry?.({ attempt, delayMs, error: info.message });
      await wait(delayMs, signal);
    }
  }
}
