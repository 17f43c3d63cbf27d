// The sandboxes of a running `hands serve`, through its management API (E2B's REST endpoints,
// X-API-Key) and its /metrics, exactly as any E2B client sees them (each running one's figures
// from E2B's /sandboxes/{id}/metrics); killing one is DELETE; the audit trail is hands serve's
// extension GET /hands/v1/sandboxes/{id}/audit.
import type { SandboxesPayload, SandboxInfo, SandboxTrailEntry, SandboxUsage } from "./api-types.js";

export interface ServeConnection {
  /** The management API's URL (E2B_API_URL), e.g. http://127.0.0.1:3000. */
  url: string;
  apiKey: string;
}

async function call(c: ServeConnection, path: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(new URL(path, c.url.endsWith("/") ? c.url : `${c.url}/`), {
      ...init,
      headers: { "x-api-key": c.apiKey, ...(init.headers as Record<string, string> | undefined) },
      signal: AbortSignal.timeout(10_000),
    });
  } catch (err) {
    throw new Error(`hands serve at ${c.url} did not answer: ${(err as Error).message}`);
  }
}

async function failure(r: Response): Promise<Error> {
  const text = (await r.text()).slice(0, 500);
  let message = text;
  try {
    message = (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {}
  return new Error(`hands serve answered ${r.status}: ${message}`);
}

/** Prometheus text → name{labels} → value, for the service's own series. */
export function parseMetrics(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith("hands_serve_")) continue;
    const m = /^([a-z_]+(?:\{[^}]*\})?)\s+(\S+)$/.exec(line);
    if (!m) continue;
    const v = Number(m[2]);
    if (Number.isFinite(v)) out[m[1]!] = v;
  }
  return out;
}

export async function listSandboxes(c: ServeConnection | undefined): Promise<SandboxesPayload> {
  if (!c)
    return {
      sandboxes: [],
      metrics: {},
      error: "no hands serve configured (hands dashboard --serve URL, with the key in E2B_API_KEY)",
    };
  try {
    const sandboxes: SandboxInfo[] = [];
    let next: string | null = null;
    do {
      const q = new URLSearchParams({ state: "running,paused", limit: "100" });
      if (next) q.set("nextToken", next);
      const r = await call(c, `v2/sandboxes?${q}`);
      if (!r.ok) throw await failure(r);
      for (const s of (await r.json()) as Record<string, unknown>[])
        sandboxes.push({
          id: String(s.sandboxID),
          template: String(s.templateID),
          state: String(s.state),
          startedAt: String(s.startedAt),
          endAt: String(s.endAt),
          cpuCount: Number(s.cpuCount),
          memoryMB: Number(s.memoryMB),
          metadata: (s.metadata ?? {}) as Record<string, string>,
          ...(typeof s.tenantName === "string" ? { tenant: s.tenantName } : {}),
          ...(typeof s.backend === "string" ? { backend: s.backend } : {}),
        });
      next = r.headers.get("x-next-token");
    } while (next && sandboxes.length < 10_000);
    await addUsage(c, sandboxes);
    const m = await call(c, "metrics");
    const metrics = m.ok ? parseMetrics(await m.text()) : {};
    return { service: c.url, sandboxes, metrics };
  } catch (err) {
    return { service: c.url, sandboxes: [], metrics: {}, error: (err as Error).message };
  }
}

/** Figures are read for this many running sandboxes at most per listing, a few at a time. */
const USAGE_MAX = 200;
const USAGE_PARALLEL = 8;

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** The latest reading of GET /sandboxes/{id}/metrics, checked (null: none, e.g. not running). */
export function usageOf(body: unknown): SandboxUsage | null {
  if (!Array.isArray(body)) throw new Error("metrics answer is not a list");
  const last = body[body.length - 1] as Record<string, unknown> | undefined;
  if (!last) return null;
  const cpu = num(last.cpuUsedPct);
  const used = num(last.memUsed);
  const total = num(last.memTotal);
  const disk = num(last.diskUsed);
  if (cpu === undefined || used === undefined || total === undefined || disk === undefined)
    throw new Error("metrics answer lacks cpuUsedPct, memUsed, memTotal or diskUsed");
  const pids = num(last.pids);
  return {
    cpuUsedPct: cpu,
    memUsed: used,
    memTotal: total,
    diskUsed: disk,
    ...(pids === undefined ? {} : { pids }),
  };
}

async function addUsage(c: ServeConnection, sandboxes: SandboxInfo[]): Promise<void> {
  const todo = sandboxes.filter((s) => s.state === "running").slice(0, USAGE_MAX);
  const next = async (): Promise<void> => {
    for (let s = todo.shift(); s; s = todo.shift()) {
      try {
        const r = await call(c, `sandboxes/${encodeURIComponent(s.id)}/metrics`);
        if (!r.ok) throw await failure(r);
        s.usage = usageOf(await r.json());
      } catch (err) {
        s.usage = null;
        s.usageError = (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: USAGE_PARALLEL }, next));
}

function checkId(id: string): void {
  if (!/^[a-z0-9]{1,64}$/.test(id)) throw new Error(`invalid sandbox id: ${id.slice(0, 80)}`);
}

/** A sandbox's audit trail from hands serve, in the same shape as the local sandboxes' trail. */
export async function sandboxTrail(c: ServeConnection | undefined, id: string): Promise<SandboxTrailEntry[]> {
  if (!c) throw new Error("no hands serve configured");
  checkId(id);
  const r = await call(c, `hands/v1/sandboxes/${id}/audit?limit=500`);
  if (!r.ok) throw await failure(r);
  const body = (await r.json()) as { entries?: unknown };
  if (!Array.isArray(body.entries)) throw new Error("audit answer has no entries");
  return body.entries.map((e: Record<string, unknown>) => ({
    ...(e.detail && typeof e.detail === "object" ? (e.detail as Record<string, unknown>) : {}),
    time: String(e.time),
    event: String(e.event),
  }));
}

export async function killSandbox(c: ServeConnection | undefined, id: string): Promise<void> {
  if (!c) throw new Error("no hands serve configured");
  checkId(id);
  const r = await call(c, `sandboxes/${id}`, { method: "DELETE" });
  if (r.status !== 204 && r.status !== 200) throw await failure(r);
}
