// The management API (E2B_API_URL): E2B's REST endpoints for sandboxes, authenticated with
// X-API-Key, errors as {code, message}. The contract is packages/serve/openapi.yml.
import type { IncomingMessage, ServerResponse } from "node:http";
import { BodyError, readJsonObject } from "./body.js";
import type { Cluster } from "./cluster.js";
import { trafficTokenOf } from "./envd/access.js";
import { FORWARDED_HEADER, forward } from "./forward.js";
import type { Keys } from "./keys.js";
import type { ServeMetrics } from "./metrics.js";
import { ApiError, type ForkResult, type SandboxService } from "./service.js";
import type { SnapshotRecord } from "./snapshots.js";
import type { SandboxRow, SandboxState, Tenant } from "./store.js";

/**
 * The envd version we present: the newest whose features the SDK gates and we implement —
 * octet-stream uploads, closeStdin, file metadata (0.6.2), entry info in watch events (0.6.3),
 * watches on network mounts (0.6.4) — so the SDK refuses nothing newer on our behalf.
 */
export const ENVD_VERSION = "0.6.4";
const MAX_BODY_BYTES = 1024 * 1024;
const PAGE_MAX = 100;

function send(
  res: ServerResponse,
  status: number,
  body?: unknown,
  headers: Record<string, string> = {},
): void {
  if (body === undefined) {
    res.writeHead(status, headers).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  try {
    return await readJsonObject(req, MAX_BODY_BYTES);
  } catch (e) {
    if (e instanceof BodyError)
      throw new ApiError(
        e.kind === "too_large" ? 413 : 400,
        e.kind === "too_large" ? "request body is too large" : e.message,
      );
    throw e;
  }
}

function sandboxBody(row: SandboxRow): Record<string, unknown> {
  return {
    templateID: row.templateId,
    alias: row.templateId,
    sandboxID: row.id,
    clientID: "hands",
    envdVersion: ENVD_VERSION,
    envdAccessToken: row.token,
    // Every sandbox is created without public traffic: its other ports need this token.
    trafficAccessToken: trafficTokenOf(row.token),
    domain: null,
  };
}

/** Hands extensions beside E2B's fields (SDKs ignore fields they do not know). */
function handsFields(row: SandboxRow, tenant: Tenant): Record<string, unknown> {
  return { tenantName: tenant.name, backend: row.backend, node: row.node };
}

function listed(row: SandboxRow, tenant: Tenant): Record<string, unknown> {
  return {
    ...handsFields(row, tenant),
    templateID: row.templateId,
    alias: row.templateId,
    sandboxID: row.id,
    clientID: "hands",
    startedAt: new Date(row.startedAt).toISOString(),
    endAt: new Date(row.endAt).toISOString(),
    cpuCount: row.cpus,
    memoryMB: row.memoryMB,
    diskSizeMB: 0,
    metadata: row.metadata,
    state: row.state,
    envdVersion: ENVD_VERSION,
    volumeMounts: [],
  };
}

function detail(row: SandboxRow, tenant: Tenant): Record<string, unknown> {
  return {
    ...listed(row, tenant),
    envdAccessToken: row.token,
    trafficAccessToken: trafficTokenOf(row.token),
    domain: null,
    allowInternetAccess: row.internet,
    network: networkBody(row),
    lifecycle: { onTimeout: row.autoPause ? "pause" : "kill", autoResume: row.settings?.autoResume === true },
  };
}

function networkBody(row: SandboxRow): Record<string, unknown> {
  const n = row.settings?.network;
  return {
    allowPublicTraffic: n?.allowPublicTraffic === true,
    ...(n?.allowOut.length ? { allowOut: n.allowOut } : {}),
    ...(n?.denyOut.length ? { denyOut: n.denyOut } : {}),
    ...(n?.maskRequestHost ? { maskRequestHost: n.maskRequestHost } : {}),
  };
}

/** `k=v&k2=v2` as the SDK sends it (each key and value URL-encoded once more). */
function metadataFilter(raw: string | null): Record<string, string> {
  if (!raw) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    try {
      out[decodeURIComponent(k)] = decodeURIComponent(v);
    } catch {
      throw new ApiError(400, "metadata filter is not properly URL-encoded");
    }
  }
  return out;
}

function states(raw: string | null): SandboxState[] {
  // Lost sandboxes (their node or agent died) are listed until the tenant kills them.
  if (!raw) return ["running", "paused", "lost"];
  const list = raw.split(",").map((s) => s.trim());
  for (const s of list)
    if (s !== "running" && s !== "paused" && s !== "lost") throw new ApiError(400, `unknown state '${s}'`);
  return list as SandboxState[];
}

function cursorOf(token: string | null): { startedAt: number; id: string } | undefined {
  if (!token) return undefined;
  try {
    const v = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as { s?: unknown; i?: unknown };
    if (typeof v.s === "number" && typeof v.i === "string") return { startedAt: v.s, id: v.i };
  } catch {}
  throw new ApiError(400, "nextToken is not valid");
}

async function list(
  service: SandboxService,
  tenant: Tenant,
  url: URL,
  res: ServerResponse,
  legacy: boolean,
): Promise<void> {
  const meta = metadataFilter(url.searchParams.get("metadata"));
  const wanted = legacy ? (["running"] as SandboxState[]) : states(url.searchParams.get("state"));
  const limitRaw = url.searchParams.get("limit");
  const limit = limitRaw === null ? PAGE_MAX : Number(limitRaw);
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_MAX)
    throw new ApiError(400, `limit must be 1..${PAGE_MAX}`);
  const template = url.searchParams.get("template");
  const matches = (r: SandboxRow) =>
    Object.entries(meta).every(([k, v]) => r.metadata[k] === v) && (!template || r.templateId === template);
  let cursor = cursorOf(url.searchParams.get("nextToken"));
  const page: SandboxRow[] = [];
  let more = false;
  // Filter while paging through the store, so a page is full even when most rows do not match.
  for (;;) {
    const batch = await service.store.listSandboxes(tenant.id, wanted, cursor, 200);
    for (const r of batch) {
      if (!matches(r)) continue;
      if (page.length === limit) {
        more = true;
        break;
      }
      page.push(r);
    }
    if (more || batch.length < 200) break;
    const last = batch[batch.length - 1] as SandboxRow;
    cursor = { startedAt: last.startedAt, id: last.id };
  }
  const headers: Record<string, string> = {};
  const last = page[page.length - 1];
  if (more && last)
    headers["x-next-token"] = Buffer.from(JSON.stringify({ s: last.startedAt, i: last.id })).toString(
      "base64url",
    );
  send(
    res,
    200,
    page.map((r) => listed(r, tenant)),
    headers,
  );
}

/** start/end of E2B's metrics query (Unix seconds), checked. */
function metricsWindow(url: URL): { start?: number; end?: number } {
  const out: { start?: number; end?: number } = {};
  for (const name of ["start", "end"] as const) {
    const v = url.searchParams.get(name);
    if (v === null) continue;
    if (!/^\d{1,12}$/.test(v)) throw new ApiError(400, `${name} must be a Unix time in seconds`);
    out[name] = Number(v);
  }
  if (out.start !== undefined && out.end !== undefined && out.start > out.end)
    throw new ApiError(400, "start must not be after end");
  return out;
}

const AUDIT_MAX = 1000;

/** Hands extension: a sandbox's audit trail, for the tenant that owns it. */
async function auditBody(
  service: SandboxService,
  tenant: Tenant,
  id: string,
  url: URL,
): Promise<Record<string, unknown>> {
  const raw = url.searchParams.get("limit");
  const limit = raw === null ? 200 : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_MAX)
    throw new ApiError(400, `limit must be 1..${AUDIT_MAX}`);
  const entries = await service.auditTrail(tenant, id, limit);
  return {
    sandboxID: id,
    entries: entries.map((e) => ({ time: new Date(e.time).toISOString(), event: e.event, detail: e.detail })),
  };
}

/** Management calls that change a running or paused sandbox go to the node that has it. */
const OWNER_ACTIONS = new Set([
  "DELETE",
  "pause",
  "resume",
  "connect",
  "metrics",
  "fork",
  "snapshots",
  "network",
]);

function snapshotInfo(r: SnapshotRecord): Record<string, unknown> {
  return { snapshotID: r.id, names: r.names };
}

/** E2B's SandboxForkResult: exactly one of sandbox and error. */
function forkResult(r: ForkResult): Record<string, unknown> {
  if ("row" in r) return { sandbox: sandboxBody(r.row) };
  return { error: { code: r.error.status, message: r.error.message } };
}

/** GET /snapshots: the tenant's snapshots on this node, newest first, paged like the sandbox list. */
function listSnapshots(service: SandboxService, tenant: Tenant, url: URL, res: ServerResponse): void {
  const limitRaw = url.searchParams.get("limit");
  const limit = limitRaw === null ? PAGE_MAX : Number(limitRaw);
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_MAX)
    throw new ApiError(400, `limit must be 1..${PAGE_MAX}`);
  const token = url.searchParams.get("nextToken");
  const offset = token === null ? 0 : Number(Buffer.from(token, "base64url").toString("utf8"));
  if (!Number.isInteger(offset) || offset < 0) throw new ApiError(400, "nextToken is not valid");
  const all = service.snapshots.list(tenant.id, {
    sandboxId: url.searchParams.get("sandboxID") ?? undefined,
    name: url.searchParams.get("name") ?? undefined,
  });
  const page = all.slice(offset, offset + limit);
  const headers: Record<string, string> =
    offset + limit < all.length
      ? { "x-next-token": Buffer.from(String(offset + limit)).toString("base64url") }
      : {};
  send(res, 200, page.map(snapshotInfo), headers);
}

export function createApiRouter(o: {
  service: SandboxService;
  keys: Keys;
  metrics: ServeMetrics;
  /** Set when nodes share the store. */
  cluster?: Cluster;
  /** E2B's template API and the other endpoints of templates/routes.ts (true: answered). */
  templates?: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;
}) {
  const { service, keys, metrics, cluster } = o;

  /**
   * Forwards the call to the sandbox's node if another node has it: true when answered there. A
   * kill whose node does not answer is done here (the row says killed; the node stops what is
   * left when it sees that); other calls then fail with 502.
   */
  const toOwner = async (
    req: IncomingMessage,
    res: ServerResponse,
    tenant: Tenant,
    id: string,
    action: string,
  ): Promise<boolean> => {
    if (!cluster || req.headers[FORWARDED_HEADER] !== undefined || !OWNER_ACTIONS.has(action)) return false;
    const row = await service.store.sandbox(id);
    if (!row || row.tenantId !== tenant.id || row.node === service.node) return false;
    if (row.state !== "running" && row.state !== "paused") return false;
    const peer = await cluster.peer(row.node);
    if (peer?.state === "up") metrics.forwarded.inc({ plane: "api", to: row.node });
    const outcome =
      peer?.state === "up"
        ? await forward(req, res, {
            to: peer.apiUrl,
            from: cluster.node,
            nodeName: row.node,
            track: (cancel) => cluster.track(row.node, cancel),
          })
        : "unreachable";
    if (outcome === "answered") return true;
    if (action === "DELETE") return false;
    throw new ApiError(502, `sandbox '${id}' is on node '${row.node}', which does not answer`);
  };

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://api");
    const path = url.pathname;
    try {
      if (req.method === "GET" && path === "/health") {
        send(res, 200, { status: "ok" });
        return;
      }
      if (req.method === "GET" && path === "/metrics") {
        const text = await metrics.registry.metrics();
        res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text);
        return;
      }
      if (await o.templates?.(req, res, url)) return;
      const key = req.headers["x-api-key"];
      const tenant = await keys.verify(typeof key === "string" ? key : undefined);
      if (!tenant) throw new ApiError(401, "Invalid API key");
      const abort = new AbortController();
      res.once("close", () => abort.abort());
      const audit = /^\/hands\/v1\/sandboxes\/([a-z0-9]{1,64})\/audit$/.exec(path);
      if (audit) {
        if (req.method !== "GET") throw new ApiError(405, "method not allowed");
        send(res, 200, await auditBody(service, tenant, audit[1] as string, url));
        return;
      }
      if (path === "/snapshots") {
        if (req.method !== "GET") throw new ApiError(405, "method not allowed");
        listSnapshots(service, tenant, url, res);
        return;
      }
      const template = /^\/templates\/([^/]{1,200})$/.exec(path);
      if (template) {
        // The SDK deletes a snapshot as the template it is in E2B (deleteSnapshot).
        if (req.method !== "DELETE") throw new ApiError(405, "method not allowed");
        let id: string;
        try {
          id = decodeURIComponent(template[1] as string);
        } catch {
          throw new ApiError(400, "the template id is not properly URL-encoded");
        }
        await service.deleteSnapshot(tenant, id);
        send(res, 204);
        return;
      }
      const m = /^(?:\/v2)?\/sandboxes(?:\/([a-z0-9]{1,64}))?(?:\/([a-z]+))?$/.exec(path);
      if (!m) throw new ApiError(404, `no such endpoint: ${req.method} ${path}`);
      const [, id, action] = m;
      const v2 = path.startsWith("/v2/");
      if (!id) {
        if (req.method === "POST") {
          const row = await service.create(tenant, await jsonBody(req), abort.signal);
          send(res, 201, sandboxBody(row));
        } else if (req.method === "GET") await list(service, tenant, url, res, !v2);
        else throw new ApiError(405, "method not allowed");
        return;
      }
      if (await toOwner(req, res, tenant, id, action ?? req.method ?? "")) return;
      if (!action) {
        if (req.method === "GET") send(res, 200, detail(await service.get(tenant, id), tenant));
        else if (req.method === "DELETE") {
          await service.kill(tenant, id);
          send(res, 204);
        } else throw new ApiError(405, "method not allowed");
        return;
      }
      if (action === "metrics") {
        if (req.method !== "GET") throw new ApiError(405, "method not allowed");
        send(res, 200, await service.sandboxMetrics(tenant, id, metricsWindow(url)));
        return;
      }
      if (action === "network") {
        if (req.method !== "PUT") throw new ApiError(405, "method not allowed");
        await service.updateNetwork(tenant, id, await jsonBody(req));
        send(res, 204);
        return;
      }
      if (req.method !== "POST") throw new ApiError(405, "method not allowed");
      const body = await jsonBody(req);
      switch (action) {
        case "timeout":
          if (body.timeout === undefined) throw new ApiError(400, "timeout is required");
          await service.setTimeout(tenant, id, body.timeout);
          send(res, 204);
          return;
        case "refreshes":
          await service.setTimeout(tenant, id, body.duration ?? 60);
          send(res, 204);
          return;
        case "pause":
          await service.pause(tenant, id, body.memory);
          send(res, 204);
          return;
        case "resume": {
          if ((await service.get(tenant, id)).state === "running")
            throw new ApiError(409, `sandbox '${id}' is already running`);
          send(res, 201, sandboxBody(await service.connect(tenant, id, body.timeout, abort.signal)));
          return;
        }
        case "connect": {
          const wasRunning = (await service.get(tenant, id)).state === "running";
          send(
            res,
            wasRunning ? 200 : 201,
            sandboxBody(await service.connect(tenant, id, body.timeout, abort.signal)),
          );
          return;
        }
        case "fork": {
          const results = await service.fork(tenant, id, body, abort.signal);
          send(res, 201, results.map(forkResult));
          return;
        }
        case "snapshots":
          send(res, 201, snapshotInfo(await service.createSnapshot(tenant, id, body.name)));
          return;
        default:
          throw new ApiError(404, `no such endpoint: ${req.method} ${path}`);
      }
    } catch (e) {
      const err = e instanceof ApiError ? e : new ApiError(500, (e as Error).message);
      metrics.errors.inc({ api: "management", code: String(err.status) });
      req.resume();
      if (res.headersSent) {
        res.destroy();
        return;
      }
      send(res, err.status, {
        code: err.status,
        message: err.message,
        ...(err.errorCode ? { error_code: err.errorCode } : {}),
      });
    }
  };
}
