// What the two SDK-backed providers share: client settings, retry settings, and the idle
// timeout around a streamed response.
import { nodeFetch } from "./http-fetch.js";
import { type IdleWatch, idleWatch } from "./idle.js";
import { type CallContext, protocolError, type RetryOptions, withRetry } from "./retry.js";
import type { SdkErrors } from "./stream-post.js";
import type { ModelRequest } from "./types.js";

/** The idle timeout: the longest wait for the first byte of a response and between its chunks. */
export const DEFAULT_TIMEOUT_MS = 120_000;

export interface SdkProviderOptions {
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /**
   * Idle timeout: the longest wait for the response's first byte and then between chunks
   * (default 120 s); when it passes, the attempt is abandoned and retried.
   */
  timeoutMs?: number;
  extraHeaders?: Record<string, string>;
  /** Backoff tuning (tests make it instant). */
  retry?: Pick<RetryOptions, "baseDelayMs" | "maxDelayMs" | "sleep" | "random">;
}

/** An SDK's client class: what makes a client, and the error classes stream-post.ts raises. */
type SdkClass<C> = SdkErrors & (new (options: ReturnType<typeof sdkClientOptions>) => C);

/** An SDK's client for these settings, and its error classes, once its module has loaded. */
export async function sdkClient<C>(
  sdk: Promise<{ default: SdkClass<C> }>,
  baseURL: string,
  apiKey: string,
  options: SdkProviderOptions,
): Promise<{ client: C; errors: SdkErrors }> {
  const { default: Client } = await sdk;
  return { client: new Client(sdkClientOptions(baseURL, apiKey, options)), errors: Client };
}

/** Options for either SDK's client: its own retries off (ours are visible as events). */
export function sdkClientOptions(baseURL: string, apiKey: string, options: SdkProviderOptions) {
  return {
    baseURL,
    apiKey,
    maxRetries: 0,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    defaultHeaders: options.extraHeaders,
    logLevel: "off" as const,
    fetch: nodeFetch,
  };
}

export function retryOptions(
  options: SdkProviderOptions,
  request: ModelRequest,
  context: CallContext,
): RetryOptions {
  return {
    ...options.retry,
    maxAttempts: (options.maxRetries ?? 3) + 1,
    ...(request.signal ? { signal: request.signal } : {}),
    onRetry: (info) => request.onEvent?.({ type: "retry", ...info }),
    context,
  };
}

/**
 * One model call: each attempt runs `read` under the idle watch (the answer's first byte and
 * every later chunk within the idle timeout; the SDKs' own timeout stops at the headers), and
 * failed attempts are retried as configured, each retry an event.
 */
export function withAttempts<T>(
  options: SdkProviderOptions,
  request: ModelRequest,
  context: CallContext,
  read: (watch: IdleWatch) => Promise<T>,
): Promise<T> {
  return withRetry(
    () => withIdleTimeout(options, request.signal, read),
    retryOptions(options, request, context),
  );
}

/** Runs `read` under an idle watch: no chunk for `timeoutMs` aborts it as a retryable timeout. */
export async function withIdleTimeout<T>(
  options: SdkProviderOptions,
  signal: AbortSignal | undefined,
  read: (watch: IdleWatch) => Promise<T>,
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const watch = idleWatch(timeoutMs, signal);
  try {
    return await read(watch);
  } catch (err) {
    // The SDKs report our own idle abort as a user abort; name it for what it is.
    if (watch.expired && !signal?.aborted) {
      const shown = timeoutMs >= 1000 && timeoutMs % 1000 === 0 ? `${timeoutMs / 1000} s` : `${timeoutMs} ms`;
      throw protocolError(`timed out: no data from the server for ${shown}`, true, "timeout");
    }
    throw err;
  } finally {
    watch.dispose();
  }
}
