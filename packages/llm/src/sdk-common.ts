// What the two SDK-backed providers share: client settings, retry settings, and the idle
// timeout around a streamed response.
import { nodeFetch } from "./http-fetch.js";
import { type IdleWatch, idleWatch } from "./idle.js";
import { type CallContext, protocolError, type RetryOptions } from "./retry.js";
import type { ModelRequest } from "./types.js";

export const DEFAULT_TIMEOUT_MS = 600_000;

export interface SdkProviderOptions {
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** Limit on the wait for the response and for each streamed chunk. */
  timeoutMs?: number;
  extraHeaders?: Record<string, string>;
  /** Backoff tuning (tests make it instant). */
  retry?: Pick<RetryOptions, "baseDelayMs" | "maxDelayMs" | "sleep" | "random">;
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
      throw protocolError(`timed out: no data from the server for ${timeoutMs} ms`, true, "timeout");
    }
    throw err;
  } finally {
    watch.dispose();
  }
}
