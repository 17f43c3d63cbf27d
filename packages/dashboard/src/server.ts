// The dashboard's HTTP server: 127.0.0.1 only, every request behind the token (auth.ts), the
// built front end from dist/web, a JSON API over the data folder, and server-sent events for
// what changes (the runs list, a running trace).
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, extname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { readTrace, TraceFollower, type TraceLiveness, traceLiveness } from "@hands/agent";
import {
  LAYERS,
  type Layer,
  lastContextChunks,
  memoryCell,
  memoryMap,
  memoryMapAt,
  memoryMoveLog,
  memoryMoves,
  seqAfterStep,
  snapshotMarks,
  stepRange,
} from "@hands/memory";
import type {
  ContextPayload,
  LiveBatch,
  MemoryMapPayload,
  SnapshotsPayload,
  TracePayload,
} from "./api-types.js";
import { DashboardAuth } from "./auth.js";
import { readEvalRuns } from "./eval-log.js";
import { parseIdList } from "./id-list.js";
import { localSandboxes, localSandboxTrail } from "./local-sandboxes.js";
import { MemoryFileError, MemoryFiles } from "./memory-files.js";
import { type OpenerFile, writeOpenerFile } from "./opener-file.js";
import { RunIndex, tracePath } from "./runs.js";
import { killSandbox, listSandboxes, type ServeConnection, sandboxTrail } from "./sandboxes.js";
import { fullMessage, sentMessages } from "./sent-messages.js";

export interface DashboardOptions {
  dataDir: string;
  /** 0 (default): a free port chosen by the system. */
  port?: number;
  serve?: ServeConnection;
  /** Built front end (default: dist/web next to this file). */
  webDir?: string;
  /** How often live views look for changes. */
  pollMs?: number;
}

export interface RunningDashboard {
  url: string;
  /** The one-time link (the URL with the token). */
  openUrl: string;
  /** A 0600 file in the data folder that opens the link: what the browser is given (opener-file.ts). */
  openFile: OpenerFile;
  port: number;
  token: string;
  /** The session cookie's value the link gives out (for tests: a request as the signed-in browser). */
  session: string;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
};

const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    ...SECURITY_HEADERS,
  });
  res.end(text);
}

function plainText(res: ServerResponse, text: string): void {
  res.writeHead(200, {
    "content-type": "text/plain; charset=utf-8",
    "cache-control": "no-store",
    ...SECURITY_HEADERS,
  });
  res.end(text);
}

function intParam(url: URL, name: string, fallback?: number): number | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new HttpError(400, `${name} must be a whole number`);
  return n;
}

function defaultWebDir(): string {
  // The built front end's page, next to this file (dist/web/index.html): the package ships it.
  return dirname(fileURLToPath(new URL("./web/index.html", import.meta.url)));
}

/** Opens an SSE stream; `tick` runs every pollMs until the client goes away. */
function sse(
  req: IncomingMessage,
  res: ServerResponse,
  pollMs: number,
  tick: (send: (event: string, data: unknown) => void) => void,
) {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-store",
    connection: "keep-alive",
    ...SECURITY_HEADERS,
  });
  const send = (event: string, data: unknown) =>
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.write(": connected\n\n");
  let beats = 0;
  const timer = setInterval(() => {
    try {
      tick(send);
      // A comment now and then keeps proxies and the browser from timing the stream out.
      if (++beats % Math.max(1, Math.round(15_000 / pollMs)) === 0) res.write(": keep-alive\n\n");
    } catch (err) {
      send("problem", { message: (err as Error).message });
    }
  }, pollMs);
  const stop = () => clearInterval(timer);
  req.once("close", stop);
  res.once("close", stop);
  return stop;
}

export async function startDashboard(o: DashboardOptions): Promise<RunningDashboard> {
  let openFile: OpenerFile | undefined;
  const auth = new DashboardAuth(() => openFile?.remove());
  const runs = new RunIndex(o.dataDir);
  const memory = new MemoryFiles(o.dataDir);
  const webDir = o.webDir ?? defaultWebDir();
  const pollMs = o.pollMs ?? 250;
  const streams = new Set<() => void>();
  let port = 0;

  const serveStatic = (path: string, res: ServerResponse) => {
    const rel = path === "/" || !path.startsWith("/assets/") ? "index.html" : path.slice(1);
    const file = join(webDir, rel);
    if (!file.startsWith(webDir + sep) || rel.includes("..")) throw new HttpError(404, "not found");
    if (!existsSync(file)) {
      if (rel === "index.html")
        throw new HttpError(500, `the dashboard's front end is not built (${webDir}): run npm run build`);
      throw new HttpError(404, "not found");
    }
    const body = readFileSync(file);
    res.writeHead(200, {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "content-length": body.length,
      // Built asset names carry a content hash; the page itself is always fetched fresh.
      "cache-control": rel === "index.html" ? "no-store" : "max-age=31536000, immutable",
      ...SECURITY_HEADERS,
    });
    res.end(body);
  };

  const traceOf = (id: string): TracePayload => {
    const path = tracePath(o.dataDir, id);
    if (!existsSync(path)) throw new HttpError(404, `no run ${id}`);
    let r: ReturnType<typeof readTrace>;
    try {
      r = readTrace(path);
    } catch (err) {
      throw new HttpError(422, `the trace ${id} cannot be read: ${(err as Error).message}`);
    }
    return {
      id,
      events: r.events,
      problems: r.problems,
      offset: r.offset,
      updated: statSync(path).mtimeMs,
      liveness: traceLiveness(path),
    };
  };

  /** A tool's full output, only from the data folder's outputs (the path comes from the trace). */
  const fullOutput = (id: string, callId: string): string => {
    const t = traceOf(id);
    const end = t.events.find((e) => e.type === "tool_end" && e.callId === callId);
    if (end?.type !== "tool_end" || !end.fullOutputPath)
      throw new HttpError(404, "no full output kept for that call");
    const outputs = realpathSync(join(o.dataDir, "outputs"));
    let real: string;
    try {
      real = realpathSync(end.fullOutputPath);
    } catch {
      throw new HttpError(404, `the full output is gone (${end.fullOutputPath})`);
    }
    if (!real.startsWith(outputs + sep))
      throw new HttpError(403, "that output is not in the data folder's outputs");
    const st = statSync(real);
    if (!st.isFile()) throw new HttpError(403, "not a file");
    return readFileSync(real, "utf8").slice(0, 20 * 1024 * 1024);
  };

  const memoryRoute = (path: string, url: URL): unknown => {
    const file = url.searchParams.get("file") ?? undefined;
    const scopeParam = url.searchParams.get("scope");
    const scope = scopeParam === null || scopeParam === "" ? undefined : scopeParam;
    const buckets = intParam(url, "buckets", 10)!;
    if (buckets < 1 || buckets > 100) throw new HttpError(400, "buckets must be 1..100");
    const layer = url.searchParams.get("layer");
    if (path === "/api/memory/cell" && !LAYERS.includes(layer as Layer))
      throw new HttpError(400, `layer must be one of ${LAYERS.join(", ")}`);
    return memory.cached(file, `${path}?${url.searchParams}`, (store, name) => {
      switch (path) {
        case "/api/memory/map": {
          const map = memoryMap(store, { ...(scope ? { scope } : {}), buckets });
          const body: MemoryMapPayload = {
            file: name,
            files: memory.list(),
            ...map,
          };
          return body;
        }
        case "/api/memory/moves":
          return memoryMoves(store, scope ? { scope } : {});
        case "/api/memory/cell": {
          return memoryCell(store, {
            ...(scope ? { scope } : {}),
            layer: layer as Layer,
            bucket: intParam(url, "bucket", 0)!,
            buckets,
            limit: intParam(url, "limit", 200)!,
            offset: intParam(url, "offset", 0)!,
          });
        }
        case "/api/memory/log": {
          const before = intParam(url, "before");
          const chunk = url.searchParams.get("chunk");
          return memoryMoveLog(store, {
            ...(before !== undefined ? { beforeSeq: before } : {}),
            ...(chunk ? { chunkId: chunk } : {}),
            limit: intParam(url, "limit", 200)!,
          });
        }
        case "/api/memory/replay": {
          // To a point of the log, or to where the scope had stored a step (steps are per scope).
          const step = intParam(url, "step");
          if (step !== undefined && !scope) throw new HttpError(400, "replaying to a step needs a scope");
          const seq = step !== undefined ? seqAfterStep(store, scope!, step) : intParam(url, "seq", 0)!;
          return memoryMapAt(store, seq, { ...(scope ? { scope } : {}), buckets });
        }
        case "/api/memory/snapshots": {
          const body: SnapshotsPayload = {
            marks: snapshotMarks(store, scope ? { scope } : {}),
            ...(scope ? { steps: stepRange(store, scope) ?? null } : {}),
          };
          return body;
        }
        case "/api/memory/chunk": {
          const id = url.searchParams.get("id") ?? "";
          const c = store.get(id);
          if (!c) throw new HttpError(404, `no chunk ${id.slice(0, 40)}`);
          return {
            chunk: c,
            originals: store.getMany(c.sources, { content: false }),
            history: memoryMoveLog(store, { chunkId: id, limit: 500 }),
          };
        }
        case "/api/memory/context": {
          const last = lastContextChunks(store, scope);
          if (!last) return null;
          const { context: ctx, chunks } = last;
          const body: ContextPayload = {
            scope: ctx.scope,
            time: ctx.time,
            mode: ctx.mode,
            tokens: ctx.tokens,
            items: ctx.items.map((i) => {
              const c = chunks.get(i.id);
              return {
                ...i,
                ...(c ? { layer: c.layer, importance: c.importance, type: c.type, tokens: c.tokens } : {}),
                originals: c?.sources.length ?? 0,
              };
            }),
          };
          return body;
        }
        default:
          throw new HttpError(404, `no such endpoint: ${path}`);
      }
    });
  };

  const api = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const path = url.pathname;
    if (req.method === "GET" && path === "/api/runs") return json(res, 200, runs.list());
    if (req.method === "GET" && path === "/api/live") {
      // The runs list changed: the page fetches it again.
      let last = "";
      const stop = sse(req, res, Math.max(pollMs, 500), (send) => {
        const sig = runs
          .list()
          .map((r) => `${r.id}:${r.updated}:${r.status}:${r.steps}`)
          .join("|");
        if (sig !== last) {
          last = sig;
          send("runs", { changed: Date.now() });
        }
      });
      streams.add(stop);
      return;
    }
    let m = /^\/api\/runs\/([^/]+)(\/live|\/output|\/messages|\/message)?$/.exec(path);
    if (m && req.method === "GET") {
      const id = decodeURIComponent(m[1]!);
      if (!m[2]) return json(res, 200, traceOf(id));
      if (m[2] === "/messages" || m[2] === "/message") {
        const file = tracePath(o.dataDir, id);
        if (!existsSync(file)) throw new HttpError(404, `no run ${id}`);
        const unreadable = (err: unknown) =>
          new HttpError(422, `the trace ${id} cannot be read: ${(err as Error).message}`);
        if (m[2] === "/messages") {
          const ranges = parseIdList(url.searchParams.get("ids") ?? "");
          if (!ranges) throw new HttpError(400, "ids must be a list of message ids like 1-40,43");
          let body: ReturnType<typeof sentMessages>;
          try {
            body = sentMessages(file, ranges);
          } catch (err) {
            throw unreadable(err);
          }
          return json(res, 200, body);
        }
        const messageId = intParam(url, "id", 0)!;
        let text: string | undefined;
        try {
          text = fullMessage(file, messageId);
        } catch (err) {
          throw unreadable(err);
        }
        if (text === undefined) throw new HttpError(404, "the trace has no such message");
        return plainText(res, text);
      }
      if (m[2] === "/output") return plainText(res, fullOutput(id, url.searchParams.get("call") ?? ""));
      const follower = new TraceFollower(tracePath(o.dataDir, id), intParam(url, "offset", 0));
      let liveness: TraceLiveness | undefined;
      const stop = sse(req, res, pollMs, (send) => {
        if (!existsSync(follower.path)) return;
        const { events, problems } = follower.poll();
        const batch: LiveBatch = { events, problems };
        if (batch.events.length || batch.problems.length)
          send("events", { ...batch, offset: follower.offset });
        // After the events: a run's result comes before its writer's mark goes.
        const now = traceLiveness(follower.path);
        if (now !== liveness) {
          liveness = now;
          send("liveness", { liveness });
        }
      });
      streams.add(stop);
      return;
    }
    if (path.startsWith("/api/memory/") && req.method === "GET")
      return json(res, 200, memoryRoute(path, url));
    if (req.method === "GET" && path === "/api/evals") return json(res, 200, readEvalRuns(o.dataDir));
    if (req.method === "GET" && path === "/api/sandboxes")
      return json(res, 200, await listSandboxes(o.serve));
    if (req.method === "GET" && path === "/api/sandboxes/local")
      return json(res, 200, localSandboxes(o.dataDir));
    m = /^\/api\/sandboxes\/local\/([^/]+)$/.exec(path);
    if (m && req.method === "GET")
      return json(res, 200, localSandboxTrail(o.dataDir, decodeURIComponent(m[1]!)));
    m = /^\/api\/sandboxes\/([^/]+)\/trail$/.exec(path);
    if (m && req.method === "GET")
      return json(res, 200, await sandboxTrail(o.serve, decodeURIComponent(m[1]!)));
    m = /^\/api\/sandboxes\/([^/]+)\/kill$/.exec(path);
    if (m && req.method === "POST") {
      await killSandbox(o.serve, decodeURIComponent(m[1]!));
      return json(res, 200, { killed: m[1] });
    }
    throw new HttpError(404, `no such endpoint: ${req.method} ${path}`);
  };

  const server: Server = createServer((req, res) => {
    if (!auth.authorize(req, res, port)) return;
    const url = new URL(req.url ?? "/", "http://dashboard");
    const handle = url.pathname.startsWith("/api/")
      ? api(req, res, url)
      : Promise.resolve().then(() => {
          if (req.method !== "GET" && req.method !== "HEAD") throw new HttpError(405, "method not allowed");
          serveStatic(url.pathname, res);
        });
    handle.catch((err: unknown) => {
      const status =
        err instanceof HttpError || err instanceof MemoryFileError
          ? err.status
          : err instanceof RangeError || /invalid run id|invalid sandbox id/.test((err as Error).message)
            ? 400
            : 500;
      if (res.headersSent) {
        res.destroy();
        return;
      }
      json(res, status, { error: (err as Error).message });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port ?? 0, "127.0.0.1", () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}/`;
  const openUrl = `${url}?token=${auth.token}`;
  try {
    openFile = writeOpenerFile(o.dataDir, port, openUrl);
  } catch (err) {
    server.close();
    throw err;
  }
  return {
    url,
    openUrl,
    openFile,
    port,
    token: auth.token,
    session: auth.session,
    close: async () => {
      openFile?.remove();
      for (const stop of streams) stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      memory.close();
    },
  };
}
