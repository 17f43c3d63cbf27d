// `hands serve` as a library: the store, the keys, the service and its two HTTP servers — the
// management API and the sandbox (data-plane) address.
import { chmodSync, mkdirSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, resolve } from "node:path";
import { createApiRouter } from "./api.js";
import { createSandboxRouter } from "./envd/router.js";
import { Keys } from "./keys.js";
import { createMetrics, type ServeMetrics } from "./metrics.js";
import { SandboxService, type ServiceOptions } from "./service.js";
import { Store } from "./store.js";

export interface ServeOptions extends Omit<ServiceOptions, "store" | "dataDir" | "metrics"> {
  /** Folder for the state database and the sandboxes' files. */
  dataDir: string;
  /** host:port of the management API (port 0: any free port). */
  apiListen?: { host: string; port: number };
  /** host:port of the sandbox address. */
  sandboxListen?: { host: string; port: number };
  maxUploadBytes?: number;
  /** Largest Connect request message on the sandbox address (bytes). */
  maxMessageBytes?: number;
  /** Time a client has to send its request headers (slow clients are cut off). */
  headersTimeoutMs?: number;
}

export interface RunningServe {
  apiUrl: string;
  sandboxUrl: string;
  store: Store;
  keys: Keys;
  service: SandboxService;
  metrics: ServeMetrics;
  close(): Promise<void>;
}

/** Sockets live at <dataDir>/sandboxes/<20-char id>/.hands-agent/agent.sock: Unix paths stop at 107 bytes. */
const MAX_DATA_DIR_LENGTH = 107 - "/sandboxes/".length - 20 - "/.hands-agent/agent.sock".length;

function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  at: { host: string; port: number },
  headersTimeoutMs: number,
): Promise<Server> {
  const server = createServer(
    { connectionsCheckingInterval: Math.min(1000, headersTimeoutMs) },
    (req, res) => {
      handler(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    },
  );
  // Slow clients: headers must arrive in time (10 s by default); idle keep-alive connections close after 30 s.
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = 0;
  server.keepAliveTimeout = 30_000;
  // Node enforces headersTimeout only between check intervals and not for every partial
  // request: a connection that has not produced a whole request in time is closed here.
  const answered = new WeakSet<object>();
  server.on("request", (req: IncomingMessage) => answered.add(req.socket));
  server.on("connection", (socket) => {
    const timer = setTimeout(() => {
      if (!answered.has(socket)) socket.destroy();
    }, headersTimeoutMs);
    timer.unref();
    socket.once("close", () => clearTimeout(timer));
  });
  server.on("clientError", (_e, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(at.port, at.host, () => resolve(server));
  });
}

/**
 * As root, sandboxes run as an unprivileged uid that bubblewrap runs as: it must be able to pass
 * through every folder above its own (0711: pass, not list), or it cannot mount its files.
 */
function prepareDataDir(dataDir: string, sandboxUid: number | undefined): void {
  const dir = resolve(dataDir);
  mkdirSync(join(dir, "sandboxes"), { recursive: true, mode: 0o711 });
  chmodSync(dir, 0o711);
  chmodSync(join(dir, "sandboxes"), 0o711);
  if (sandboxUid === undefined) return;
  for (let d = dirname(dir); ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0)
      throw new Error(
        `the sandboxes' user (uid ${sandboxUid}) cannot pass through ${d}: choose a data folder outside it (e.g. /var/lib/hands/serve) or chmod o+x ${d}`,
      );
    if (d === dirname(d)) break;
  }
}

function urlOf(server: Server): string {
  const a = server.address() as AddressInfo;
  return `http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}`;
}

export async function startServe(o: ServeOptions): Promise<RunningServe> {
  if (o.dataDir.length > MAX_DATA_DIR_LENGTH)
    throw new Error(
      `data folder path is too long for the sandboxes' sockets (at most ${MAX_DATA_DIR_LENGTH} characters): ${o.dataDir}`,
    );
  prepareDataDir(o.dataDir, o.sandboxUid ?? (process.getuid?.() === 0 ? 65534 : undefined));
  const store = new Store(join(o.dataDir, "serve.db"));
  const keys = new Keys(store);
  let service: SandboxService | undefined;
  const metrics = createMetrics({
    countByState: () => store.countByState(),
    queueLength: () => service?.queue.waiting ?? 0,
    slotsInUse: () => service?.queue.used ?? 0,
  });
  service = new SandboxService({ ...o, store, dataDir: o.dataDir, metrics });
  service.recover();
  service.warmUp();
  const headersTimeout = o.headersTimeoutMs ?? 10_000;
  const api = await listen(
    createApiRouter({ service, keys, metrics }),
    o.apiListen ?? { host: "127.0.0.1", port: 0 },
    headersTimeout,
  );
  const sandbox = await listen(
    createSandboxRouter({
      service,
      metrics,
      ...(o.maxUploadBytes ? { maxUploadBytes: o.maxUploadBytes } : {}),
      ...(o.maxMessageBytes ? { maxMessageBytes: o.maxMessageBytes } : {}),
    }),
    o.sandboxListen ?? { host: "127.0.0.1", port: 0 },
    headersTimeout,
  );
  const svc = service;
  return {
    apiUrl: urlOf(api),
    sandboxUrl: urlOf(sandbox),
    store,
    keys,
    service: svc,
    metrics,
    async close() {
      api.closeAllConnections();
      sandbox.closeAllConnections();
      await Promise.all([new Promise((r) => api.close(r)), new Promise((r) => sandbox.close(r))]);
      await svc.close();
      store.close();
    },
  };
}
