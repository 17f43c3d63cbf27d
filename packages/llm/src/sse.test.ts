import assert from "node:assert/strict";
import { test } from "node:test";
import { idleWatch } from "./idle.js";
import { readJsonEvents, SseDecoder, type SseEvent } from "./sse.js";
import { ModelError } from "./types.js";

/** The events of a whole stream, by the spec's rules, written plainly (the reference). */
function reference(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  let data: string[] = [];
  let event: string | undefined;
  const lines = text.split("\n");
  lines.pop(); // the last piece has no newline after it: not a line
  for (let line of lines) {
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line === "") {
      if (data.length) out.push({ data: data.join("\n"), ...(event !== undefined ? { event } : {}) });
      data = [];
      event = undefined;
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
  }
  return out;
}

function decodeIn(bytes: Buffer, cuts: number[]): SseEvent[] {
  const d = new SseDecoder();
  const out: SseEvent[] = [];
  let from = 0;
  for (const at of [...cuts, bytes.length]) {
    out.push(...d.push(bytes.subarray(from, at)));
    from = at;
  }
  out.push(...d.end());
  return out;
}

const STREAM = [
  ": keep-alive\r\n",
  'event: message_start\r\ndata: {"a":"é😀"}\r\n\r\n',
  "data: line one\ndata:line two\ndata\n\n",
  "event: ping\n\n", // an event name without data dispatches nothing and is forgotten
  'data: {"b":"ü"}\n\n',
  "id: 7\nretry: 10\ndata: x\r\n\r\n",
  "data: cut off, never closed",
].join("");

test("events are the same wherever the stream is cut into chunks (one cut and two)", () => {
  const bytes = Buffer.from(STREAM);
  const want = reference(STREAM);
  assert.equal(want.length, 4);
  assert.deepEqual(want[0], { event: "message_start", data: '{"a":"é😀"}' });
  for (let i = 0; i <= bytes.length; i++) assert.deepEqual(decodeIn(bytes, [i]), want, `cut at ${i}`);
  for (let i = 0; i <= bytes.length; i += 3)
    for (let j = i; j <= bytes.length; j += 5)
      assert.deepEqual(decodeIn(bytes, [i, j]), want, `cuts ${i}, ${j}`);
  // Byte by byte (every multi-byte character split).
  assert.deepEqual(
    decodeIn(
      bytes,
      Array.from({ length: bytes.length }, (_, i) => i),
    ),
    want,
  );
});

async function* chunks(parts: string[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield Buffer.from(p);
}

test("readJsonEvents: parses each event, stops at [DONE], calls onChunk once per chunk", async () => {
  let touched = 0;
  const got: unknown[] = [];
  for await (const e of readJsonEvents(
    chunks(['data: {"n":1}\n\nevent: x\ndata: {"n"', ":2}\n\ndata: [DONE]\n\n", 'data: {"n":3}\n\n']),
    () => touched++,
  ))
    got.push(e);
  assert.deepEqual(got, [{ value: { n: 1 } }, { event: "x", value: { n: 2 } }]);
  assert.equal(touched, 2, "the chunk after [DONE] is never read");
});

test("readJsonEvents: an event that is not JSON is a retryable protocol error after the good ones", async () => {
  const got: unknown[] = [];
  await assert.rejects(
    (async () => {
      for await (const e of readJsonEvents(chunks(['data: {"ok":true}\n\ndata: {nope\n\n']), () => {}))
        got.push(e.value);
    })(),
    (e: unknown) => e instanceof ModelError && e.retryable && /not valid JSON/.test(e.message),
  );
  assert.deepEqual(got, [{ ok: true }]);
});

test("idle watch: touches keep it alive; quiet for the timeout aborts it as expired", async () => {
  const w = idleWatch(300);
  const until = performance.now() + 700;
  while (performance.now() < until) {
    w.touch();
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(w.signal.aborted, false, "touched every ~20 ms for 700 ms: still open");
  w.touch();
  const quietFrom = performance.now();
  await new Promise<void>((r) => w.signal.addEventListener("abort", () => r()));
  const waited = performance.now() - quietFrom;
  assert.equal(w.expired, true);
  assert.ok(waited >= 295 && waited < 3000, `aborted after ${waited.toFixed(0)} ms of quiet`);
  w.dispose();
});

test("idle watch: the parent's abort passes through, not as expiry; dispose stops the timer", async () => {
  const parent = new AbortController();
  const w = idleWatch(50, parent.signal);
  parent.abort(new Error("user"));
  assert.equal(w.signal.aborted, true);
  assert.equal(w.expired, false);
  w.dispose();
  const quiet = idleWatch(30);
  quiet.dispose();
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(quiet.signal.aborted, false, "disposed before the timeout: never fires");
});
