// envd's /files: download (GET, streamed a piece at a time from the agent, so a slow client
// holds back the reads instead of filling memory) and upload (POST, multipart/form-data or
// application/octet-stream, optionally gzip; written through the agent in bounded pieces).
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import busboy from "busboy";
import type { AgentEntry } from "../agent/client.js";
import type { EnvdContext } from "./context.js";

const PIECE = 256 * 1024;
/** The largest plain form field taken as a file's content (it is held in memory whole). */
const FIELD_MAX = 16 * 1024 * 1024;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const AGENT_STATUS: Record<string, number> = {
  not_found: 404,
  invalid_argument: 400,
  already_exists: 409,
  permission_denied: 403,
  failed_precondition: 400,
  resource_exhausted: 507,
  unavailable: 502,
};

export function httpErrorOf(e: unknown): HttpError {
  if (e instanceof HttpError) return e;
  const code = (e as { code?: unknown }).code;
  return new HttpError(typeof code === "string" ? (AGENT_STATUS[code] ?? 500) : 500, (e as Error).message);
}

/**
 * envd's error shape. When the request body was not read to its end (an upload refused half
 * way), the connection is closed after the answer: what is left of the body is not a request.
 */
export function sendJsonError(res: ServerResponse, e: HttpError, req?: IncomingMessage): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const unread = req !== undefined && !req.complete;
  const body = JSON.stringify({ code: e.status, message: e.message });
  res.writeHead(e.status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...(unread ? { connection: "close" } : {}),
  });
  const socket = req?.socket;
  res.end(body, () => {
    if (unread) socket?.destroy();
  });
}

function queryPath(url: URL, required: boolean): string | undefined {
  const p = url.searchParams.get("path");
  if (p === null || p === "") {
    if (required) throw new HttpError(400, "path is required");
    return undefined;
  }
  if (p.length > 4096 || p.includes("\0")) throw new HttpError(400, "path is not a valid path");
  return p;
}

export async function download(ctx: EnvdContext, url: URL, res: ServerResponse): Promise<void> {
  const path = queryPath(url, true) as string;
  let offset = 0;
  let first = true;
  for (;;) {
    const r = await ctx.runtime.agent.call<{ data: string; eof: boolean }>("read", {
      path,
      offset,
      length: PIECE,
    });
    const data = Buffer.from(r.data, "base64");
    if (first) {
      first = false;
      res.writeHead(200, {
        "content-type": "application/octet-stream",
        ...(r.eof ? { "content-length": data.length } : {}),
      });
    }
    offset += data.length;
    if (r.eof) {
      res.end(data);
      break;
    }
    if (!res.write(data))
      await new Promise<void>((done) => {
        const finish = () => {
          res.off("drain", finish);
          res.off("close", finish);
          done();
        };
        res.on("drain", finish);
        res.on("close", finish);
      });
    if (res.destroyed) return;
  }
  ctx.audit("file", { op: "read", path, bytes: offset });
}

const METADATA_HEADER = "x-metadata-";
/** envd's limits: a key fits an xattr name after "user.e2b."; all of a file's metadata fits 4 KiB. */
const METADATA_KEY_MAX = 246;
const METADATA_TOTAL_MAX = 4096;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The file metadata of an upload: every `X-Metadata-<key>: <value>` header (key lowercased,
 * first value when a header repeats). Each upload replaces the file's metadata, so none is {}.
 */
export function uploadMetadata(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  let total = 0;
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (!name.startsWith(METADATA_HEADER) || !values) continue;
    const key = name.slice(METADATA_HEADER.length);
    const value = values[0] ?? "";
    if (key === "" || !PRINTABLE_ASCII.test(key) || !PRINTABLE_ASCII.test(value))
      throw new HttpError(400, `metadata '${key}': keys and values must be printable US-ASCII`);
    if (Buffer.byteLength(key) > METADATA_KEY_MAX)
      throw new HttpError(
        400,
        `metadata key '${key.slice(0, 32)}…' is longer than ${METADATA_KEY_MAX} bytes`,
      );
    total += "user.e2b.".length + Buffer.byteLength(key) + Buffer.byteLength(value);
    if (total > METADATA_TOTAL_MAX)
      throw new HttpError(400, `the file metadata is larger than ${METADATA_TOTAL_MAX} bytes`);
    out[key] = value;
  }
  return out;
}

/** Writes one stream to a sandbox path in pieces; returns the entry and the byte count. */
async function writeStream(
  ctx: EnvdContext,
  path: string,
  input: Readable,
  maxBytes: number,
  meta: Record<string, string>,
): Promise<AgentEntry> {
  let buf: Buffer[] = [];
  let held = 0;
  let total = 0;
  let append = false;
  let entry: AgentEntry | undefined;
  const flush = async () => {
    const data = Buffer.concat(buf);
    buf = [];
    held = 0;
    entry = await ctx.runtime.agent.call<AgentEntry>("write", {
      path,
      data: data.toString("base64"),
      append,
      ...(append ? {} : { meta }),
    });
    append = true;
  };
  for await (const chunk of input as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) throw new HttpError(413, `upload larger than ${maxBytes} bytes`);
    buf.push(chunk);
    held += chunk.length;
    if (held >= PIECE) await flush();
  }
  if (held > 0 || !append) await flush();
  ctx.audit("file", { op: "write", path: (entry as AgentEntry).path, bytes: total });
  return entry as AgentEntry;
}

interface UploadedEntry {
  name: string;
  type: string;
  path: string;
  metadata?: Record<string, string>;
}

function info(e: AgentEntry): UploadedEntry {
  return {
    name: e.name,
    type: e.type === "dir" ? "directory" : "file",
    path: e.path,
    ...(e.meta && Object.keys(e.meta).length > 0 ? { metadata: e.meta } : {}),
  };
}

export async function upload(
  ctx: EnvdContext,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
  maxBytes: number,
): Promise<void> {
  const type = String(req.headers["content-type"] ?? "");
  const path = queryPath(url, false);
  const results: UploadedEntry[] = [];
  const metadata = uploadMetadata(req);
  if (type.startsWith("multipart/form-data")) {
    // One part that cannot be written (a read-only path, a folder in the way) does not end the
    // request: the other parts are written, the whole body is read (no reset connection), and
    // the answer names every file that failed and why.
    const fileErrors: Array<{ path: string; error: HttpError }> = [];
    await new Promise<void>((resolve, reject) => {
      let bb: busboy.Busboy;
      try {
        bb = busboy({
          headers: req.headers,
          preservePath: true,
          limits: { fileSize: maxBytes, files: 1000, fields: 100, fieldSize: FIELD_MAX },
        });
      } catch (e) {
        reject(new HttpError(400, (e as Error).message));
        return;
      }
      let chain = Promise.resolve();
      let failed = false;
      const fail = (e: unknown) => {
        if (failed) return;
        failed = true;
        req.unpipe(bb);
        req.resume();
        reject(e);
      };
      bb.on("file", (_field, stream, meta) => {
        const target = path ?? meta.filename;
        if (!target) {
          stream.resume();
          fail(new HttpError(400, "path is required (query or part file name)"));
          return;
        }
        // Parts are written one after another; busboy waits for each part to be read.
        stream.on("limit", () => fail(new HttpError(413, `upload larger than ${maxBytes} bytes`)));
        chain = chain.then(async () => {
          if (failed) {
            stream.resume();
            return;
          }
          try {
            results.push(info(await writeStream(ctx, target, stream, maxBytes, metadata)));
          } catch (e) {
            const error = httpErrorOf(e);
            // Too large is about the request, not this file: that ends it.
            if (error.status === 413) throw error;
            stream.resume();
            fileErrors.push({ path: target, error });
          }
        });
        chain.catch(fail);
      });
      // envd writes every part named "file", also one without a file name (a plain form field,
      // as `form.append("file", "text")` sends it): its value is the content.
      bb.on("field", (name, value, meta) => {
        if (name !== "file" || failed) return;
        if (!path) {
          fail(new HttpError(400, "path is required (query or part file name)"));
          return;
        }
        if (meta.valueTruncated) {
          fail(
            new HttpError(
              413,
              `a form field is larger than ${FIELD_MAX} bytes: send the file as a file part`,
            ),
          );
          return;
        }
        chain = chain.then(async () => {
          if (failed) return;
          try {
            results.push(
              info(await writeStream(ctx, path, Readable.from([Buffer.from(value)]), maxBytes, metadata)),
            );
          } catch (e) {
            const error = httpErrorOf(e);
            if (error.status === 413) throw error;
            fileErrors.push({ path, error });
          }
        });
        chain.catch(fail);
      });
      bb.on("error", (e) => fail(new HttpError(400, `malformed multipart body: ${(e as Error).message}`)));
      bb.on("close", () => void chain.then(() => (failed ? undefined : resolve()), fail));
      req.pipe(bb);
    });
    if (fileErrors.length > 0) {
      const first = fileErrors[0] as { path: string; error: HttpError };
      const written = results.length ? `; written: ${results.map((r) => r.path).join(", ")}` : "";
      throw new HttpError(
        first.error.status,
        fileErrors.length === 1 && results.length === 0
          ? first.error.message
          : `${fileErrors.length} of ${fileErrors.length + results.length} files could not be written: ${fileErrors
              .map((f) =>
                f.error.message.startsWith(f.path) ? f.error.message : `${f.path}: ${f.error.message}`,
              )
              .join("; ")}${written}`,
      );
    }
  } else if (type.startsWith("application/octet-stream")) {
    if (!path) throw new HttpError(400, "path is required");
    const enc = String(req.headers["content-encoding"] ?? "identity");
    if (enc !== "identity" && enc !== "gzip")
      throw new HttpError(415, `unsupported content encoding: ${enc}`);
    const input = enc === "gzip" ? req.pipe(createGunzip()) : req;
    try {
      results.push(info(await writeStream(ctx, path, input, maxBytes, metadata)));
    } catch (e) {
      if ((e as { code?: string }).code === "Z_DATA_ERROR")
        throw new HttpError(400, "body is not valid gzip");
      throw e;
    }
  } else {
    throw new HttpError(400, "upload must be multipart/form-data or application/octet-stream");
  }
  const body = JSON.stringify(results);
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}
