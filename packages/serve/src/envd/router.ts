// The sandbox address (E2B_SANDBOX_URL): every data-plane request names its sandbox and port in
// the E2b-Sandbox-Id / E2b-Sandbox-Port headers (or a `PORT-ID.domain` Host with wildcard DNS)
// and carries the sandbox's access token for that port (access.ts). No token: 401; a token
// that is not the sandbox's — or a sandbox that does not exist — 403, so the answer never tells
// whether another tenant's sandbox exists. With the right token, a sandbox that is not running
// here gets the answer of a dead sandbox (502).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Cluster } from "../cluster.js";
import {
  ConnectError,
  parseEnvelope,
  parseUnary,
  readBody,
  toConnectError,
  writeStreamError,
  writeUnary,
  writeUnaryError,
} from "../connect/protocol.js";
import { FORWARDED_HEADER, forward } from "../forward.js";
import { interpreterHandler } from "../interpreter/service.js";
import type { ServeMetrics } from "../metrics.js";
import type { SandboxRuntime } from "../runtime.js";
import type { SandboxService } from "../service.js";
import type { SandboxRow } from "../store.js";
import { ENVD_PORT, INTERPRETER_PORT, missingTokenMessage, offeredTokens, tokenAdmits } from "./access.js";
import type { EnvdContext } from "./context.js";
import { download, HttpError, httpErrorOf, sendJsonError, upload } from "./files.js";
import * as fsService from "./filesystem.js";
import { forwardUpgrade, refuseUpgrade, upgradeToPort } from "./port-upgrade.js";
import { proxyToPort } from "./ports.js";
import * as processService from "./process.js";
import { admitSigned, isSignedFilesRequest, type SignedRequest, signedRequestOf } from "./signing.js";

export { ENVD_PORT, INTERPRETER_PORT };

export interface SandboxRouterOptions {
  service: SandboxService;
  metrics: ServeMetrics;
  /** Largest Connect request message (bytes). */
  maxMessageBytes?: number;
  /** Largest /files upload (bytes). */
  maxUploadBytes?: number;
  /** Set when nodes share the store: requests for other nodes' sandboxes are forwarded there. */
  cluster?: Cluster;
}

/**
 * Other nodes' running sandboxes, as read from the store a moment ago, so a stream of calls
 * through this node does not read the store for each. Safe to keep for a while: a sandbox's id,
 * tenant, token and node do not change while it lives (a paused one resumes on its own node),
 * and whatever did change — killed, lost — the owner answers for, or its silence does.
 */
class RemoteRows {
  private readonly rows = new Map<string, { row: SandboxRow; until: number }>();

  get(id: string): SandboxRow | undefined {
    const hit = this.rows.get(id);
    if (hit && hit.until > Date.now()) return hit.row;
    if (hit) this.rows.delete(id);
    return undefined;
  }

  remember(row: SandboxRow): void {
    if (this.rows.has(row.id)) return;
    if (this.rows.size >= 10_000) this.rows.clear();
    this.rows.set(row.id, { row, until: Date.now() + 2000 });
  }

  forget(id: string): void {
    this.rows.delete(id);
  }
}

/** Passes a request on to the node that runs its sandbox (false: it does not answer — a dead sandbox, 502). */
async function forwardToOwner(
  cluster: Cluster,
  owner: string,
  req: IncomingMessage,
  res: ServerResponse,
  metrics: ServeMetrics,
): Promise<boolean> {
  const peer = await cluster.peer(owner);
  if (peer?.state === "up") metrics.forwarded.inc({ plane: "sandbox", to: owner });
  const outcome =
    peer?.state === "up"
      ? await forward(req, res, {
          to: peer.sandboxUrl,
          from: cluster.node,
          nodeName: owner,
          track: (cancel) => cluster.track(owner, cancel),
        })
      : "unreachable";
  if (outcome === "answered") return true;
  req.resume();
  metrics.errors.inc({ api: "sandbox", code: "502" });
  sendJsonError(res, new HttpError(502, `The sandbox's node '${owner}' does not answer`), req);
  return false;
}

/** The port a request is for: the E2b-Sandbox-Port header, else a `PORT-ID.domain` Host, else envd's. */
function portOf(req: IncomingMessage): number {
  const h = req.headers["e2b-sandbox-port"];
  if (typeof h === "string" && h !== "") return Number(h);
  const m = /^(\d+)-[a-z0-9]+\./.exec(String(req.headers.host ?? ""));
  return m ? Number(m[1]) : ENVD_PORT;
}

/**
 * The sandbox a request is for: the E2b-Sandbox-Id header, else a `PORT-ID.domain` Host, else
 * the access token alone (SDKs before 2.25 send no sandbox headers with /files and /health; the
 * token is unique to its sandbox).
 */
async function target(
  req: IncomingMessage,
  byToken: (t: string) => Promise<string | undefined>,
): Promise<string | undefined> {
  const id = req.headers["e2b-sandbox-id"];
  if (typeof id === "string" && id !== "") return id;
  const m = /^\d+-([a-z0-9]+)\./.exec(String(req.headers.host ?? ""));
  if (m) return m[1] as string;
  const token = req.headers["x-access-token"];
  return typeof token === "string" && token.length >= 16 ? await byToken(token) : undefined;
}

/** E2B's user from `Authorization: Basic base64(user:)`; the default user otherwise. */
function userOf(req: IncomingMessage): string {
  const h = req.headers.authorization;
  if (typeof h !== "string" || !h.startsWith("Basic ")) return "user";
  const decoded = Buffer.from(h.slice(6), "base64").toString("utf8");
  const name = decoded.split(":")[0] ?? "";
  return name || "user";
}

function mediaType(req: IncomingMessage): string {
  return String(req.headers["content-type"] ?? "")
    .split(";")[0]
    ?.trim()
    .toLowerCase() as string;
}

/** Where getHost traffic goes: an answer of its own, another node, or this node's sandbox. */
type PortTarget =
  | { kind: "error"; status: number; message: string; sandboxId: string }
  | { kind: "forward"; row: SandboxRow; cluster: Cluster }
  | { kind: "local"; runtime: SandboxRuntime; sandboxId: string; maskRequestHost?: string };

export function createSandboxRouter(o: SandboxRouterOptions) {
  const maxMessage = o.maxMessageBytes ?? 16 * 1024 * 1024;
  const maxUpload = o.maxUploadBytes ?? 1024 * 1024 * 1024;
  const { service, metrics } = o;
  const remote = new RemoteRows();

  const notFound = (res: ServerResponse) => {
    metrics.errors.inc({ api: "sandbox", code: "502" });
    sendJsonError(res, new HttpError(502, "The sandbox was not found: it is not running"));
  };

  /** The row of a sandbox as the data plane sees it (this node's in memory, others' briefly cached). */
  const rowOf = async (id: string) =>
    service.liveRow(id) ?? remote.get(id) ?? (await service.store.sandbox(id));

  /** A paused sandbox with autoResume, resumed by this request (on its node); else as it was. */
  const resumedIfAsked = async (row: SandboxRow): Promise<SandboxRow> =>
    row.settings?.autoResume &&
    row.node === service.node &&
    (row.state === "paused" || (row.state === "running" && !service.runtime(row.id)?.alive))
      ? ((await service.resumeForTraffic(row).catch(() => undefined)) ?? row)
      : row;

  /**
   * getHost traffic: a port a process in the sandbox listens on. As E2B answers it: a sandbox that
   * is not there, 502 "The sandbox was not found"; without public traffic, no or a wrong traffic
   * token, 403. Shared by plain requests and upgrades (WebSockets).
   */
  const portTarget = async (req: IncomingMessage, port: number): Promise<PortTarget> => {
    let row: SandboxRow | undefined;
    let id: string | undefined;
    try {
      id = await target(req, async () => undefined);
      row = id ? await rowOf(id) : undefined;
    } catch (e) {
      return {
        kind: "error",
        status: 503,
        message: `the service's state does not answer: ${(e as Error).message}`,
        sandboxId: id ?? "",
      };
    }
    if (!id || !row || row.state === "killed")
      return { kind: "error", status: 502, message: "The sandbox was not found", sandboxId: id ?? "" };
    if (
      row.settings?.network.allowPublicTraffic !== true &&
      !tokenAdmits(offeredTokens(req, port), port, row.token)
    )
      return {
        kind: "error",
        status: 403,
        message: `port ${port} of the sandbox needs its traffic access token: send its trafficAccessToken in the 'e2b-traffic-access-token' header`,
        sandboxId: id,
      };
    if (row.state === "lost")
      return {
        kind: "error",
        status: 502,
        message: `The sandbox was lost: ${row.endReason ?? "it stopped"}`,
        sandboxId: id,
      };
    if (row.node !== service.node && o.cluster && req.headers[FORWARDED_HEADER] === undefined) {
      if (row.state === "running") remote.remember(row);
      return { kind: "forward", row, cluster: o.cluster };
    }
    row = await resumedIfAsked(row);
    const rt = service.runtime(row.id);
    if (row.state !== "running" || !rt?.alive)
      return {
        kind: "error",
        status: 502,
        message: row.state === "paused" ? "The sandbox is paused" : "The sandbox was not found",
        sandboxId: id,
      };
    const mask = row.settings?.network.maskRequestHost;
    return { kind: "local", runtime: rt, sandboxId: id, ...(mask ? { maskRequestHost: mask } : {}) };
  };

  const userPort = async (req: IncomingMessage, res: ServerResponse, port: number): Promise<void> => {
    const t = await portTarget(req, port);
    if (t.kind === "error") {
      req.resume();
      metrics.errors.inc({ api: "sandbox", code: String(t.status) });
      const text = JSON.stringify({ message: t.message, sandboxId: t.sandboxId, code: t.status });
      res.writeHead(t.status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(text),
      });
      res.end(text);
      return;
    }
    if (t.kind === "forward") {
      if (!(await forwardToOwner(t.cluster, t.row.node, req, res, metrics))) remote.forget(t.row.id);
      return;
    }
    await proxyToPort({ ...t, port, req, res });
  };

  /** An Upgrade request (WebSocket): only to a port of the sandbox's own processes. */
  const upgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    socket.on("error", () => {});
    const port = portOf(req);
    if (
      !Number.isInteger(port) ||
      port <= 0 ||
      port >= 65536 ||
      port === ENVD_PORT ||
      port === INTERPRETER_PORT
    ) {
      refuseUpgrade(socket, 400, {
        message: "upgrades go to a port a process in the sandbox listens on",
        code: 400,
      });
      return;
    }
    const t = await portTarget(req, port);
    if (t.kind === "error") {
      metrics.errors.inc({ api: "sandbox", code: String(t.status) });
      refuseUpgrade(socket, t.status, { message: t.message, sandboxId: t.sandboxId, code: t.status });
      return;
    }
    if (t.kind === "forward") {
      const peer = await t.cluster.peer(t.row.node);
      const sent =
        peer?.state === "up" &&
        (await forwardUpgrade({ to: peer.sandboxUrl, from: t.cluster.node, req, socket, head }));
      if (sent) metrics.forwarded.inc({ plane: "sandbox", to: t.row.node });
      else {
        remote.forget(t.row.id);
        refuseUpgrade(socket, 502, {
          message: `The sandbox's node '${t.row.node}' does not answer`,
          code: 502,
        });
      }
      return;
    }
    await upgradeToPort({ ...t, port, req, socket, head });
  };

  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const store = service.store;
    const port = portOf(req);
    if (
      Number.isInteger(port) &&
      port > 0 &&
      port < 65536 &&
      port !== ENVD_PORT &&
      port !== INTERPRETER_PORT
    ) {
      await userPort(req, res, port);
      return;
    }
    // A request without a token for its port is refused before anything is looked up.
    const offered = offeredTokens(req, port);
    const url = new URL(req.url ?? "/", "http://sandbox");
    // A signed /files URL (downloadUrl / uploadUrl) stands in for the token: signing.ts.
    const signedFiles = offered.length === 0 && port === ENVD_PORT && isSignedFilesRequest(url);
    if (offered.length === 0 && !signedFiles) {
      req.resume();
      metrics.errors.inc({ api: "sandbox", code: "401" });
      sendJsonError(res, new HttpError(401, missingTokenMessage(port)));
      return;
    }
    let id: string | undefined;
    let row: SandboxRow | undefined;
    let signed: SignedRequest | undefined;
    try {
      id = await target(req, async (token) => (await store.sandboxByToken(token))?.id);
      row = id ? await rowOf(id) : undefined;
      if (row && !signedFiles && tokenAdmits(offered, port, row.token)) row = await resumedIfAsked(row);
      if (signedFiles) {
        signed = signedRequestOf(req, url);
        // Without a sandbox named in the request, the signature itself says whose it is.
        row = admitSigned(signed, id ? (row ? [row] : []) : service.runningRows());
        id = row.id;
      }
    } catch (e) {
      if (e instanceof HttpError) {
        req.resume();
        metrics.errors.inc({ api: "sandbox", code: String(e.status) });
        sendJsonError(res, e, req);
        return;
      }
      // The state (a database) does not answer: an error in the usual shape, not a hang or a 500.
      req.resume();
      metrics.errors.inc({ api: "sandbox", code: "503" });
      sendJsonError(
        res,
        new HttpError(503, `the service's state does not answer: ${(e as Error).message}`),
        req,
      );
      return;
    }
    if (!id || !row || (!signed && !tokenAdmits(offered, port, row.token))) {
      req.resume();
      metrics.errors.inc({ api: "sandbox", code: "403" });
      sendJsonError(res, new HttpError(403, "the access token is not valid for this sandbox"));
      return;
    }
    if (row.state !== "running" && row.state !== "lost") {
      req.resume();
      notFound(res);
      return;
    }
    if (row.state === "lost") {
      // Only the sandbox's own clients (they hold its token) learn why it is gone.
      req.resume();
      metrics.errors.inc({ api: "sandbox", code: "502" });
      sendJsonError(res, new HttpError(502, `The sandbox was lost: ${row.endReason ?? "it stopped"}`));
      return;
    }
    if (row.node !== service.node && o.cluster && req.headers[FORWARDED_HEADER] === undefined) {
      remote.remember(row);
      if (!(await forwardToOwner(o.cluster, row.node, req, res, metrics))) remote.forget(row.id);
      return;
    }
    const rt = service.runtime(row.id);
    if (!rt?.alive) {
      req.resume();
      notFound(res);
      return;
    }
    const ctx: EnvdContext = {
      runtime: rt,
      row,
      user: signed ? signed.username || "user" : userOf(req),
      metrics,
      audit: (event, detail) =>
        void store
          .audit({ tenant: row.tenantId, sandbox: row.id, event, ...(detail ? { detail } : {}) })
          .catch(() => {}),
    };
    if (port === INTERPRETER_PORT) {
      await interpreterHandler(ctx, url, req, res).catch((e) => sendJsonError(res, httpErrorOf(e)));
      return;
    }
    if (port !== ENVD_PORT) {
      req.resume();
      sendJsonError(res, new HttpError(400, `not a port: ${req.headers["e2b-sandbox-port"]}`));
      return;
    }
    const path = url.pathname;
    if (path === "/health") {
      req.resume();
      res.writeHead(204).end();
      return;
    }
    if (path === "/files") {
      try {
        if (req.method === "GET") await download(ctx, url, res);
        else if (req.method === "POST") await upload(ctx, url, req, res, maxUpload);
        else throw new HttpError(405, "method not allowed");
      } catch (e) {
        const err = httpErrorOf(e);
        metrics.errors.inc({ api: "files", code: String(err.status) });
        sendJsonError(res, err, req);
      }
      return;
    }
    const m = /^\/(process\.Process|filesystem\.Filesystem)\/([A-Za-z]+)$/.exec(path);
    if (!m) {
      req.resume();
      sendJsonError(res, new HttpError(404, `no such endpoint: ${path}`));
      return;
    }
    const service_ = m[1] === "process.Process" ? processService : fsService;
    const method = m[2] as string;
    const streaming = service_.STREAMING.has(method);
    const fail = (e: unknown) => {
      const err = toConnectError(e);
      metrics.errors.inc({ api: "connect", code: err.code });
      if (streaming) writeStreamError(res, err);
      else writeUnaryError(res, err);
    };
    try {
      if (req.method !== "POST") throw new ConnectError("unimplemented", "Connect calls are POST requests");
      const type = mediaType(req);
      const want = streaming ? "application/connect+json" : "application/json";
      if (type !== want) {
        req.resume();
        res.writeHead(415, { "content-type": "text/plain" }).end(`content type must be ${want}`);
        return;
      }
      const body = await readBody(req, maxMessage);
      const msg = streaming ? parseEnvelope(body) : parseUnary(body);
      if (streaming) {
        if (service_ === processService) await processService.startOrError(ctx, method, msg, req, res);
        else await fsService.watchDir(ctx, msg, req, res);
      } else {
        writeUnary(res, await service_.unary(ctx, method, msg));
      }
    } catch (e) {
      req.resume();
      fail(e);
    }
  };
  return Object.assign(handler, { upgrade });
}
