// Copies a sandbox's folder (fork, snapshot, a sandbox made from a snapshot) with GNU tar, one
// tar packing and one unpacking, as the service. The source is hostile — its sandbox may still be
// running and changing it — so nothing here follows a path the sandbox made: tar walks the tree
// with openat/O_NOFOLLOW and stores symlinks, FIFOs and hard links as what they are (a symlink to
// /etc stays a symlink; a FIFO is never opened), stays on one filesystem, and unpacks into a
// fresh folder nobody else can reach. The copy then belongs to the new sandbox's uid.
import { spawn } from "node:child_process";
import { lstatSync } from "node:fs";
import { join } from "node:path";

/** What is copied: the home, the sandbox's state (the rest of the folder is the service's mount points and the agent's socket). */
const HOME = "home";
const XATTRS = ["--xattrs", "--xattrs-include=user.*"];

function run(cmd: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      if (stderr.length < 4000) stderr += d.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

/**
 * Copies the home under `from` into the folder `to` (modes, times, user.* xattrs kept; a home
 * that is there already — a warm sandbox's, mounted — stays that folder and gets the files), then
 * gives what was copied to `owner` when the service runs as root.
 */
export async function copyWorkspace(
  from: string,
  to: string,
  owner?: { uid: number; gid: number },
): Promise<void> {
  // A home that is not a real folder (the sandbox swapped it for a link) has nothing to copy; the
  // target keeps (or gets) a real one. tar never follows it either way: a name given to it is
  // archived as what it is, so a swap after this check is stored as the link it is.
  if (!lstatSync(join(from, HOME), { throwIfNoEntry: false })?.isDirectory()) return;
  const pack = spawn(
    "tar",
    ["-C", from, "--one-file-system", "--numeric-owner", ...XATTRS, "-cf", "-", `./${HOME}`],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  // --no-overwrite-dir: folders that exist (the target itself, a warm sandbox's home) keep
  // their owner and mode instead of taking the source's.
  const unpack = spawn("tar", ["-C", to, "--numeric-owner", "--no-overwrite-dir", ...XATTRS, "-xpf", "-"], {
    stdio: ["pipe", "ignore", "pipe"],
  });
  pack.stdout.pipe(unpack.stdin);
  unpack.stdin.on("error", () => {});
  let packErr = "";
  let unpackErr = "";
  pack.stderr.on("data", (d: Buffer) => {
    if (packErr.length < 4000) packErr += d.toString("utf8");
  });
  unpack.stderr.on("data", (d: Buffer) => {
    if (unpackErr.length < 4000) unpackErr += d.toString("utf8");
  });
  const done = (p: ReturnType<typeof spawn>) =>
    new Promise<number | null>((resolve, reject) => {
      p.on("error", reject);
      p.on("close", (code) => resolve(code));
    });
  const [packCode, unpackCode] = await Promise.all([done(pack), done(unpack)]);
  // 1 from the packing tar: a file changed while it was read (the sandbox runs on) — the copy
  // has what was there at that moment, as a copy of a running machine's disk would.
  if (packCode !== 0 && packCode !== 1)
    throw new Error(`copying the sandbox's files failed: ${packErr.trim()}`);
  if (unpackCode !== 0) throw new Error(`copying the sandbox's files failed: ${unpackErr.trim()}`);
  if (owner) {
    // The home and everything in it; find does not follow links (nor a link given to it).
    const r = await run("find", [
      join(to, HOME),
      "-exec",
      "chown",
      "-h",
      "--",
      `${owner.uid}:${owner.gid}`,
      "{}",
      "+",
    ]);
    if (r.code !== 0) throw new Error(`giving the copied files to the sandbox failed: ${r.stderr.trim()}`);
  }
}
