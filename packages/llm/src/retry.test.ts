import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { classifyError, parseRetryAfter, protocolError, toModelError, withRetry } from "./retry.js";
import { ModelError } from "./types.js";

function httpError(status: number, headers: Record<string, string> = {}, message = "boom") {
  return Object.assign(new Error(`${status} ${message}`), {
    status,
    headers: new Headers(headers),
    error: { message },
  });
}

function connectionError(code: string) {
  return Object.assign(new Error("Connection error."), {
    name: "APIConnectionError",
    cause: Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error("x"), { code }) }),
  });
}

describe("parseRetryAfter", () => {
  test("seconds, milliseconds and HTTP dates", () => {
    assert.equal(parseRetryAfter(new Headers({ "retry-after": "2" })), 2000);
    assert.equal(parseRetryAfter(new Headers({ "retry-after": "1.5" })), 1500);
    assert.equal(parseRetryAfter({ "retry-after-ms": "250", "retry-after": "9" }), 250);
    const now = Date.parse("2025-01-01T00:00:00Z");
    assert.equal(parseRetryAfter({ "retry-after": "Wed, 01 Jan 2025 00:00:03 GMT" }, now), 3000);
    assert.equal(parseRetryAfter({ "retry-after": "soon" }), undefined);
    assert.equal(parseRetryAfter(undefined), undefined);
  });
});

describe("classifyError", () => {
  test("retryable statuses", () => {
    for (const status of [408, 409, 429, 500, 502, 503, 529])
      assert.equal(classifyError(httpError(status)).retryable, true);
    for (const status of [400, 401, 403, 404, 422])
      assert.equal(classifyError(httpError(status)).retryable, false);
  });

  test("network errors", () => {
    assert.deepEqual(
      [
        classifyError(connectionError("ECONNREFUSED")).retryable,
        classifyError(connectionError("ECONNREFUSED")).code,
      ],
      [true, "ECONNREFUSED"],
    );
    assert.equal(classifyError(connectionError("ECONNRESET")).retryable, true);
    assert.equal(
      classifyError(Object.assign(new Error("t"), { name: "APIConnectionTimeoutError" })).kind,
      "timeout",
    );
    assert.equal(classifyError(new TypeError("terminated")).retryable, true);
    assert.equal(classifyError(connectionError("ENOTFOUND")).retryable, false);
  });

  test("HTML bodies are summarised, not dumped", () => {
    const err = Object.assign(new Error("502"), {
      status: 502,
      headers: new Headers(),
      error: "<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>",
    });
    assert.match(classifyError(err).message, /^HTTP 502: HTML page "502 Bad Gateway"/);
  });
});

describe("toModelError", () => {
  test("names status, endpoint, model, server message and a hint", () => {
    const context = {
      provider: "openai",
      endpoint: "http://h/v1/chat/completions",
      baseURL: "http://h/v1",
      model: "m1",
    };
    const e401 = toModelError(httpError(401, {}, "Incorrect API key"), context);
    assert.ok(e401 instanceof ModelError);
    assert.equal(e401.status, 401);
    assert.equal(
      e401.message,
      "openai request to http://h/v1/chat/completions (model m1) failed: HTTP 401: Incorrect API key. Hint: check the API key",
    );
    assert.match(
      toModelError(httpError(404), context).message,
      /check the model name \(m1\) and the base URL/,
    );
    assert.match(
      toModelError(connectionError("ECONNREFUSED"), context, 4).message,
      /failed after 4 attempts: connection refused \(ECONNREFUSED\)\. Hint: is the server running at http:\/\/h\/v1\?/,
    );
  });
});

describe("withRetry", () => {
  const fast = { baseDelayMs: 10, maxDelayMs: 1000, random: () => 1 };

  test("retries retryable errors with exponential backoff, reporting each retry", async () => {
    const delays: number[] = [];
    const retries: number[] = [];
    let calls = 0;
    const result = await withRetry(
      async () => {
        calls++;
        if (calls < 3) throw httpError(503);
        return "ok";
      },
      { ...fast, sleep: async (ms) => void delays.push(ms), onRetry: (r) => retries.push(r.attempt) },
    );
    assert.equal(result, "ok");
    assert.equal(calls, 3);
    assert.deepEqual(delays, [10, 20]);
    assert.deepEqual(retries, [1, 2]);
  });

  test("full jitter scales the delay by random()", async () => {
    const delays: number[] = [];
    await assert.rejects(
      withRetry(
        async () => {
          throw httpError(500);
        },
        {
          baseDelayMs: 100,
          maxDelayMs: 250,
          maxAttempts: 4,
          random: () => 0.5,
          sleep: async (ms) => void delays.push(ms),
        },
      ),
    );
    assert.deepEqual(delays, [50, 100, 125]);
  });

  test("honours Retry-After over the backoff", async () => {
    const delays: number[] = [];
    let calls = 0;
    await withRetry(
      async () => {
        if (++calls === 1) throw httpError(429, { "retry-after": "0.3" });
        return 1;
      },
      { ...fast, sleep: async (ms) => void delays.push(ms) },
    );
    assert.deepEqual(delays, [300]);
  });

  test("a Retry-After beyond maxDelayMs fails at once and says so", async () => {
    let calls = 0;
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw httpError(429, { "retry-after": "3600" }, "daily quota");
        },
        { ...fast, sleep: async () => {} },
      ),
      /HTTP 429: daily quota.*asked to retry after 3600s/,
    );
    assert.equal(calls, 1);
  });

  test("never retries 400/401/403/404", async () => {
    for (const status of [400, 401, 403, 404]) {
      let calls = 0;
      await assert.rejects(
        withRetry(
          async () => {
            calls++;
            throw httpError(status);
          },
          { ...fast, sleep: async () => {} },
        ),
        (err: unknown) => err instanceof ModelError && err.status === status,
      );
      assert.equal(calls, 1, `status ${status}`);
    }
  });

  test("gives up after maxAttempts with the attempt count in the message", async () => {
    let calls = 0;
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw httpError(500, {}, "overloaded");
        },
        { ...fast, maxAttempts: 3, sleep: async () => {} },
      ),
      /failed after 3 attempts: HTTP 500: overloaded/,
    );
    assert.equal(calls, 3);
  });

  test("retryable protocol errors are retried, others are not", async () => {
    let calls = 0;
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw protocolError("garbage");
        },
        { ...fast, sleep: async () => {} },
      ),
      /garbage/,
    );
    assert.equal(calls, 1);
    calls = 0;
    const value = await withRetry(
      async () => {
        if (++calls < 2) throw protocolError("cut", true, "connection");
        return "done";
      },
      { ...fast, sleep: async () => {} },
    );
    assert.equal(value, "done");
  });

  test("an abort during the backoff rejects at once with the abort reason", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const pending = withRetry(
      async () => {
        throw httpError(503);
      },
      { baseDelayMs: 10_000, maxDelayMs: 10_000, random: () => 1, signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 30);
    await assert.rejects(pending, { name: "AbortError" });
    assert.ok(Date.now() - started < 2000);
  });

  test("an already-aborted signal does not call fn", async () => {
    let calls = 0;
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
        },
        { signal: AbortSignal.abort() },
      ),
      { name: "AbortError" },
    );
    assert.equal(calls, 0);
  });
});
