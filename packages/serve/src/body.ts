// Request bodies with a size limit, and JSON bodies that must be objects — one reader for the
// management API, the Connect services and the interpreter, each mapping BodyError to its own
// protocol's error.
import type { IncomingMessage } from "node:http";

export class BodyError extends Error {
  constructor(
    readonly kind: "too_large" | "bad_json",
    message: string,
  ) {
    super(message);
  }
}

/** Reads a request body, refusing more than `limit` bytes (declared or sent). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit)
    throw new BodyError("too_large", `request body larger than ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > limit) throw new BodyError("too_large", `request body larger than ${limit} bytes`);
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

/** A JSON object (an empty body is `{}`); anything else is a BodyError. */
export function parseJsonObject(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    throw new BodyError("bad_json", "request body is not valid JSON");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new BodyError("bad_json", "request body must be a JSON object");
  return v as Record<string, unknown>;
}

export async function readJsonObject(req: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  return parseJsonObject((await readBody(req, limit)).toString("utf8"));
}
