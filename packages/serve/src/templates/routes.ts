// E2B's template endpoints on the management API (the SDK's Template.build and Template.exists,
// the CLI's `e2b template list|delete`), E2B's sandbox logs (`e2b sandbox logs`), and Hands'
// access tokens. A request is the tenant's by its API key (X-API-Key) or by an access token
// (Authorization: Bearer, access-tokens.ts); another tenant's templates answer 404.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createWriteStream, mkdirSync, renameSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { BodyError, readJsonObject } from "../body.js";
import type { Keys } from "../keys.js";
import { ApiError, type SandboxService } from "../service.js";
import type { Store, Tenant } from "../store.js";
import { accessTokenFor, bearerOf, verifyAccessToken } from "./access-tokens.js";
import type { TemplateBuilds } from "./builds.js";
import { parseE2bTemplate, StepError } from "./e2b-steps.js";
import type { TemplateRecord } from "./registry.js";

const UPLOAD_TTL_MS = 15 * 60_000;

function send(res: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    res.writeHead(status, { "content-length": 0 }).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

const iso = (ms: number) => new Date(ms).toISOString();

function listed(t: TemplateRecord): Record<string, unknown> {
  return {
    templateID: t.id,
    buildID: t.buildId,
    cpuCount: t.cpus,
    memoryMB: t.memoryMB,
    diskSizeMB: 0,
    public: false,
    aliases: t.names,
    names: t.names,
    createdAt: iso(t.createdAt),
    updatedAt: iso(t.updatedAt),
    createdBy: null,
    lastSpawnedAt: null,
    spawnCount: 0,
    buildCount: t.buildCount,
    envdVersion: "0.6.2",
    buildStatus: t.status,
  };
}

async function json(req: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  try {
    return await readJsonObject(req, limit);
  } catch (e) {
    if (e instanceof BodyError) throw new ApiError(e.kind === "too_large" ? 413 : 400, e.message);
    throw e;
  }
}

export interface TemplateRouterOptions {
  builds: TemplateBuilds;
  keys: Keys;
  store: Store;
  service: SandboxService;
}

/** Handles the request when it is one of these endpoints (true), else leaves it (false). */
export function createTemplateRouter(o: TemplateRouterOptions) {
  const { builds, keys, store, service } = o;
  // Upload links are signed by this process: they are used right after they are handed out.
  const secret = randomBytes(32);
  const sign = (tenant: string, hash: string, until: number) =>
    createHmac("sha256", secret).update(`${tenant}\n${hash}\n${until}`).digest("hex");

  const auth = async (req: IncomingMessage): Promise<Tenant> => {
    const key = req.headers["x-api-key"];
    const byKey = typeof key === "string" ? await keys.verify(key) : undefined;
    const tenant = byKey ?? (await verifyAccessToken(store, bearerOf(req.headers.authorization)));
    if (!tenant) throw new ApiError(401, "Invalid API key or access token");
    return tenant;
  };

  const mine = (tenant: Tenant, id: string): TemplateRecord => {
    const t = builds.registry.find(tenant.id, id);
    if (!t) throw new ApiError(404, `template '${id}' not found`);
    return t;
  };

  const upload = async (req: IncomingMessage, res: ServerResponse, url: URL, m: RegExpExecArray) => {
    const [, tenantId, hash] = m as unknown as [string, string, string];
    const until = Number(url.searchParams.get("until"));
    const sig = Buffer.from(url.searchParams.get("sig") ?? "");
    const want = Buffer.from(sign(tenantId, hash, until));
    if (sig.length !== want.length || !timingSafeEqual(sig, want) || !(until > Date.now()))
      throw new ApiError(403, "the upload link is not valid (or expired)");
    const length = Number(req.headers["content-length"]);
    if (!(length <= builds.quotas.uploadBytes))
      throw new ApiError(
        413,
        `uploads are limited to ${builds.quotas.uploadBytes} bytes (with Content-Length)`,
      );
    const dir = builds.filesDir(tenantId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = join(dir, `.${hash}.${randomBytes(4).toString("hex")}`);
    let seen = 0;
    try {
      req.on("data", (c: Buffer) => {
        seen += c.length;
        if (seen > length) req.destroy(new Error("more bytes than Content-Length"));
      });
      await pipeline(req, createWriteStream(tmp, { mode: 0o600 }));
      renameSync(tmp, join(dir, hash));
    } catch (e) {
      rmSync(tmp, { force: true });
      throw new ApiError(400, `upload failed: ${(e as Error).message}`);
    }
    send(res, 200);
  };

  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> => {
    const path = url.pathname;
    const method = req.method ?? "GET";
    const up = /^\/hands\/v1\/template-files\/([0-9a-f-]{1,64})\/([0-9a-f]{64})$/.exec(path);
    if (up && method === "PUT") {
      await upload(req, res, url, up);
      return true;
    }
    if (path === "/teams" && method === "GET") {
      const tenant = await auth(req);
      // No API key is ever handed out (only its hash is kept): set E2B_API_KEY beside the token.
      send(res, 200, [{ teamID: tenant.id, name: tenant.name, apiKey: "", isDefault: true }]);
      return true;
    }
    if (path === "/hands/v1/access-tokens" && method === "POST") {
      const key = req.headers["x-api-key"];
      const tenant = typeof key === "string" ? await keys.verify(key) : undefined;
      if (!tenant || typeof key !== "string")
        throw new ApiError(401, "an access token is issued for a valid API key");
      send(res, 201, { accessToken: await accessTokenFor(store, key), tenantName: tenant.name });
      return true;
    }
    const logs = /^(\/v2)?\/sandboxes\/([a-z0-9]{1,64})\/logs$/.exec(path);
    if (logs && method === "GET") {
      const tenant = await auth(req);
      const start = Number(url.searchParams.get("start") ?? 0);
      const limit = Math.min(Number(url.searchParams.get("limit") ?? 1000) || 1000, 1000);
      const entries = (await service.auditTrail(tenant, logs[2] as string, limit))
        .filter((e) => e.time >= start)
        .sort((a, b) => a.time - b.time)
        .map((e) => ({
          timestamp: iso(e.time),
          level: "info",
          message: `${e.event}${e.detail ? ` ${JSON.stringify(e.detail)}` : ""}`,
          fields: { event: e.event },
        }));
      // v1's `line` is a JSON record (the CLI parses it for level and logger).
      const line = (e: (typeof entries)[number]) =>
        JSON.stringify({ level: e.level, logger: "hands.audit", message: e.message, event: e.fields.event });
      if (logs[1]) send(res, 200, { logs: entries });
      else
        send(res, 200, {
          logs: entries.map((e) => ({ timestamp: e.timestamp, line: line(e) })),
          logEntries: entries,
        });
      return true;
    }
    if (!/^\/(v[23]\/)?templates(\/|$)/.test(path)) return false;
    const tenant = await auth(req);
    if ((path === "/v3/templates" || path === "/v2/templates") && method === "POST") {
      const body = await json(req, 64 * 1024);
      const asked = String(body.name ?? body.alias ?? "").split(":")[0] as string;
      if (asked in service.templates)
        throw new ApiError(409, `'${asked}' is a template of the service: choose another name`);
      const t = builds.request(tenant.id, body);
      send(res, 202, {
        templateID: t.id,
        buildID: t.buildId,
        public: false,
        aliases: t.names,
        names: t.names,
        tags: t.tags,
      });
      return true;
    }
    if (path === "/templates" && method === "GET") {
      send(res, 200, builds.registry.list(tenant.id).map(listed));
      return true;
    }
    let m = /^\/templates\/aliases\/([^/]{1,200})$/.exec(path);
    if (m && method === "GET") {
      const t = builds.registry.find(tenant.id, decodeURIComponent(m[1] as string));
      if (!t) throw new ApiError(404, "template not found");
      send(res, 200, { templateID: t.id, public: false });
      return true;
    }
    m = /^\/templates\/([^/]{1,200})\/files\/([0-9a-f]{64})$/.exec(path);
    if (m && method === "GET") {
      mine(tenant, decodeURIComponent(m[1] as string));
      const hash = m[2] as string;
      if (builds.hasFile(tenant.id, hash)) {
        send(res, 201, { present: true });
        return true;
      }
      const until = Date.now() + UPLOAD_TTL_MS;
      const host = req.headers.host ?? "127.0.0.1";
      send(res, 201, {
        present: false,
        url: `http://${host}/hands/v1/template-files/${tenant.id}/${hash}?until=${until}&sig=${sign(tenant.id, hash, until)}`,
      });
      return true;
    }
    m = /^\/v2\/templates\/([^/]{1,200})\/builds\/([a-z0-9]{1,64})$/.exec(path);
    if (m && method === "POST") {
      const t = mine(tenant, decodeURIComponent(m[1] as string));
      if (t.buildId !== m[2] || t.status !== "waiting")
        throw new ApiError(409, `build '${m[2]}' is not waiting to start`);
      const body = await json(req, 1024 * 1024);
      try {
        builds.start(t, parseE2bTemplate(body));
      } catch (e) {
        // The SDK learns of a refused recipe from the build's status, with the step it names.
        if (e instanceof StepError) builds.fail(t, e.message, e.step);
        else if (e instanceof ApiError && e.status === 400) builds.fail(t, e.message);
        else throw e;
      }
      send(res, 202);
      return true;
    }
    m = /^\/templates\/([^/]{1,200})\/builds\/([a-z0-9]{1,64})\/status$/.exec(path);
    if (m && method === "GET") {
      const t = mine(tenant, decodeURIComponent(m[1] as string));
      if (t.buildId !== m[2]) throw new ApiError(404, `build '${m[2]}' not found`);
      const offset = Number(url.searchParams.get("logsOffset") ?? 0);
      if (!Number.isInteger(offset) || offset < 0)
        throw new ApiError(400, "logsOffset must be a whole number");
      const entries = builds.logsOf(t.buildId, offset);
      send(res, 200, {
        templateID: t.id,
        buildID: t.buildId,
        status: t.status,
        logEntries: entries,
        logs: entries.map((e) => e.message),
        ...(t.status === "error" && t.reason ? { reason: { ...t.reason, logEntries: [] } } : {}),
      });
      return true;
    }
    m = /^\/templates\/([^/]{1,200})$/.exec(path);
    if (m) {
      const id = decodeURIComponent(m[1] as string);
      const t = builds.registry.find(tenant.id, id);
      // Not a template: a snapshot's id (the SDK deletes snapshots here too) — left to the API.
      if (!t && method === "DELETE") return false;
      if (!t) throw new ApiError(404, `template '${id}' not found`);
      if (method === "DELETE") {
        await builds.remove(t);
        send(res, 204);
      } else if (method === "GET")
        send(res, 200, {
          ...listed(t),
          builds: [
            {
              buildID: t.buildId,
              status: t.status,
              createdAt: iso(t.updatedAt),
              updatedAt: iso(t.updatedAt),
              cpuCount: t.cpus,
              memoryMB: t.memoryMB,
            },
          ],
        });
      else throw new ApiError(405, "method not allowed");
      return true;
    }
    throw new ApiError(404, `no such endpoint: ${method} ${path}`);
  };
}
