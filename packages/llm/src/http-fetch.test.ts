// The node:http fetch reads a request's headers from any HeadersInit without the global
// `Headers` (whose first use loads undici): what a real server receives is the same whether the
// SDK built them with node's Headers or with fetch-headers' (what the bundled bin gives them).
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { Headers as PolyfillHeaders } from "fetch-headers";
import { headerRecord, nodeFetch } from "./http-fetch.js";

test("headerRecord: Headers of either kind, pairs, records; names lower-cased, repeats joined", () => {
  const build = (h: Headers) => {
    h.append("Content-Type", "application/json");
    h.append("X-Stainless-Retry-Count", "0");
    h.append("accept", "text/event-stream");
    h.append("Accept", "application/json");
    return h;
  };
  const want = {
    "content-type": "application/json",
    "x-stainless-retry-count": "0",
    accept: "text/event-stream, application/json",
  };
  assert.deepEqual(headerRecord(build(new Headers())), want);
  assert.deepEqual(headerRecord(build(new PolyfillHeaders() as unknown as Headers)), want);
  assert.deepEqual(
    headerRecord([
      ["Content-Type", "application/json"],
      ["x-stainless-retry-count", "0"],
      ["Accept", "text/event-stream"],
      ["accept", "application/json"],
    ]),
    want,
  );
  assert.deepEqual(headerRecord({ Authorization: "Bearer k", "X-A": "1" }), {
    authorization: "Bearer k",
    "x-a": "1",
  });
  assert.deepEqual(headerRecord(undefined), {});
});

test("nodeFetch sends the same headers to a real server from node's and fetch-headers' Headers", async () => {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on("end", () => res.end("ok"));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
  try {
    for (const h of [new Headers(), new PolyfillHeaders() as unknown as Headers]) {
      h.append("Authorization", "Bearer sk-test");
      h.append("Content-Type", "application/json");
      h.append("X-Twice", "a");
      h.append("x-twice", "b");
      const res = await nodeFetch(url, { method: "POST", headers: h, body: '{"model":"m"}' });
      assert.equal(await res.text(), "ok");
    }
  } finally {
    await new Promise((r) => server.close(r));
  }
  assert.equal(seen.length, 2);
  for (const h of seen) {
    assert.equal(h.authorization, "Bearer sk-test");
    assert.equal(h["content-type"], "application/json");
    assert.equal(h["x-twice"], "a, b");
    assert.equal(h["content-length"], "13");
  }
});
