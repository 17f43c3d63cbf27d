// Server-sent events from a response body, in time linear in its size. The SDKs' decoders
// copy the whole pending buffer and rescan it on every network chunk, so one large event (a
// tool call whose 50 MB of arguments come in a single delta) took quadratic time; here each
// byte is scanned once and a long line is joined once, when it ends.
import { StringDecoder } from "node:string_decoder";
import { protocolError, summarize } from "./retry.js";

export interface SseEvent {
  /** The `event:` field, when the server set one. */
  event?: string;
  /** The `data:` lines, joined with newlines. */
  data: string;
}

/**
 * Splits a byte stream into events, synchronously: `push` each chunk as it arrives, `end` once
 * the stream ended; each returns the events that chunk completed (lines end in \n or \r\n).
 * Kept free of generators and promises: a streamed reply is many small chunks, and layered
 * async generators cost a few promise round trips per chunk and per event.
 */
export class SseDecoder {
  private readonly decoder = new StringDecoder("utf8");
  /** Pieces of the current line not yet ended. */
  private partial: string[] = [];
  private data: string[] = [];
  private event: string | undefined;

  push(chunk: Uint8Array): SseEvent[] {
    return this.feed(this.decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
  }

  /** An event not closed by a blank line is incomplete (a cut stream): it is not dispatched. */
  end(): SseEvent[] {
    return this.feed(`${this.decoder.end()}\n`);
  }

  private feed(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    let from = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", from)) {
      const piece = text.slice(from, nl);
      const whole = this.partial.length ? this.partial.join("") + piece : piece;
      this.partial = [];
      from = nl + 1;
      const done = this.line(whole);
      if (done) out.push(done);
    }
    if (from < text.length) this.partial.push(text.slice(from));
    return out;
  }

  private line(text: string): SseEvent | undefined {
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (text === "") {
      const event = this.event;
      this.event = undefined;
      if (this.data.length === 0) return undefined;
      const done: SseEvent = { data: this.data.join("\n"), ...(event !== undefined ? { event } : {}) };
      this.data = [];
      return done;
    }
    if (text.startsWith(":")) return undefined; // a comment (keep-alive)
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    return undefined;
  }
}

/**
 * Each event's data parsed as JSON, up to `[DONE]`; a chunk that is not JSON is a retryable
 * fault. `onChunk` is called for every piece of the body received (the idle watch's heartbeat).
 */
export async function* readJsonEvents(
  body: AsyncIterable<Uint8Array>,
  onChunk: () => void,
): AsyncGenerator<{ event?: string; value: unknown }> {
  const sse = new SseDecoder();
  for await (const chunk of body) {
    onChunk();
    for (const e of sse.push(chunk)) {
      if (e.data === "[DONE]") return;
      yield parsed(e);
    }
  }
  for (const e of sse.end()) {
    if (e.data === "[DONE]") return;
    yield parsed(e);
  }
}

function parsed(sse: SseEvent): { event?: string; value: unknown } {
  let value: unknown;
  try {
    value = JSON.parse(sse.data);
  } catch (err) {
    throw protocolError(
      `the server sent an event that is not valid JSON (${(err as Error).message}): ${summarize(sse.data, 120)}`,
      true,
    );
  }
  return { ...(sse.event !== undefined ? { event: sse.event } : {}), value };
}

/**
 * An error event inside a stream (`{"error": …}`), as the error the SDKs would raise: the body
 * kept, so the retry and overflow classification read the server's own words.
 */
export function streamError(body: unknown): Error {
  const e = (body as { error?: unknown }).error ?? body;
  const message =
    typeof e === "string"
      ? e
      : typeof (e as { message?: unknown })?.message === "string"
        ? (e as { message: string }).message
        : JSON.stringify(e);
  // The status the same fault gets outside a stream, so an overload mid-stream is retried.
  const status = STREAM_ERROR_STATUS[String((e as { type?: unknown })?.type)];
  return Object.assign(new Error(message), { error: e, ...(status ? { status } : {}) });
}

/** Error types servers send inside a stream (Anthropic's and OpenAI's), as HTTP statuses. */
const STREAM_ERROR_STATUS: Record<string, number> = {
  overloaded_error: 529,
  api_error: 500,
  server_error: 500,
  rate_limit_error: 429,
  invalid_request_error: 400,
};
