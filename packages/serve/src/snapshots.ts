// Snapshots of sandboxes (E2B's snapshot API): a copy of a sandbox's files, kept on the node that
// made it until its tenant deletes it, from which new sandboxes start (Sandbox.create(snapshotId)).
// Each snapshot is a folder of its own under <dataDir>/snapshots, named by a keyed hash of its
// tenant and id (the folder names show up where the ids should not), holding `files/` and
// `snapshot.json`. Only the files are kept: no backend here can keep processes (README).
import { createHmac, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { copyWorkspace } from "./workspace-copy.js";

export interface SnapshotRecord {
  id: string;
  tenantId: string;
  names: string[];
  /** The sandbox it was made from, and that sandbox's template (the backend new sandboxes use). */
  sandboxId: string;
  templateId: string;
  createdAt: number;
}

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
/** The most snapshots one tenant keeps on a node: each is a full copy of a sandbox's files. */
export const MAX_SNAPSHOTS_PER_TENANT = 100;

export class SnapshotError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class Snapshots {
  private readonly dir: string;

  constructor(
    dataDir: string,
    private readonly key: Buffer,
    /** Names that are templates already: a snapshot may not shadow them. */
    private readonly reserved: (name: string) => boolean,
  ) {
    this.dir = join(dataDir, "snapshots");
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  private folder(tenantId: string, id: string): string {
    const h = createHmac("sha256", this.key).update(`snapshot\0${tenantId}\0${id}`).digest("hex");
    return join(this.dir, h.slice(0, 24));
  }

  /** The snapshot `id` of the tenant, with the folder its files are in. */
  find(tenantId: string, ref: string): { record: SnapshotRecord; files: string } | undefined {
    const id = snapshotRef(ref);
    const folder = this.folder(tenantId, id);
    const record = readRecord(folder);
    if (!record || record.tenantId !== tenantId || record.id !== id) return undefined;
    return { record, files: join(folder, "files") };
  }

  /** The tenant's snapshots, newest first, optionally only those of one sandbox or name. */
  list(tenantId: string, filter: { sandboxId?: string; name?: string }): SnapshotRecord[] {
    const out: SnapshotRecord[] = [];
    for (const name of readdirSync(this.dir)) {
      const r = readRecord(join(this.dir, name));
      if (!r || r.tenantId !== tenantId) continue;
      if (filter.sandboxId && r.sandboxId !== filter.sandboxId) continue;
      if (filter.name && r.id !== snapshotRef(filter.name)) continue;
      out.push(r);
    }
    return out.sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
  }

  /**
   * Copies a sandbox's folder into a new snapshot (or, for a name the tenant used before, a new
   * version of that one: its files are replaced once the copy is whole).
   */
  async create(
    tenantId: string,
    source: { sandboxId: string; templateId: string; workspace: string },
    name?: string,
  ): Promise<SnapshotRecord> {
    if (name !== undefined) {
      if (!NAME.test(name))
        throw new SnapshotError(
          400,
          "name must be 1-64 of a-z, 0-9, '.', '_', '-' (starting with a letter or digit)",
        );
      if (this.reserved(name)) throw new SnapshotError(409, `'${name}' is the name of a template`);
    }
    const id = name ?? newId();
    const existing = this.find(tenantId, id);
    if (!existing && this.list(tenantId, {}).length >= MAX_SNAPSHOTS_PER_TENANT)
      throw new SnapshotError(
        429,
        `the tenant already keeps ${MAX_SNAPSHOTS_PER_TENANT} snapshots: delete some first`,
      );
    const folder = this.folder(tenantId, id);
    const staging = `${folder}.new-${randomBytes(4).toString("hex")}`;
    mkdirSync(join(staging, "files"), { recursive: true, mode: 0o700 });
    try {
      await copyWorkspace(source.workspace, join(staging, "files"));
      const record: SnapshotRecord = {
        id,
        tenantId,
        names: name ? [name] : [],
        sandboxId: source.sandboxId,
        templateId: source.templateId,
        createdAt: Date.now(),
      };
      writeFileSync(join(staging, "snapshot.json"), JSON.stringify(record), { mode: 0o600 });
      // The old version (if any) goes only once the new one is whole.
      const old = `${folder}.old-${randomBytes(4).toString("hex")}`;
      if (existsSync(folder)) renameSync(folder, old);
      renameSync(staging, folder);
      rmSync(old, { recursive: true, force: true });
      return record;
    } catch (e) {
      rmSync(staging, { recursive: true, force: true });
      throw e;
    }
  }

  /** Deletes the tenant's snapshot: false when it has none of that id. */
  remove(tenantId: string, ref: string): boolean {
    const found = this.find(tenantId, ref);
    if (!found) return false;
    const folder = this.folder(tenantId, found.record.id);
    const gone = `${folder}.gone-${randomBytes(4).toString("hex")}`;
    renameSync(folder, gone);
    rmSync(gone, { recursive: true, force: true });
    return true;
  }

  /** Copies a sandbox's folder to a fresh folder of its own (a fork's one capture). */
  async stage(workspace: string): Promise<{ files: string; drop: () => void }> {
    const folder = join(this.dir, `.fork-${randomBytes(8).toString("hex")}`);
    mkdirSync(folder, { mode: 0o700 });
    try {
      await copyWorkspace(workspace, folder);
    } catch (e) {
      rmSync(folder, { recursive: true, force: true });
      throw e;
    }
    return { files: folder, drop: () => rmSync(folder, { recursive: true, force: true }) };
  }

  /** Leftovers of copies a previous run did not finish. */
  sweep(): void {
    for (const name of readdirSync(this.dir))
      if (name.startsWith(".fork-") || /\.(new|old|gone)-[0-9a-f]{8}$/.test(name))
        rmSync(join(this.dir, name), { recursive: true, force: true });
  }
}

/**
 * A snapshot as E2B names it — `name`, `namespace/name`, `name:default` — to its id here: each
 * tenant's snapshots are its own (the namespace is the tenant, whatever is written) and have one
 * version, `default`.
 */
function snapshotRef(ref: string): string {
  const name = ref.slice(ref.lastIndexOf("/") + 1);
  return name.endsWith(":default") ? name.slice(0, -":default".length) : name;
}

function newId(): string {
  let s = "";
  for (const b of randomBytes(20)) s += ID_ALPHABET[b % ID_ALPHABET.length];
  return s;
}

function readRecord(folder: string): SnapshotRecord | undefined {
  try {
    const r = JSON.parse(readFileSync(join(folder, "snapshot.json"), "utf8")) as SnapshotRecord;
    return typeof r.id === "string" && typeof r.tenantId === "string" ? r : undefined;
  } catch {
    return undefined;
  }
}
