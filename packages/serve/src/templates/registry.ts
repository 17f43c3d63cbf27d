// A tenant's templates (E2B's Template API): each has an id, the names (aliases) the tenant gave
// it, its resources, and its latest build. Kept in one JSON file in the data folder, written
// whole on each change (templates change rarely; a crash mid-write leaves the previous file).
// Templates are this node's: their images are in this node's Docker.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export type BuildStatus = "waiting" | "building" | "ready" | "error";

export interface TemplateRecord {
  id: string;
  tenantId: string;
  /** Names without a tag (E2B's aliases), unique per tenant. */
  names: string[];
  tags: string[];
  cpus: number;
  memoryMB: number;
  buildId: string;
  status: BuildStatus;
  /** The committed image, once a build is ready. */
  image?: string;
  startCmd?: string;
  readyCmd?: string;
  reason?: { message: string; step?: string };
  createdAt: number;
  updatedAt: number;
  buildCount: number;
}

const ID = "abcdefghijklmnopqrstuvwxyz0123456789";
export function newId(n = 20): string {
  let s = "";
  for (const b of randomBytes(n)) s += ID[b % ID.length];
  return s;
}

/** `name[:tag]` as the SDK sends it: a lower-case name (E2B's alias rule) and an optional tag. */
export function parseName(raw: unknown): { name: string; tag?: string } {
  if (typeof raw !== "string") throw new Error("name must be a string");
  const [name, tag, extra] = raw.split(":");
  if (extra !== undefined || !name || !/^[a-z0-9][a-z0-9_-]{0,62}$/.test(name))
    throw new Error(`invalid template name '${raw}': lower-case letters, digits, '-' and '_'`);
  if (tag !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(tag))
    throw new Error(`invalid tag '${tag}'`);
  return tag === undefined ? { name } : { name, tag };
}

export class TemplateRegistry {
  private readonly file: string;
  private readonly all = new Map<string, TemplateRecord>();

  constructor(dataDir: string) {
    this.file = join(dataDir, "templates.json");
    if (existsSync(this.file))
      for (const t of JSON.parse(readFileSync(this.file, "utf8")) as TemplateRecord[]) {
        // A build this process did not finish will not finish: it failed.
        if (t.status === "building" || t.status === "waiting") {
          t.status = "error";
          t.reason = { message: "the service restarted during the build" };
        }
        this.all.set(t.id, t);
      }
  }

  private save(): void {
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify([...this.all.values()], null, 1), { mode: 0o600 });
    renameSync(tmp, this.file);
  }

  list(tenantId: string): TemplateRecord[] {
    return [...this.all.values()].filter((t) => t.tenantId === tenantId);
  }

  /** By id or by name (the tenant's only: another tenant's templates do not exist for it). */
  find(tenantId: string, idOrName: string): TemplateRecord | undefined {
    const bare = idOrName.split(":")[0] as string;
    for (const t of this.all.values())
      if (t.tenantId === tenantId && (t.id === idOrName || t.names.includes(bare))) return t;
    return undefined;
  }

  put(t: TemplateRecord): void {
    t.updatedAt = Date.now();
    this.all.set(t.id, t);
    this.save();
  }

  remove(id: string): void {
    this.all.delete(id);
    this.save();
  }
}
