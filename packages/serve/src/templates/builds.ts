// Template builds of `hands serve`: a build request makes (or reuses) the tenant's template and a
// build id; uploads land in the tenant's own folder of files by content hash; the build runs in
// a gVisor container (buildInContainer) when a build slot is free, and its log lines are kept
// for the SDK's status polls (logsOffset). Quotas: templates per tenant, builds at once per
// tenant and on the node, bytes per upload, time per build.
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { imageTag } from "@hands/sandbox";
import { buildInContainer, removeTemplateImage } from "@hands/sandbox/backends";
import type { TemplateSpec } from "../service.js";
import { ApiError } from "../service.js";
import type { ParsedBuild } from "./e2b-steps.js";
import { newId, parseName, type TemplateRecord, TemplateRegistry } from "./registry.js";

export interface TemplateQuotas {
  templatesPerTenant: number;
  buildsPerTenant: number;
  buildsAtOnce: number;
  uploadBytes: number;
  buildTimeoutMs: number;
  maxCpus: number;
  maxMemoryMB: number;
}

export const DEFAULT_TEMPLATE_QUOTAS: TemplateQuotas = {
  templatesPerTenant: 20,
  buildsPerTenant: 1,
  buildsAtOnce: 2,
  uploadBytes: 256 * 1024 * 1024,
  buildTimeoutMs: 15 * 60_000,
  maxCpus: 8,
  maxMemoryMB: 8192,
};

/** The package mirrors a build may reach (through the allow-list proxy). */
export const DEFAULT_BUILD_ALLOW = [
  "deb.debian.org",
  "security.debian.org",
  "pypi.org",
  "files.pythonhosted.org",
  "registry.npmjs.org",
];

export interface LogLine {
  timestamp: string;
  level: "debug" | "info" | "warn" | "error";
  message: string;
}

const MAX_LOG_LINES = 20_000;
const WAITING_TTL_MS = 15 * 60_000;

export class TemplateBuilds {
  readonly registry: TemplateRegistry;
  private readonly logs = new Map<string, LogLine[]>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly aborts = new Set<AbortController>();
  private closed = false;

  constructor(
    private readonly dataDir: string,
    readonly quotas: TemplateQuotas = DEFAULT_TEMPLATE_QUOTAS,
    private readonly allow: readonly string[] = DEFAULT_BUILD_ALLOW,
    /** OCI runtime of builds and of sandboxes from templates ("runsc" when Docker has gVisor). */
    private readonly runtime?: string,
  ) {
    this.registry = new TemplateRegistry(dataDir);
  }

  filesDir(tenantId: string): string {
    return join(this.dataDir, "template-files", tenantId);
  }

  hasFile(tenantId: string, hash: string): boolean {
    return existsSync(join(this.filesDir(tenantId), hash));
  }

  /** POST /v3/templates: a new build of a new or existing template. */
  request(tenantId: string, body: Record<string, unknown>): TemplateRecord {
    let parsed: { name: string; tag?: string };
    try {
      parsed = parseName(body.name ?? body.alias);
    } catch (e) {
      throw new ApiError(400, (e as Error).message);
    }
    const cpus = body.cpuCount ?? 2;
    const memoryMB = body.memoryMB ?? 1024;
    if (!Number.isInteger(cpus) || (cpus as number) < 1 || (cpus as number) > this.quotas.maxCpus)
      throw new ApiError(400, `cpuCount must be 1..${this.quotas.maxCpus}`);
    if (
      !Number.isInteger(memoryMB) ||
      (memoryMB as number) < 128 ||
      (memoryMB as number) > this.quotas.maxMemoryMB
    )
      throw new ApiError(400, `memoryMB must be 128..${this.quotas.maxMemoryMB}`);
    const mine = this.registry.list(tenantId);
    // A build requested but never started (the client went away) stops counting after a while.
    for (const t of mine)
      if (t.status === "waiting" && Date.now() - t.updatedAt > WAITING_TTL_MS)
        this.fail(t, "the build was requested but never started");
    const busy = mine.filter(
      (t) => (t.status === "building" || t.status === "waiting") && t.names[0] !== parsed.name,
    ).length;
    if (busy >= this.quotas.buildsPerTenant)
      throw new ApiError(429, `at most ${this.quotas.buildsPerTenant} template build(s) at once per tenant`);
    let t = this.registry.find(tenantId, parsed.name);
    if (!t && mine.length >= this.quotas.templatesPerTenant)
      throw new ApiError(429, `at most ${this.quotas.templatesPerTenant} templates per tenant`);
    const tags = [parsed.tag ?? "default", ...(Array.isArray(body.tags) ? body.tags.map(String) : [])];
    const now = Date.now();
    t = {
      ...(t ?? { id: newId(), tenantId, names: [parsed.name], createdAt: now, buildCount: 0 }),
      tags,
      cpus: cpus as number,
      memoryMB: memoryMB as number,
      buildId: newId(),
      status: "waiting",
      updatedAt: now,
    } as TemplateRecord;
    // A new build's outcome replaces the last's; the last image stays usable until it is ready.
    delete t.reason;
    this.registry.put(t);
    this.logs.set(t.buildId, []);
    return t;
  }

  log(buildId: string, level: LogLine["level"], message: string): void {
    const l = this.logs.get(buildId);
    if (!l || l.length >= MAX_LOG_LINES) return;
    l.push({ timestamp: new Date().toISOString(), level, message });
  }

  logsOf(buildId: string, offset: number): LogLine[] {
    return (this.logs.get(buildId) ?? []).slice(offset);
  }

  /** Starts the build (in the background); the SDK polls the status. */
  start(t: TemplateRecord, build: ParsedBuild): void {
    for (const h of build.files)
      if (!this.hasFile(t.tenantId, h)) throw new ApiError(400, `the files of hash ${h} were not uploaded`);
    let base: string;
    if ("template" in build.from) {
      const parent = this.registry.find(t.tenantId, build.from.template);
      if (!parent?.image) throw new ApiError(400, `template '${build.from.template}' has no ready build`);
      base = parent.image;
    } else base = imageTag();
    void this.run(t, build, base);
  }

  private async slot(): Promise<void> {
    if (this.running < this.quotas.buildsAtOnce) {
      this.running++;
      return;
    }
    await new Promise<void>((r) => this.waiting.push(r));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  private async run(t: TemplateRecord, build: ParsedBuild, base: string): Promise<void> {
    const buildId = t.buildId;
    const current = () => this.registry.find(t.tenantId, t.id);
    await this.slot();
    if (this.closed) return;
    const abort = new AbortController();
    this.aborts.add(abort);
    try {
      const rec = current();
      if (!rec || rec.buildId !== buildId) return;
      rec.status = "building";
      this.registry.put(rec);
      this.log(buildId, "info", `Building from ${base} (${build.steps.length} steps)`);
      const image = `hands-template:${t.tenantId.slice(0, 8)}-${t.id}-${buildId}`.toLowerCase();
      mkdirSync(this.filesDir(t.tenantId), { recursive: true, mode: 0o700 });
      const r = await buildInContainer({
        base,
        image,
        steps: build.steps,
        stageDir: this.filesDir(t.tenantId),
        allow: this.allow,
        ...(this.runtime ? { runtime: this.runtime } : {}),
        memoryBytes: t.memoryMB * 1024 * 1024,
        timeoutMs: this.quotas.buildTimeoutMs,
        signal: abort.signal,
        log: (line, level) => this.log(buildId, level, line),
      });
      const after = current();
      if (!after || after.buildId !== buildId) {
        if (r.ok) await removeTemplateImage(image);
        return;
      }
      if (r.ok) {
        const old = after.image;
        after.image = image;
        after.status = "ready";
        after.buildCount++;
        if (build.startCmd) after.startCmd = build.startCmd;
        else delete after.startCmd;
        if (build.readyCmd) after.readyCmd = build.readyCmd;
        else delete after.readyCmd;
        this.registry.put(after);
        if (old && old !== image) await removeTemplateImage(old);
        this.log(buildId, "info", "Build finished");
      } else {
        after.status = "error";
        after.reason = {
          message: r.message ?? "the build failed",
          ...(r.failedStep !== undefined ? { step: String(r.failedStep + 1) } : {}),
        };
        this.registry.put(after);
        this.log(buildId, "error", after.reason.message);
      }
    } catch (e) {
      const after = current();
      if (after && after.buildId === buildId) {
        after.status = "error";
        after.reason = { message: (e as Error).message };
        this.registry.put(after);
      }
      this.log(buildId, "error", (e as Error).message);
    } finally {
      this.aborts.delete(abort);
      this.release();
    }
  }

  /** Fails a build whose steps were refused before it ran. */
  fail(t: TemplateRecord, message: string, step?: string): void {
    t.status = "error";
    t.reason = { message, ...(step ? { step } : {}) };
    this.registry.put(t);
    this.log(t.buildId, "error", message);
  }

  async remove(t: TemplateRecord): Promise<void> {
    this.registry.remove(t.id);
    if (t.image) await removeTemplateImage(t.image);
  }

  /** What a sandbox of this template runs on (undefined until a build is ready). */
  spec(
    tenantId: string,
    name: string,
  ): (TemplateSpec & { startCmd?: string; readyCmd?: string }) | undefined {
    const t = this.registry.find(tenantId, name);
    if (!t?.image) return undefined;
    return {
      backend: "docker",
      ...(this.runtime ? { runtime: this.runtime } : {}),
      image: t.image,
      cpus: t.cpus,
      memoryMB: t.memoryMB,
      ...(t.startCmd ? { startCmd: t.startCmd } : {}),
      ...(t.readyCmd ? { readyCmd: t.readyCmd } : {}),
    };
  }

  /** Stops running builds (their containers go; waiting ones never start). */
  close(): void {
    this.closed = true;
    for (const a of this.aborts) a.abort();
    for (const w of this.waiting.splice(0)) w();
  }

  removeFiles(tenantId: string): void {
    rmSync(this.filesDir(tenantId), { recursive: true, force: true });
  }
}
