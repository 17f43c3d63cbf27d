// Small /proc helpers: finding a sandboxed process's host PID from its PID inside the sandbox,
// and telling whether a process (PID and start time) is still the one that was.
import { readdirSync, readFileSync } from "node:fs";

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The innermost PID of `pid` (its PID inside its own PID namespace), undefined when not namespaced. */
export function nsPid(pid: number): number | undefined {
  try {
    const m = /^NSpid:\s*(.+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    const ids = m?.[1]?.trim().split(/\s+/) ?? [];
    return ids.length > 1 ? Number(ids[ids.length - 1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Among the descendants of `root`, the process whose namespaced PID is `inner`. */
export function findDescendantByNsPid(root: number, inner: number): number | undefined {
  const todo = [root];
  for (let i = 0; i < 10_000 && todo.length > 0; i++) {
    const p = todo.shift() as number;
    if (p !== root && nsPid(p) === inner) return p;
    todo.push(...children(p));
  }
  return undefined;
}

export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** This machine's boot id (a process start time means something only within one boot). */
export function bootId(): string {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return "";
  }
}

/**
 * The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses):
 * [0] is the state, [3] the session id, [19] the start time. Undefined when `pid` is gone.
 */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** When process `pid` started (clock ticks since boot), or undefined when there is none. */
export function processStartTime(pid: number): string | undefined {
  return statFields(pid)?.[19];
}

/**
 * Whether the process that labelled a container is verifiably gone: on this machine and boot,
 * no process with its PID and start time exists. Labels from another boot or machine prove
 * nothing (the engine may be shared): those wait for the maximum age.
 */
export function ownerGone(labels: { pid?: string; start?: string; boot?: string }): boolean {
  const pid = Number(labels.pid ?? 0);
  if (labels.boot === undefined || labels.start === undefined) return !processAlive(pid); // older labels
  if (labels.boot !== bootId()) return false;
  const start = processStartTime(pid);
  return start === undefined || start !== labels.start;
}

/**
 * The one-letter state of `pid` (`R`, `S`, `T` stopped, `Z` zombie, …), or undefined when it is
 * gone or unreadable. One small synchronous read: cheap enough to ask before every command.
 */
export function processState(pid: number): string | undefined {
  return statFields(pid)?.[0] || undefined;
}

/**
 * SIGKILLs every process of session `sid` (field 6 of /proc/PID/stat), a few rounds (a process
 * may fork while the scan runs). A scan of all of /proc: for teardown, not for every command.
 */
export function killSession(sid: number): void {
  if (!Number.isInteger(sid) || sid <= 1) return;
  for (let round = 0; round < 5; round++) {
    let found = 0;
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      const f = statFields(name);
      if (!f || Number(f[3]) !== sid || f[0] === "Z") continue;
      try {
        process.kill(Number(name), "SIGKILL");
        found++;
      } catch {
        // gone, or not ours
      }
    }
    if (found === 0) return;
  }
}
