// `hands serve` as a library: the store, the keys, the service and its two HTTP servers — the
// management API and the sandbox (data-plane) address.
import { statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, resolve } from "node:path";
import type { Duplex } from "node:stream";
import { createApiRouter } from "./api.js";
import { Cluster } from "./cluster.js";
import { createSandboxRouter } from "./envd/router.js";
import { Keys } from "./keys.js";
import { createMetrics, type ServeMetrics } from "./metrics.js";
import { prepareDataFolders, SANDBOX_GID } from "./sandbox-users.js";
import { SandboxService, type ServiceOptions } from "./service.js";
import type { Store } from "./store.js";
import { openStore } from "./store-open.js";
import { DEFAULT_TEMPLATE_QUOTAS, TemplateBuilds, type TemplateQuotas } from "./templates/builds.js";
import { createTemplateRouter } from "./templates/routes.js";

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
  /** postgres://… to share the state with other nodes; SQLite in dataDir when absent. */
  database?: string;
  /** With a shared database: where the other nodes reach this one (default: the bound addresses). */
  advertise?: { apiUrl?: string; sandboxUrl?: string };
  /** With a shared database: heartbeat interval and the silence after which a node is dead. */
  heartbeatMs?: number;
  deadAfterMs?: number;
  /** Tenants' template builds (E2B's Template API): quotas, the mirrors a build may reach, the OCI runtime (default runsc). */
  templateQuotas?: Partial<TemplateQuotas>;
  templateBuildAllow?: string[];
  templateRuntime?: string;
}

export interface RunningServe {
  apiUrl: string;
  sandboxUrl: string;
  store: Store;
  keys: Keys;
  service: SandboxService;
  metrics: ServeMetrics;
  /** Present when nodes share the store. */
  cluster?: Cluster;
  close(): Promise<void>;
}

/** Sockets live at <dataDir>/sandboxes/<20-char folder name>/.hands-agent/agent.sock: Unix paths stop at 107 bytes. */
const MAX_DATA_DIR_LENGTH = 107 - "/sandboxes/".length - 20 - "/.hands-agent/agent.sock".length;

function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  at: { host: string; port: number },
  headersTimeoutMs: number,
  upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => Promise<void>,
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
  // WebSockets through getHost (envd/port-upgrade.ts); without a listener Node drops upgrades.
  if (upgrade)
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      answered.add(req.socket);
      upgrade(req, socket, head).catch(() => socket.destroy());
    });
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
 * The data folders are private (sandbox-users.ts); as root, the sandboxes' uids — which
 * bubblewrap runs as — must still be able to pass through every folder above them.
 */
function prepareDataDir(dataDir: string, sandboxGid: number | undefined): void {
  const dir = resolve(dataDir);
  prepareDataFolders(dir, sandboxGid);
  if (sandboxGid === undefined) return;
  for (let d = dirname(dir); ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0)
      throw new Error(
        `the sandboxes' users cannot pass through ${d}: choose a data folder outside it (e.g. /var/lib/hands/serve) or chmod o+x ${d}`,
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
  prepareDataDir(o.dataDir, process.getuid?.() === 0 ? (o.sandboxUid ?? SANDBOX_GID) : undefined);
  const store = await openStore({ dataDir: o.dataDir, database: o.database });
  if (store.shared && !o.node) {
    await store.close();
    throw new Error("a shared database needs a node name for each node (--node NAME)");
  }
  const node = o.node ?? "local";
  const keys = new Keys(store, store.shared ? { node } : {});
  let service: SandboxService | undefined;
  const metrics = createMetrics({
    countByState: () => store.countByState(),
    queueLength: () => service?.queue.waiting ?? 0,
    slotsInUse: () => service?.queue.used ?? 0,
  });
  const servers: Server[] = [];
  let cluster: Cluster | undefined;
  let templateBuilds: TemplateBuilds | undefined;
  try {
    // Hearing changes of keys and limits starts before this node registers (and serves).
    await keys.start();
    const headersTimeout = o.headersTimeoutMs ?? 10_000;
    // Both addresses are bound before the node registers (what it advertises must answer); until
    // the routers exist, requests get a 503.
    let apiRoute: Handler | undefined;
    let sandboxRoute: ReturnType<typeof createSandboxRouter> | undefined;
    const api = await listen(
      (req, res) => (apiRoute ?? starting)(req, res),
      o.apiListen ?? { host: "127.0.0.1", port: 0 },
      headersTimeout,
    );
    servers.push(api);
    const sandbox = await listen(
      (req, res) => (sandboxRoute ?? starting)(req, res),
      o.sandboxListen ?? { host: "127.0.0.1", port: 0 },
      headersTimeout,
      async (req, socket, head) => {
        if (sandboxRoute) await sandboxRoute.upgrade(req, socket, head);
        else socket.destroy();
      },
    );
    servers.push(sandbox);
    if (store.shared) {
      cluster = new Cluster({
        store,
        node,
        apiUrl: o.advertise?.apiUrl ?? reachableUrl(api),
        sandboxUrl: o.advertise?.sandboxUrl ?? reachableUrl(sandbox),
        ...(o.heartbeatMs ? { heartbeatMs: o.heartbeatMs } : {}),
        ...(o.deadAfterMs ? { deadAfterMs: o.deadAfterMs } : {}),
      });
      await cluster.join();
    }
    // Only once the name is ours: a second process under a live node's name must not touch its
    // rows (the service's reaper starts with it).
    const builds = new TemplateBuilds(
      o.dataDir,
      { ...DEFAULT_TEMPLATE_QUOTAS, ...(o.templateQuotas ?? {}) },
      o.templateBuildAllow,
      o.templateRuntime ?? "runsc",
    );
    templateBuilds = builds;
    service = new SandboxService({
      ...o,
      node,
      store,
      dataDir: o.dataDir,
      metrics,
      tenantTemplate: (tenantId, name) => builds.spec(tenantId, name),
    });
    const svc = service;
    await svc.recover();
    apiRoute = createApiRouter({
      service: svc,
      keys,
      metrics,
      ...(cluster ? { cluster } : {}),
      templates: createTemplateRouter({ builds, keys, store, service: svc }),
    });
    sandboxRoute = createSandboxRouter({
      service: svc,
      metrics,
      ...(cluster ? { cluster } : {}),
      ...(o.maxUploadBytes ? { maxUploadBytes: o.maxUploadBytes } : {}),
      ...(o.maxMessageBytes ? { maxMessageBytes: o.maxMessageBytes } : {}),
    });
    svc.warmUp();
    const c = cluster;
    return {
      apiUrl: urlOf(api),
      sandboxUrl: urlOf(sandbox),
      store,
      keys,
      service: svc,
      metrics,
      ...(c ? { cluster: c } : {}),
      async close() {
        builds.close();
        for (const s of servers) s.closeAllConnections();
        await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
        await svc.close();
        await c?.leave().catch(() => {});
        await keys.close();
        await store.close();
      },
    };
  } catch (e) {
    for (const s of servers) s.close();
    templateBuilds?.close();
    await service?.close();
    await cluster?.leave().catch(() => {});
    await keys.close();
    await store.close();
    throw e;
  }
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

async function starting(req: IncomingMessage, res: ServerResponse): Promise<void> {
  req.resume();
  res.writeHead(503, { "content-type": "application/json" });
  res.end(JSON.stringify({ code: 503, message: "the service is starting" }));
}

/** An address other nodes can use: a wildcard bind is not one. */
function reachableUrl(server: Server): string {
  const a = server.address() as AddressInfo;
  if (a.address === "0.0.0.0" || a.address === "::")
    throw new Error(
      "a node bound to every interface must say where the other nodes reach it (--advertise-api URL --advertise-sandbox URL)",
    );
  return urlOf(server);
}
