// Small /proc helpers: finding a sandboxed process's host PID from its PID inside the sandbox.
import { readFileSync } from "node:fs";

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The innermost PID of `pid` (its PID inside its own PID namespace). */
function nsPid(pid: number): number | undefined {
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
