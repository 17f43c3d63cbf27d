// Resource limits through cgroups, v1 (one hierarchy per controller) or v2 (unified). Each
// session gets its own group under `hands/`; the sandbox's first process joins it before it
// execs bubblewrap, so everything inside inherits it.
import { accessSync, constants, existsSync, readdirSync, readFileSync, rmdirSync, statSync } from "node:fs";
import { mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface Limits {
  /** Memory in bytes (swap included where the kernel lets us). */
  memoryBytes: number;
  /** Maximum number of processes/threads. */
  pids: number;
  /** CPU time in cores (1 = one full core). */
  cpus: number;
}

export const DEFAULT_LIMITS: Limits = { memoryBytes: 2 * 1024 * 1024 * 1024, pids: 512, cpus: 1 };

const ROOT = "/sys/fs/cgroup";
const V1_CONTROLLERS = ["memory", "pids", "cpu"] as const;

export type CgroupMode = "v1" | "v2" | "none";

let detected: CgroupMode | undefined;

/** Which cgroup layout we can use here (needs write access: root, or a delegated tree). */
export function detectCgroups(): CgroupMode {
  if (detected) return detected;
  detected = "none";
  try {
    if (existsSync(join(ROOT, "cgroup.controllers"))) {
      const ctrls = readFileSync(join(ROOT, "cgroup.controllers"), "utf8");
      if (/\bmemory\b/.test(ctrls) && /\bpids\b/.test(ctrls) && canWrite(ROOT)) detected = "v2";
    } else if (
      V1_CONTROLLERS.every((c) => existsSync(join(ROOT, c, "cgroup.procs")) && canWrite(join(ROOT, c)))
    ) {
      detected = "v1";
    }
  } catch {
    detected = "none";
  }
  return detected;
}

/** Root, or a `hands/` group delegated to this user (one root made is there, but not ours). */
function canWrite(dir: string): boolean {
  if ((process.getuid?.() ?? 1) === 0) return true;
  try {
    accessSync(join(dir, "hands"), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

export class Cgroup {
  private constructor(
    readonly mode: CgroupMode,
    /** Folders whose cgroup.procs a process must join. */
    readonly dirs: string[],
  ) {}

  static async create(name: string, limits: Limits): Promise<Cgroup | undefined> {
    const mode = detectCgroups();
    if (mode === "v1") {
      const dirs = V1_CONTROLLERS.map((c) => join(ROOT, c, "hands", name));
      await Promise.all(dirs.map((d) => mkdir(d, { recursive: true })));
      const [mem, pids, cpu] = dirs as [string, string, string];
      await writeFile(join(mem, "memory.limit_in_bytes"), String(limits.memoryBytes));
      // Swap too, where swap accounting exists (otherwise memory is all there is).
      await writeFile(join(mem, "memory.memsw.limit_in_bytes"), String(limits.memoryBytes)).catch(() => {});
      await writeFile(join(pids, "pids.max"), String(limits.pids));
      await writeFile(join(cpu, "cpu.cfs_period_us"), "100000");
      await writeFile(
        join(cpu, "cpu.cfs_quota_us"),
        String(Math.max(1000, Math.round(limits.cpus * 100000))),
      );
      // The freezer, where the host has it: a group can then be stopped whole (freeze()).
      const freezer = join(ROOT, "freezer", "hands", name);
      if (canWrite(join(ROOT, "freezer")))
        await mkdir(freezer, { recursive: true }).then(
          () => dirs.push(freezer),
          () => {},
        );
      return new Cgroup(mode, dirs);
    }
    if (mode === "v2") {
      const parent = join(ROOT, "hands");
      await mkdir(parent, { recursive: true });
      await writeFile(join(ROOT, "cgroup.subtree_control"), "+memory +pids +cpu").catch(() => {});
      await writeFile(join(parent, "cgroup.subtree_control"), "+memory +pids +cpu").catch(() => {});
      const dir = join(parent, name);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "memory.max"), String(limits.memoryBytes));
      await writeFile(join(dir, "memory.swap.max"), "0").catch(() => {});
      await writeFile(join(dir, "pids.max"), String(limits.pids));
      await writeFile(
        join(dir, "cpu.max"),
        `${Math.max(1000, Math.round(limits.cpus * 100000))} 100000`,
      ).catch(() => {});
      return new Cgroup(mode, [dir]);
    }
    return undefined;
  }

  /** Files a process writes its PID into to join this group. */
  get procFiles(): string[] {
    return this.dirs.map((d) => join(d, "cgroup.procs"));
  }

  /** How many times the kernel's OOM killer has killed a process in this group. */
  async oomKills(): Promise<number> {
    return this.oomKillsNow();
  }

  /** The same, read at once (a few microseconds; no thread-pool round trip per command). */
  oomKillsNow(): number {
    const dir = this.dirs[0] ?? "";
    return eventCount([join(dir, this.mode === "v1" ? "memory.oom_control" : "memory.events")], "oom_kill");
  }

  /** How many forks the PID limit has refused in this group (pids.events "max"), read at once. */
  pidsLimitHitsNow(): number {
    const dir = (this.mode === "v1" ? this.dirs[1] : this.dirs[0]) ?? "";
    return eventCount([join(dir, "pids.events")], "max");
  }

  async pids(): Promise<number[]> {
    const file = join(this.mode === "v1" ? (this.dirs[1] ?? "") : (this.dirs[0] ?? ""), "cgroup.procs");
    const text = await readFile(file, "utf8").catch(() => "");
    return text.split("\n").filter(Boolean).map(Number);
  }

  /**
   * Stops (true) or resumes (false) every process in the group at once — cgroup v2's
   * cgroup.freeze, v1's freezer — and waits until the kernel reports it done (at most 5 s).
   * False when this group cannot be frozen (v1 without the freezer controller).
   */
  async freeze(on: boolean): Promise<boolean> {
    const v2 = this.mode === "v2";
    const dir = v2 ? this.dirs[0] : this.dirs.find((d) => d.startsWith(join(ROOT, "freezer")));
    if (!dir) return false;
    const file = join(dir, v2 ? "cgroup.freeze" : "freezer.state");
    await writeFile(file, v2 ? (on ? "1" : "0") : on ? "FROZEN" : "THAWED");
    const done = async () =>
      v2
        ? new RegExp(`^frozen ${on ? 1 : 0}$`, "m").test(await readFile(join(dir, "cgroup.events"), "utf8"))
        : (await readFile(file, "utf8")).trim() === (on ? "FROZEN" : "THAWED");
    for (let i = 0; i < 250; i++) {
      if (await done()) return true;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`the sandbox's processes did not ${on ? "freeze" : "thaw"} within 5 s`);
  }

  /** Kills every process in the group, then removes it. */
  async remove(): Promise<void> {
    // Frozen processes do not die until thawed.
    await this.freeze(false).catch(() => {});
    for (let i = 0; i < 50; i++) {
      const pids = await this.pids();
      if (pids.length === 0) break;
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const d of this.dirs) await rmdir(d).catch(() => {});
  }
}

/** Group folders under hands/ (for leak checks and the reaper). */
export function listCgroups(): string[] {
  const mode = detectCgroups();
  const parents =
    mode === "v1"
      ? [...V1_CONTROLLERS, "freezer"].map((c) => join(ROOT, c, "hands"))
      : mode === "v2"
        ? [join(ROOT, "hands")]
        : [];
  const out: string[] = [];
  for (const p of parents) {
    try {
      for (const e of readdirSync(p, { withFileTypes: true })) if (e.isDirectory()) out.push(join(p, e.name));
    } catch {
      // none yet
    }
  }
  return out;
}

/**
 * Removes empty session groups (a group still in use cannot be removed: EBUSY). Only groups
 * older than a minute: another process may have just made one its sandbox is about to join.
 */
export function pruneCgroups(keep: Set<string> = new Set(), minAgeMs = 60_000): number {
  let n = 0;
  for (const dir of listCgroups()) {
    if (keep.has(dir.split("/").pop() ?? "")) continue;
    try {
      if (Date.now() - statSync(dir).mtimeMs < minAgeMs) continue;
      const procs = readFileSync(join(dir, "cgroup.procs"), "utf8").trim();
      if (procs) continue;
      rmdirSync(dir);
      n++;
    } catch {
      // busy or gone
    }
  }
  return n;
}

/** The counter `key` of the first of `files` that can be read (cgroup event files: "key N" lines). */
export function eventCount(files: readonly string[], key: string): number {
  const re = new RegExp(`^${key} (\\d+)`, "m");
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(f, "utf8");
    } catch {
      continue; // not this layout
    }
    const m = re.exec(text);
    return m ? Number(m[1]) : 0;
  }
  return 0;
}
