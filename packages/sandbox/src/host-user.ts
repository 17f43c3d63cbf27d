// Who sandboxed code is on the host. Never root: run as Hands' own user when that is not root;
// as root, as the workspace's owner when that is not root, and otherwise as a dedicated
// unprivileged uid that the workspace is shared with through POSIX ACLs (ownership and modes
// of the user's files stay as they are; what the sandbox creates belongs to that uid).
import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import { dirname } from "node:path";

/** The uid (and gid) sandboxed code runs as when Hands runs as root on a root-owned workspace. */
export const DEDICATED_SANDBOX_UID = 61_000;

export interface HostUser {
  uid: number;
  gid: number;
}

/** Environment override of the dedicated uid (a whole number above 0). */
function dedicatedUid(): number {
  const v = Number(process.env["HANDS_SANDBOX_UID"] ?? "");
  return Number.isInteger(v) && v > 0 && v < 2 ** 31 ? v : DEDICATED_SANDBOX_UID;
}

const shared = new Map<string, number>();

/**
 * The host user sandboxed code in `workspace` runs as, or undefined for "the caller" (when
 * Hands itself is not root). Throws when a root-owned workspace cannot be shared.
 */
export function sandboxHostUser(workspace: string): HostUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const st = statSync(workspace);
  if (st.uid !== 0) return { uid: st.uid, gid: st.gid === 0 ? st.uid : st.gid };
  const uid = dedicatedUid();
  shareWorkspace(workspace, uid);
  return { uid, gid: uid };
}

/**
 * Lets `uid` read and write the whole workspace, now and for files created later (a default
 * ACL on every folder). Done once per workspace and process.
 */
export function shareWorkspace(workspace: string, uid: number): void {
  if (shared.get(workspace) === uid) return;
  const entry = `u:${uid}:rwX`;
  // bubblewrap sets up its mounts as that uid, so it must be able to pass through every folder
  // above the workspace: where others may not, that uid gets pass-through only (no listing,
  // no reading) — no other process runs as it.
  const closed = ancestors(workspace).filter((d) => (statSync(d).mode & 0o001) === 0);
  const steps: string[][] = closed.map((d) => ["-m", `u:${uid}:x`, "--", d]);
  steps.push(["-R", "-P", "-m", `${entry},d:${entry}`, "--", workspace]);
  let r: ReturnType<typeof spawnSync> = { status: 0 } as ReturnType<typeof spawnSync>;
  for (const args of steps) {
    r = spawnSync("setfacl", args, { encoding: "utf8", timeout: 120_000 });
    if (r.error || r.status !== 0) break;
  }
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : String(r.stderr).trim().split("\n").slice(0, 3).join("; ");
    throw new Error(
      `the workspace ${workspace} is owned by root and sandboxed commands never run as root: Hands runs them as uid ${uid} and could not share the workspace with it (setfacl: ${why}); install the acl package, or chown the workspace to an unprivileged user`,
    );
  }
  shared.set(workspace, uid);
}

/** The folders above `dir`, from / down. */
function ancestors(dir: string): string[] {
  const out: string[] = [];
  for (let d = dirname(dir); ; d = dirname(d)) {
    out.unshift(d);
    if (d === dirname(d)) return out;
  }
}
