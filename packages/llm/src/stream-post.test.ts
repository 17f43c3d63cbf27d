import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { after, before, describe, test } from "node:test";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { OpenAIProvider } from "./openai.js";
import { settleReply } from "./stream-post.js";
import { ModelError } from "./types.js";

const sse = (chunks: unknown[]) =>
  `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`;
const answer = (text: string) =>
  sse([
    { choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }] },
    { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
  ]);

describe("the streamed request path (stream-post.ts)", () => {
  let server: Server;
  let url: string;
  let connections = 0;
  /** What the next request gets: a full reply, or an error event mid-stream. */
  let mode: "ok" | "error-event" | "gzip" | "br" | "reset-after-done" | "gzip-reset" = "ok";
  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (mode !== "gzip" && mode !== "br" && mode !== "gzip-reset")
          res.writeHead(200, { "content-type": "text/event-stream" });
        if (mode === "ok") res.end(answer("pong"));
        else if (mode === "gzip-reset") {
          // Half a compressed answer, then the connection dies.
          const packed = gzipSync(answer("never whole"));
          res.writeHead(200, { "content-encoding": "gzip" });
          res.write(packed.subarray(0, packed.length >> 1));
          setTimeout(() => req.socket.destroy(), 20);
        } else if (mode === "reset-after-done") {
          // The whole answer, then the connection dies before the response's end.
          res.write(answer("pong"));
          setTimeout(() => req.socket.destroy(), 20);
        } else if (mode === "gzip" || mode === "br") {
          const packed = mode === "gzip" ? gzipSync(answer("packed")) : brotliCompressSync(answer("packed"));
          // In two pieces, under a capitalised header name (names are case-insensitive).
          res.writeHead(200, { "Content-Encoding": mode });
          res.write(packed.subarray(0, 7));
          res.end(packed.subarray(7));
        } else {
          // An error event, then the stream stays open: the client must cut it, not wait.
          res.write(
            `data: ${JSON.stringify({ error: { message: "bad request", type: "invalid_request_error" } })}\n\n`,
          );
        }
      });
    });
    server.on("connection", () => connections++);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  test("one provider keeps one connection over many streamed requests (the reply is drained, not cut)", async () => {
    const provider = new OpenAIProvider({ baseURL: url, model: "m", apiKey: "k" });
    const before = connections;
    for (let i = 0; i < 10; i++) {
      const r = await provider.complete({ messages: [{ role: "user", content: `hi ${i}` }], tools: [] });
      assert.equal(r.message.content, "pong");
    }
    assert.equal(connections - before, 1);
  });

  test("an error event ends the call at once and the half-read connection is closed, not reused", async () => {
    const provider = new OpenAIProvider({ baseURL: url, model: "m", apiKey: "k", maxRetries: 0 });
    mode = "error-event";
    let closed: Promise<unknown> | undefined;
    server.once("request", (req) => {
      closed = new Promise((r) => req.socket.once("close", r));
    });
    try {
      await assert.rejects(
        provider.complete({ messages: [{ role: "user", content: "hi" }], tools: [] }),
        (e: unknown) => e instanceof ModelError && /bad request/.test(e.message),
      );
    } finally {
      mode = "ok";
    }
    // The server left that response open: only the client cutting it closes the connection.
    const late = new Promise((r) => setTimeout(r, 3000, "still open"));
    assert.notEqual(await Promise.race([closed, late]), "still open", "the client cut the connection");
    const r = await provider.complete({ messages: [{ role: "user", content: "again" }], tools: [] });
    assert.equal(r.message.content, "pong");
  });

  test("a compressed event stream (gzip, br) is decoded", async () => {
    const provider = new OpenAIProvider({ baseURL: url, model: "m", apiKey: "k" });
    for (const m of ["gzip", "br"] as const) {
      mode = m;
      try {
        const r = await provider.complete({ messages: [{ role: "user", content: "hi" }], tools: [] });
        assert.equal(r.message.content, "packed", m);
      } finally {
        mode = "ok";
      }
    }
  });

  test("a compressed stream whose connection dies mid-body fails at once as a reset (not at the idle timeout)", async () => {
    const provider = new OpenAIProvider({ baseURL: url, model: "m", apiKey: "k", maxRetries: 0 });
    mode = "gzip-reset";
    const started = performance.now();
    try {
      await assert.rejects(
        provider.complete({ messages: [{ role: "user", content: "hi" }], tools: [] }),
        (e: unknown) => e instanceof ModelError && /ECONNRESET|closed/.test(e.message),
      );
    } finally {
      mode = "ok";
    }
    assert.ok(performance.now() - started < 5000, "well before the 120 s idle timeout");
  });

  test("a connection reset after [DONE], while the rest is drained, harms nothing", async () => {
    const provider = new OpenAIProvider({ baseURL: url, model: "m", apiKey: "k" });
    mode = "reset-after-done";
    try {
      const r = await provider.complete({ messages: [{ role: "user", content: "hi" }], tools: [] });
      assert.equal(r.message.content, "pong");
      await new Promise((r) => setTimeout(r, 100)); // the reset comes after the answer
    } finally {
      mode = "ok";
    }
    const again = await provider.complete({ messages: [{ role: "user", content: "again" }], tools: [] });
    assert.equal(again.message.content, "pong");
  });

  test("settleReply: drains what follows the last event; a reply that never ends is cut", async () => {
    const ending = new PassThrough();
    ending.write("tail");
    ending.end();
    await settleReply(ending, true, 50);
    assert.equal(ending.readableEnded, true, "ended before settleReply resolved");

    const endless = new PassThrough();
    const timer = setInterval(() => endless.write("more"), 5);
    await settleReply(endless, true, 50);
    assert.equal(endless.destroyed, false, "not waited for: resolved at the next turn, still draining");
    await new Promise((r) => endless.once("close", r));
    clearInterval(timer);
    assert.equal(endless.destroyed, true);

    const failed = new PassThrough();
    await settleReply(failed, false);
    assert.equal(failed.destroyed, true);
  });
});
