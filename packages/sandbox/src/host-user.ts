// Who sandboxed code is on the host. Never root: run as Hands' own user when that is not root;
// as root, as the workspace's owner when that is not root, and otherwise as a dedicated
// unprivileged uid that the workspace is shared with through POSIX ACLs (ownership and modes
// of the user's files stay as they are) while sandboxes use it. When the last one is done (or
// the process exits), the share is taken back: the uid's ACL entries go, and what the sandbox
// created is given to the workspace's owner — no account later given that uid owns or may write
// any of the project.
import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import { dirname } from "node:path";
import { registerShare, sharedElsewhere, unregisterShare, withShareLock } from "./share-registry.js";

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

interface Share {
  uid: number;
  /** Folders above the workspace that were given pass-through for the uid. */
  ancestors: string[];
  /** Sandboxes (or one-shot runs) using the share now. */
  holders: Set<object>;
  /** The pending take-back once the last holder is gone. */
  timer?: NodeJS.Timeout;
}

const shares = new Map<string, Share>();

/** A share nobody holds is taken back after this long (one-shot runs in a row keep it). */
const UNSHARE_DELAY_MS = 1000;

/**
 * The host user sandboxed code in `workspace` runs as, or undefined for "the caller" (when
 * Hands itself is not root). Throws when a root-owned workspace cannot be shared. A sandbox
 * passes itself as `holder` and calls releaseHostUser when it is gone.
 */
export function sandboxHostUser(workspace: string, holder?: object): HostUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const st = statSync(workspace);
  if (st.uid !== 0) return { uid: st.uid, gid: st.gid === 0 ? st.uid : st.gid };
  const uid = dedicatedUid();
  const share = shareWorkspace(workspace, uid);
  if (holder) share.holders.add(holder);
  return { uid, gid: uid };
}

/** `holder` no longer uses `workspace`: when nothing else does, the share is taken back. */
export function releaseHostUser(workspace: string, holder: object): void {
  const share = shares.get(workspace);
  if (!share?.holders.delete(holder) || share.holders.size > 0) return;
  clearTimeout(share.timer);
  share.timer = setTimeout(() => {
    if (share.holders.size === 0 && shares.get(workspace) === share) unshareWorkspace(workspace);
  }, UNSHARE_DELAY_MS);
  share.timer.unref();
}

/**
 * Lets `uid` read and write the whole workspace, now and for files created later (a default
 * ACL on every folder). Done once per workspace and process, until taken back.
 */
export function shareWorkspace(workspace: string, uid: number): Share {
  const known = shares.get(workspace);
  if (known?.uid === uid) {
    clearTimeout(known.timer);
    return known;
  }
  const entry = `u:${uid}:rwX`;
  // bubblewrap sets up its mounts as that uid, so it must be able to pass through every folder
  // above the workspace: where others may not, that uid gets pass-through only (no listing,
  // no reading) — no other process runs as it.
  const closed = ancestors(workspace).filter((d) => (statSync(d).mode & 0o001) === 0);
  const steps: string[][] = closed.map((d) => ["-m", `u:${uid}:x`, "--", d]);
  steps.push(["-R", "-P", "-m", `${entry},d:${entry}`, "--", workspace]);
  const r = withShareLock(() => {
    registerShare(workspace, closed);
    let step: ReturnType<typeof spawnSync> = { status: 0 } as ReturnType<typeof spawnSync>;
    for (const args of steps) {
      step = spawnSync("setfacl", args, { encoding: "utf8", timeout: 120_000 });
      if (step.error || step.status !== 0) break;
    }
    if (step.error || step.status !== 0) unregisterShare(workspace, closed);
    return step;
  });
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : String(r.stderr).trim().split("\n").slice(0, 3).join("; ");
    throw new Error(
      `the workspace ${workspace} is owned by root and sandboxed commands never run as root: Hands runs them as uid ${uid} and could not share the workspace with it (setfacl: ${why}); install the acl package, or chown the workspace to an unprivileged user`,
    );
  }
  const share: Share = { uid, ancestors: closed, holders: new Set() };
  shares.set(workspace, share);
  onExitUnshare();
  return share;
}

/**
 * Takes a share back: removes the uid's entries (and the default ACLs, the masks that only they
 * needed) from every file of the workspace, gives what the uid owns to the workspace's owner,
 * and removes the pass-through above. Skipped for what another live Hands process still shares.
 * Best effort: returns false when a step failed.
 */
export function unshareWorkspace(workspace: string): boolean {
  const share = shares.get(workspace);
  if (!share) return true;
  shares.delete(workspace);
  clearTimeout(share.timer);
  return withShareLock(() => takeBack(workspace, share));
}

function takeBack(workspace: string, share: Share): boolean {
  const elsewhere = sharedElsewhere(workspace, share.ancestors);
  // This process's other workspaces under the same folders still need their pass-through (the
  // registry has one file per process and folder, so it cannot tell them apart).
  const neededHere = new Set([...shares.values()].flatMap((s) => s.ancestors));
  unregisterShare(
    workspace,
    share.ancestors.filter((d) => !neededHere.has(d)),
  );
  const released = share.ancestors.filter((d) => !elsewhere.above.has(d) && !neededHere.has(d));
  const owner = statSync(workspace, { throwIfNoEntry: false });
  const listings: string[][] = [];
  if (!elsewhere.workspace && owner) listings.push(["-R", "-P", "-n", "-p", "--", workspace]);
  if (released.length > 0) listings.push(["-P", "-n", "-p", "--", ...released]);
  let ok = true;
  let restore = "";
  // latin1 both ways: file names are bytes, not necessarily UTF-8; only ASCII lines change.
  for (const args of listings) {
    const dump = spawnSync("getfacl", args, { encoding: "latin1", maxBuffer: 1024 ** 3, timeout: 300_000 });
    // A file that vanished during the walk fails getfacl, not the blocks of the others.
    ok &&= dump.status === 0;
    if (dump.stdout) restore += withoutShare(dump.stdout, share.uid, owner ?? { uid: 0, gid: 0 });
  }
  if (restore) {
    const r = spawnSync("setfacl", ["--restore=-"], {
      input: Buffer.from(restore, "latin1"),
      maxBuffer: 64 * 1024 ** 2,
      timeout: 300_000,
    });
    ok &&= r.status === 0;
  }
  return ok;
}

/**
 * A `getfacl -R -n` listing as it should be without the share: no entry of `uid` (nor its
 * default), no mask or default ACL left with nothing to govern (the group keeps its effective
 * permissions), and files `uid` owns given to `owner`. setfacl --restore applies it.
 */
export function withoutShare(listing: string, uid: number, owner: { uid: number; gid: number }): string {
  const blocks: string[] = [];
  for (const block of listing.split("\n\n")) {
    if (!block.trim()) continue;
    let lines = block
      .split("\n")
      .filter((l) => l && !l.startsWith(`user:${uid}:`) && !l.startsWith(`default:user:${uid}:`));
    const access = lines.filter((l) => /^(user|group|mask|other):/.test(l));
    const mask = access.find((l) => l.startsWith("mask::"));
    if (mask && access.every((l) => /^(user|group|other|mask)::/.test(l))) {
      const m = mask.slice("mask::".length, "mask::".length + 3);
      lines = lines
        .filter((l) => l !== mask)
        .map((l) => (l.startsWith("group::") ? `group::${effective(l.slice(7, 10), m)}` : l));
    }
    if (
      lines.filter((l) => l.startsWith("default:")).every((l) => /^default:(user|group|other|mask)::/.test(l))
    )
      lines = lines.filter((l) => !l.startsWith("default:"));
    lines = lines.map((l) =>
      l === `# owner: ${uid}`
        ? `# owner: ${owner.uid}`
        : l === `# group: ${uid}`
          ? `# group: ${owner.gid}`
          : l,
    );
    blocks.push(lines.join("\n"));
  }
  return `${blocks.join("\n\n")}\n\n`;
}

/** Permissions `perm` ("r-x") as limited by `mask`. */
function effective(perm: string, mask: string): string {
  return [...perm].map((c, i) => (mask[i] === "-" ? "-" : c)).join("");
}

let exitHook = false;

/**
 * Shares still standing when the process exits are taken back then — also when a signal ends
 * it, unless something else handles that signal (it may not mean "exit": an interactive run's
 * Ctrl-C stops a step), which then exits through "exit" or not at all.
 */
function onExitUnshare(): void {
  if (exitHook) return;
  exitHook = true;
  const unshareAll = () => {
    for (const ws of [...shares.keys()]) unshareWorkspace(ws);
  };
  process.once("exit", unshareAll);
  for (const sig of ["SIGTERM", "SIGHUP", "SIGINT"] as const) {
    const onSignal = () => {
      if (process.listenerCount(sig) > 1) return;
      unshareAll();
      process.off(sig, onSignal);
      process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
}

/** The folders above `dir`, from / down. */
function ancestors(dir: string): string[] {
  const out: string[] = [];
  for (let d = dirname(dir); ; d = dirname(d)) {
    out.unshift(d);
    if (d === dirname(d)) return out;
  }
}
