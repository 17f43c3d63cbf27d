// Which backend "auto" means here, in a module of its own: front ends ask it at start-up,
// before any sandbox is made, without loading the backends themselves.
import { spawnSync } from "node:child_process";
import { lstatSync, readlinkSync } from "node:fs";
import type { SandboxKind } from "./types.js";

let bwrapUsable: { ok: boolean; reason: string } | undefined;

/** Whether bubblewrap is installed and can create namespaces here (cached). */
export function checkBwrap(): { ok: boolean; reason: string } {
  if (bwrapUsable) return bwrapUsable;
  if (process.platform !== "linux") {
    bwrapUsable = { ok: false, reason: "bubblewrap needs Linux" };
    return bwrapUsable;
  }
  // Only the system folders `true` needs, as sandboxes mount them: binding all of `/` walks every
  // mount on the host, and one going away meanwhile (a container's overlay) failed the probe.
  const args = ["--unshare-all", "--die-with-parent"];
  for (const d of ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64"]) {
    const st = lstatSync(d, { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) args.push("--symlink", readlinkSync(d), d);
    else if (st?.isDirectory()) args.push("--ro-bind", d, d);
  }
  args.push("--proc", "/proc", "true");
  const r = spawnSync("bwrap", args, { encoding: "utf8", timeout: 10_000 });
  if (r.error) bwrapUsable = { ok: false, reason: `bubblewrap is not installed (${r.error.message})` };
  else if (r.status !== 0)
    bwrapUsable = { ok: false, reason: `bubblewrap cannot create namespaces here: ${r.stderr.trim()}` };
  else bwrapUsable = { ok: true, reason: "" };
  return bwrapUsable;
}

/** The backend to use when none is chosen: bwrap on Linux when it works here, else local. */
export function defaultSandboxKind(): { kind: SandboxKind; warning?: string } {
  const bw = checkBwrap();
  if (bw.ok) return { kind: "bwrap" };
  return {
    kind: "local",
    warning: `warning: sandbox "local" does not isolate commands (${bw.reason}); install bubblewrap or use --sandbox docker`,
  };
}
